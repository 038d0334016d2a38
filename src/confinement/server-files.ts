import {
  accessSync,
  closeSync,
  constants,
  existsSync,
  openSync,
  readSync,
  realpathSync,
  statSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { basename, delimiter, dirname, isAbsolute, join, resolve, sep } from 'node:path';
import { AgentsError, AgentsErrorCode } from '../errors.js';
import type { ConfinementScope, LaunchRequest } from './backend.js';

/**
 * What every backend needs to know about a server's own files and the paths it names: where it
 * is installed (to keep that readable when a hidden folder covers it), and which of its paths a
 * confinement must refuse (inside the state folder, a guarded folder, the project). Neutral:
 * bubblewrap turns the result into mounts, Landlock into rules.
 */

/** An executable by path, or by name on PATH; undefined when missing or not executable. */
export function findExecutable(name: string): string | undefined {
  const candidates = name.includes('/')
    ? [resolve(name)]
    : (process.env['PATH'] ?? '')
        .split(delimiter)
        .filter((dir) => dir !== '')
        .map((dir) => join(dir, name));
  for (const candidate of candidates) {
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/**
 * Refuses what a server names for itself that would put back a guarded folder (the state
 * folder, the workspace) or reach into the project: its working folder and `readOnly`
 * exceptions inside a guarded folder, a command line naming a path in the state folder, a
 * `writable` exception overlapping the project, the sandbox or a guarded folder.
 *
 * @throws AgentsError `CONFIG_INVALID` naming the path and the fix.
 */
export function refuseUnsafeServerPaths(
  request: LaunchRequest,
  command: string,
  args: readonly string[],
): void {
  const { scope } = request;
  const sandbox = realOrResolved(scope.sandboxRoot);
  const cwd = request.cwd === undefined ? sandbox : realOrResolved(request.cwd);
  const project = scope.projectDir === undefined ? undefined : realOrResolved(scope.projectDir);
  const guarded = existingReal(scope.guarded ?? []);
  for (const path of [
    ...(cwd === sandbox ? [] : [cwd]),
    ...existingReal(expandAll(request.exceptions?.readOnly)),
  ]) {
    const clash = guarded.find((folder) => path === folder || isWithin(path, folder));
    if (clash !== undefined) {
      throw new AgentsError(
        AgentsErrorCode.ConfigInvalid,
        `The server's working folder or sandbox.readOnly exception ${path} lies in ${clash} (the workspace or the state folder), which confined servers never see. Point it at a folder of the server's own.`,
        { details: { path, overlaps: clash } },
      );
    }
  }
  refuseStateFolderPaths(scope, sandbox, command, args);
  for (const path of existingReal(expandAll(request.exceptions?.writable))) {
    // An exception is for a server's own data, never a way back into the user's project, the
    // sandbox's surroundings or the state folder.
    const clash = [project, sandbox, ...guarded].find(
      (folder) =>
        folder !== undefined &&
        (path === folder || isWithin(path, folder) || isWithin(folder, path)),
    );
    if (clash !== undefined) {
      throw new AgentsError(
        AgentsErrorCode.ConfigInvalid,
        `The server's sandbox.writable exception ${path} overlaps ${clash} (the project, the sandbox, the workspace or the state folder); an exception may name only a server's own data folder elsewhere. Remove it from the server's YAML.`,
        { details: { path, overlaps: clash } },
      );
    }
  }
}

/**
 * A server's executable or absolute argument inside the state folder (OAuth tokens, other
 * sandboxes' stores) would be put back readable as the server's "own files": refused, unless it
 * lies in this server's own sandbox.
 *
 * @throws AgentsError `CONFIG_INVALID` naming the path and the fix.
 */
function refuseStateFolderPaths(
  scope: ConfinementScope,
  sandbox: string,
  command: string,
  args: readonly string[],
): void {
  if (scope.stateDir === undefined) return;
  const state = realOrResolved(scope.stateDir);
  for (const path of [command, ...args].filter((arg) => isAbsolute(arg))) {
    const real = realOrResolved(path);
    if (real === sandbox || isWithin(real, sandbox)) continue;
    if (real !== state && !isWithin(real, state)) continue;
    throw new AgentsError(
      AgentsErrorCode.ConfigInvalid,
      `The server's command line names ${path}, inside the agents state folder ${state} (OAuth tokens, sandboxes), which confined servers never see. Install the server elsewhere and point its command or arguments there.`,
      { details: { path, stateDir: state } },
    );
  }
}
/** Existing paths, resolved to real paths, without repeats. */
export function existingReal(paths: readonly string[]): string[] {
  return [...new Set(paths.filter((path) => existsSync(path)).map(realOrResolved))];
}

/** `~/x` is the home folder's `x`; other paths as given (absolute in a valid config). */
export function expandAll(paths: readonly string[] | undefined): string[] {
  return (paths ?? []).map((path) =>
    path === '~' ? homedir() : path.startsWith('~/') ? join(homedir(), path.slice(2)) : path,
  );
}

export const TMPFS_ROOTS = ['/tmp', '/var/tmp'];

/**
 * The install folders of a server: where its executable, the interpreter its script names and
 * the absolute paths among its arguments live. A link is kept where it is named (its folder) and
 * where it really lives. A real file's folder widens to: inside `node_modules`, the folder holding
 * the outermost one; else the nearest package root (a `package.json`, `pyproject.toml` or
 * `Cargo.toml` above it, below the home folder or a tmp root); else, under a private tmp root
 * and outside the home folder, the whole top folder (a checkout in /tmp/x resolves imports from
 * /tmp/x/node_modules); for a
 * program in `X/bin/`, `X` (an npm or Python prefix: `bin/` holds links into `lib/`).
 */
export function serverFolders(command: string, args: readonly string[], cwd: string): string[] {
  const executable = command.includes('/') ? resolve(cwd, command) : findExecutable(command);
  const programs = [executable, interpreterOf(executable), process.execPath];
  const folders: string[] = [];
  const add = (path: string | undefined, program: boolean) => {
    if (path === undefined || !existsSync(path)) return;
    const named = resolve(path);
    folders.push(isDirectory(named) ? named : dirname(named));
    const real = realOrResolved(path);
    folders.push(...installFolders(isDirectory(real) ? real : dirname(real), program));
  };
  for (const program of programs) add(program, true);
  for (const arg of args) if (isAbsolute(arg)) add(arg, false);
  return folders.map(realOrResolved);
}

const PACKAGE_MARKERS = ['package.json', 'pyproject.toml', 'Cargo.toml'];

// What a prefix (`X` of `X/bin/program`) holds that its programs load: never the rest of `X`
// (`~/.cargo/credentials.toml`, `~/.local/share`, ...).
const PREFIX_PARTS = ['bin', 'lib', 'lib64', 'pyvenv.cfg'];

function installFolders(folder: string, program: boolean): string[] {
  const parts = folder.split(sep);
  const modules = parts.indexOf('node_modules');
  if (modules > 1) return [parts.slice(0, modules).join(sep)];
  const tmp = TMPFS_ROOTS.find((root) => isWithin(folder, root));
  const home = homedir();
  for (let at = folder; at !== dirname(at) && at !== home && at !== tmp; at = dirname(at)) {
    if (PACKAGE_MARKERS.some((marker) => existsSync(join(at, marker)))) return [at];
  }
  // Not inside the home folder: its tmpfs lies deeper than a tmp root's top folder and would
  // cover that restore (a home under /tmp), and a top folder at or in the home would put the
  // whole home back.
  if (tmp !== undefined && folder !== home && !isWithin(folder, home))
    return [join(tmp, folder.slice(tmp.length + 1).split(sep)[0]!)];
  if (program && basename(folder) === 'bin' && dirname(folder) !== sep) {
    const prefix = dirname(folder);
    return PREFIX_PARTS.map((part) => join(prefix, part)).filter((path) => existsSync(path));
  }
  return [folder];
}

/** The interpreter a script's `#!` line names (`/usr/bin/env X` looks X up on PATH). */
function interpreterOf(executable: string | undefined): string | undefined {
  if (executable === undefined) return undefined;
  let head: string;
  try {
    const fd = openSync(executable, 'r');
    try {
      const buffer = Buffer.alloc(256);
      head = buffer.subarray(0, readSync(fd, buffer, 0, 256, 0)).toString('utf8');
    } finally {
      closeSync(fd);
    }
  } catch {
    return undefined;
  }
  if (!head.startsWith('#!')) return undefined;
  const [interpreter, ...rest] = head.slice(2).split('\n')[0]!.trim().split(/\s+/);
  if (interpreter === undefined || interpreter === '') return undefined;
  if (basename(interpreter) === 'env') {
    const name = rest.find((part) => !part.startsWith('-'));
    return name === undefined ? undefined : findExecutable(name);
  }
  return interpreter;
}

/**
 * True when the server's executable or an absolute path among its arguments lies in the
 * project: mounting the sandbox over the project would hide the server's own files, so the
 * project stays read-only instead.
 */
export function serverFilesUnder(
  project: string,
  command: string,
  args: readonly string[],
  cwd: string,
): boolean {
  const executable = command.includes('/') ? resolve(cwd, command) : findExecutable(command);
  const paths = [executable, ...args.filter((arg) => isAbsolute(arg))];
  return paths.some((path) => {
    if (path === undefined) return false;
    const real = realOrResolved(path);
    return real === project || isWithin(real, project);
  });
}

export function isRegularFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

export function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

export function realOrResolved(path: string): string {
  try {
    return realpathSync.native(path);
  } catch {
    return resolve(path);
  }
}

/** `path` lies strictly inside `base` (whole components). */
export function isWithin(path: string, base: string): boolean {
  const prefix = base.endsWith(sep) ? base : base + sep;
  return path.startsWith(prefix);
}
