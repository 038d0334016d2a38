import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { agentsStateDir } from '../sandbox/state-dir.js';
import type { ConfineMode, ConfinementScope } from '../confinement/backend.js';
import {
  reportUnconfinedOnce,
  resolveConfinement,
  type Confinement,
} from '../confinement/confinement.js';
import { hostSocketFolders } from '../confinement/sockets.js';

/**
 * What a confined server may see, for one sandbox: everything of the system read-only, except
 * - the per-user state folder (every sandbox's private `run/` store, other threads' sandboxes,
 *   OAuth tokens and client registrations): hidden, the sandbox itself mounted back;
 * - the workspace (`.agents/`: audit, checkpoints, pins): hidden;
 * - the home folder: hidden, except the npm cache (read-only, so `npx` servers start) and what
 *   the server itself needs (its install folder, configured working folder, `sandbox:` paths);
 * - the sandbox's own folder (its `run/` beside the tree): hidden;
 * - the folders holding host sockets (`/run`, `$XDG_RUNTIME_DIR`, ...): private and empty.
 * Other workspaces are hidden where they live under the home folder or /tmp (private to each
 * server); one elsewhere is read-only, not hidden.
 */
export function confinementScope(input: {
  sandboxRoot: string;
  /**
   * The folder holding the sandbox's store and records beside its tree (`RunSandbox.container`).
   * Default: the tree's parent folder, where the git backend keeps them.
   */
  sandboxContainer?: string;
  projectDir?: string;
  workspaceRoot?: string;
  stateDir?: string;
  env?: NodeJS.ProcessEnv;
}): ConfinementScope {
  const env = input.env ?? process.env;
  const stateDir = input.stateDir ?? agentsStateDir(env);
  const home = env['HOME'] !== undefined && env['HOME'] !== '' ? env['HOME'] : homedir();
  const hidden = [
    stateDir,
    home,
    ...(input.workspaceRoot === undefined ? [] : [input.workspaceRoot]),
  ];
  // The sandbox's container holds its private store beside the tree (not when the "sandbox" is
  // the project itself, sandbox off); the tree is mounted back over it.
  if (input.projectDir === undefined || input.projectDir !== input.sandboxRoot)
    hidden.push(input.sandboxContainer ?? dirname(input.sandboxRoot));
  return {
    sandboxRoot: input.sandboxRoot,
    ...(input.projectDir === undefined ? {} : { projectDir: input.projectDir }),
    hidden,
    sockets: hostSocketFolders(env),
    stateDir,
    readable: [env['npm_config_cache'] || join(home, '.npm')],
    guarded: [stateDir, ...(input.workspaceRoot === undefined ? [] : [input.workspaceRoot])],
  };
}

/** A throwaway confinement for starting a server outside a run (inspection commands, Studio). */
export interface ProbeConfinement extends AsyncDisposable {
  /** An empty folder, removed on dispose: the server's working folder and only writable place. */
  readonly dir: string;
  readonly confinement: Confinement;
  dispose(): Promise<void>;
}

/**
 * Makes an empty throwaway sandbox folder and the confinement of a server started in it: the
 * same mounts as a run's (the project mounted as that empty folder, the workspace, state folder
 * and home hidden), so a server that cannot run confined fails here, not at its first run, and
 * nothing it writes at start-up reaches the user's project.
 *
 * @throws AgentsError `CONFINEMENT_UNAVAILABLE` in `required` mode when no confinement backend
 *   can run.
 */
export async function probeConfinement(input: {
  mode: ConfineMode;
  projectDir?: string;
  workspaceRoot?: string;
  report?: (message: string) => void;
}): Promise<ProbeConfinement> {
  const dir = await realpath(await mkdtemp(join(tmpdir(), 'agents-probe-')));
  const dispose = () => rm(dir, { recursive: true, force: true });
  try {
    const confinement = resolveConfinement(
      { mode: input.mode },
      confinementScope({
        sandboxRoot: dir,
        ...(input.projectDir === undefined ? {} : { projectDir: input.projectDir }),
        ...(input.workspaceRoot === undefined ? {} : { workspaceRoot: input.workspaceRoot }),
      }),
    );
    if (input.report) reportUnconfinedOnce(confinement, input.report);
    return { dir, confinement, dispose, [Symbol.asyncDispose]: dispose };
  } catch (error) {
    await dispose();
    throw error;
  }
}
