/** Resolving the parts of a server config that name files of the project. */
import { resolve } from 'node:path';
import type { ServerConfig } from '../config/server-schema.js';

/** True for a `command`/`args` entry that names a file of the project: `./x` or `../x`. */
function isProjectRelative(entry: string): boolean {
  return entry.startsWith('./') || entry.startsWith('../');
}

/**
 * Resolves the parts of a stdio server config that name files of the project, so the YAML stays
 * portable and the server starts the same from any folder, the sandbox included:
 * - `command` and each `args` entry that starts with `./` or `../` are resolved against
 *   `projectDir` (the folder holding `.agents/`), e.g. `./node_modules/pkg/dist/index.js`;
 * - a relative `cwd` is resolved against `projectDir`.
 *
 * Everything else is passed as written: bare names (`node`, `npx`) are looked up on `PATH`, and
 * other relative arguments (`.`, `src`) stay relative to the server's working folder, which is
 * the sandbox root unless `cwd` is set. HTTP configs are returned unchanged.
 */
export function resolveServerPaths<T extends ServerConfig>(config: T, projectDir: string): T {
  if (config.transport !== 'stdio') return config;
  const resolveEntry = (entry: string) =>
    isProjectRelative(entry) ? resolve(projectDir, entry) : entry;
  return {
    ...config,
    command: resolveEntry(config.command),
    args: config.args.map(resolveEntry),
    ...(config.cwd === undefined ? {} : { cwd: resolve(projectDir, config.cwd) }),
  };
}
