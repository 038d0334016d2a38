import { mkdir } from 'node:fs/promises';
import { isAbsolute, join, relative } from 'node:path';
import type { NamedServerConfig } from '../config/server-schema.js';
import { probeConfinement, type ProbeConfinement } from '../runtime/confinement-scope.js';
import type { ConfineMode } from '../confinement/backend.js';
import type { WorkspaceStore } from '../workspace/workspace-types.js';

/**
 * The confinement mode for servers started outside a run (`server add|test`, `skill add|show`,
 * `tool show|trust`, `actor add`): `required` when any actor of the workspace requires it (so a
 * workspace that refuses unconfined servers never starts one to inspect it), else `auto`. Never
 * `off`: an inspection has no reason to give a server more than a run would.
 */
export async function inspectionConfineMode(store: WorkspaceStore): Promise<ConfineMode> {
  try {
    const { records } = await store.list('actor');
    return records.some((record) => record.value.sandbox?.confine === 'required')
      ? 'required'
      : 'auto';
  } catch {
    return 'auto';
  }
}

/**
 * An empty throwaway sandbox for starting `servers` to inspect them, confined the way a run
 * confines them (see `probeConfinement`): their working folder is the empty folder, mounted at
 * the project's path too, so nothing a server does at start-up reaches the user's project. A
 * server whose configured `cwd` lies in the project gets that folder made (empty) in it, as a run
 * finds it in the sandbox. Dispose it to remove the folder.
 *
 * @throws AgentsError `CONFINEMENT_UNAVAILABLE` when the mode is `required` and bubblewrap
 *   cannot run here.
 */
export async function inspectionSandbox(input: {
  store: WorkspaceStore;
  servers: readonly NamedServerConfig[];
  mode?: ConfineMode;
  report?: (message: string) => void;
}): Promise<ProbeConfinement> {
  const { store } = input;
  const probe = await probeConfinement({
    mode: input.mode ?? (await inspectionConfineMode(store)),
    projectDir: store.projectDir,
    workspaceRoot: store.root,
    ...(input.report ? { report: input.report } : {}),
  });
  try {
    for (const server of input.servers) {
      if (server.transport !== 'stdio' || server.cwd === undefined) continue;
      const inProject = relative(store.projectDir, server.cwd);
      if (inProject === '' || inProject.startsWith('..') || isAbsolute(inProject)) continue;
      await mkdir(join(probe.dir, inProject), { recursive: true });
    }
    return probe;
  } catch (error) {
    await probe.dispose();
    throw error;
  }
}
