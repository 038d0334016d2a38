import { createHash } from 'node:crypto';
import { realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';

/**
 * Layout of the per-user state folder (see {@link agentsStateDir}):
 *
 * ```
 * <state>/projects/<name>-<hash>/sandboxes/agents-sandbox-XXXX/   a run sandbox (run/ + tree)
 * <state>/workspaces/<name>-<hash>/threads/<actor>/<thread>/      a thread's folder:
 *     thread.json                                                 which actor ran it
 *     sandbox/                                                    its sandbox (run/ + tree)
 * ```
 */
export const PROJECTS_FOLDER = 'projects';
export const WORKSPACES_FOLDER = 'workspaces';
/** Folder of a workspace's state folder that holds one folder per (actor, thread). */
export const THREADS_FOLDER = 'threads';
/** Record file of a thread's folder: which actor ran the thread, from which source. */
export const THREAD_RECORD_FILE = 'thread.json';
/** Folder of a thread's folder that holds its sandbox (what `openSandbox({ dir })` opens). */
export const THREAD_SANDBOX_FOLDER = 'sandbox';

/** Environment variable naming the folder that holds sandboxes (tests set it to a temp folder). */
export const STATE_DIR_ENV = 'AGENTS_STATE_DIR';

/**
 * The per-user folder that holds sandboxes, outside every project: `$AGENTS_STATE_DIR`, else
 * `$XDG_STATE_HOME/agents`, else `~/.local/state/agents`. Sandboxes live here, not in the user's
 * working tree, so nothing a tool does in one can land in the user's files by a relative path,
 * and the user's `git status` never sees them. Relative values are ignored, as the XDG spec says.
 */
export function agentsStateDir(env: NodeJS.ProcessEnv = process.env): string {
  const explicit = env[STATE_DIR_ENV];
  if (explicit !== undefined && explicit !== '') return resolve(explicit);
  const xdg = env['XDG_STATE_HOME'];
  if (xdg !== undefined && isAbsolute(xdg)) return join(xdg, 'agents');
  return join(homedir(), '.local', 'state', 'agents');
}

/**
 * The state folder of one project: `<state>/projects/<name>-<hash>`, where `name` is the
 * folder's base name (for people browsing the folder) and `hash` the first 16 hex digits of the
 * sha256 of its realpath (so two projects with the same name never share one). Run sandboxes
 * made from the project go under it. Nothing is made.
 */
export function projectStateDir(projectDir: string, options: { stateDir?: string } = {}): string {
  return keyedDir(PROJECTS_FOLDER, projectDir, undefined, options.stateDir);
}

/**
 * The state folder of one workspace (`.agents/`): `<state>/workspaces/<project name>-<hash>`,
 * keyed by the workspace's realpath, so two workspaces of one project keep their threads apart.
 * Thread sandboxes live under it. Nothing is made.
 */
export function workspaceStateDir(
  workspaceRoot: string,
  options: { stateDir?: string } = {},
): string {
  return keyedDir(WORKSPACES_FOLDER, workspaceRoot, dirname, options.stateDir);
}

function keyedDir(
  kind: string,
  path: string,
  nameOf: ((real: string) => string) | undefined,
  stateDir: string | undefined,
): string {
  let real: string;
  try {
    real = realpathSync(path);
  } catch {
    real = resolve(path);
  }
  const name =
    basename(nameOf === undefined ? real : nameOf(real))
      .replace(/[^A-Za-z0-9._-]/g, '_')
      .replace(/^\.+/, '_')
      .slice(0, 40) || 'root';
  const hash = createHash('sha256').update(real).digest('hex').slice(0, 16);
  return join(stateDir ?? agentsStateDir(), kind, `${name}-${hash}`);
}
