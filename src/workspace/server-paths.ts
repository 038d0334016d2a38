/** Resolving the parts of a server config that name files of the project. */
import { realpathSync, statSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import type { ServerConfig } from '../config/server-schema.js';

/** True for a `command`/`args` entry written as a path of the project: `./x` or `../x`. */
function isProjectRelative(entry: string): boolean {
  return entry.startsWith('./') || entry.startsWith('../');
}

/** True when `path` names an existing file (not a folder). */
function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/**
 * A file's real path (a folder stays as resolved): a `node_modules` linked from elsewhere (a git
 * worktree sharing one, pnpm) is then named where it lives, which is where Node resolves its
 * imports anyway and what a confined server is shown of it; the sandbox mounted over the
 * project would hide the link.
 */
function realFile(path: string): string {
  if (!isFile(path)) return path;
  try {
    return realpathSync.native(path);
  } catch {
    return path;
  }
}

/**
 * True for a bare relative entry (`node_modules/pkg/dist/index.js`, `server.py`) that names an
 * existing file of the project. Such a file is almost always the server's own script: the
 * sandbox leaves ignored files such as `node_modules/` out, so passing it as written would make
 * the server look for it in the sandbox and fail. Folders (`.`, `src`) are what a server should
 * work on, so they stay relative to the sandbox.
 */
function namesProjectFile(entry: string, projectDir: string): boolean {
  if (entry === '' || entry.startsWith('-') || isAbsolute(entry)) return false;
  return isFile(resolve(projectDir, entry));
}

/**
 * Resolves the parts of a stdio server config that name files of the project, so the YAML stays
 * portable and the server starts the same from any folder, the sandbox included:
 * - `command` and each `args` entry that starts with `./` or `../`, or that names an existing
 *   file of the project without them (`node_modules/pkg/dist/index.js`), are resolved against
 *   `projectDir` (the folder holding `.agents/`);
 * - a relative `cwd` is resolved against `projectDir`.
 *
 * Everything else is passed as written: bare names (`node`, `npx`) are looked up on `PATH`, and
 * other relative arguments (`.`, `src`) stay relative to the server's working folder, which is
 * the sandbox root unless `cwd` is set. HTTP configs are returned unchanged.
 */
export function resolveServerPaths<T extends ServerConfig>(config: T, projectDir: string): T {
  if (config.transport !== 'stdio') return config;
  const resolveEntry = (entry: string) =>
    isProjectRelative(entry) || namesProjectFile(entry, projectDir)
      ? realFile(resolve(projectDir, entry))
      : entry;
  return {
    ...config,
    command: resolveEntry(config.command),
    args: config.args.map(resolveEntry),
    ...(config.cwd === undefined ? {} : { cwd: resolve(projectDir, config.cwd) }),
  };
}

/** True for a relative entry that reads as a script of the project (`dist/index.js`, `s.py`). */
function looksLikeScript(entry: string): boolean {
  if (entry.startsWith('-') || entry.includes('=') || isAbsolute(entry)) return false;
  return /\.(m?js|cjs|m?ts|cts|py|sh|rb|php|pl|jar)$/.test(entry);
}

/**
 * The entries of a stdio server's command line that read as scripts of the project
 * (`dist/index.js`, `./server.py`) but name no file in `projectDir`: the likely reason a server
 * does not start, so its error can say which folder each was looked for in.
 */
export function missingProjectFiles(config: ServerConfig, projectDir: string): string[] {
  if (config.transport !== 'stdio') return [];
  return [config.command, ...config.args].filter(
    (entry) => looksLikeScript(entry) && !isFile(resolve(projectDir, entry)),
  );
}
