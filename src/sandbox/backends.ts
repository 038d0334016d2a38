import { AgentsError, AgentsErrorCode } from '../errors.js';
import type { SandboxBackend } from './backend.js';
import { createSandbox } from './git/local-sandbox.js';
import { memorySandboxBackend } from './memory/memory-sandbox.js';
import { openSandbox, removeSandbox } from './git/open-sandbox.js';
import { listSandboxes } from './sandbox-inventory.js';

/**
 * The git backend: a tree of its own outside the user's, a private git snapshot store beside it,
 * kept on disk (threads resume in a later process; `snapshots.remote` shares them).
 */
export const gitSandboxBackend: SandboxBackend = {
  name: 'git',
  persistent: true,
  create: createSandbox,
  open: openSandbox,
  async list({ baseDir }) {
    const entries = await listSandboxes({ baseDirs: [baseDir] });
    return entries
      .filter((entry) => entry.status === 'ok' && entry.sandboxId !== undefined)
      .map((entry) => ({ id: entry.sandboxId!, dir: entry.dir, source: entry.source ?? '' }));
  },
  remove: removeSandbox,
};

/**
 * Every sandbox backend by name. A new one (a container runtime, a remote VM) is one module
 * implementing {@link SandboxBackend} and one entry here.
 */
export const SANDBOX_BACKENDS = {
  git: gitSandboxBackend,
  memory: memorySandboxBackend,
} as const satisfies Record<string, SandboxBackend>;

/** A backend's name. */
export type SandboxBackendName = keyof typeof SANDBOX_BACKENDS;

/** The backend called `name`, or `CONFIG_INVALID` listing the known ones. */
export function sandboxBackend(name: string): SandboxBackend {
  const backend = (SANDBOX_BACKENDS as Record<string, SandboxBackend>)[name];
  if (backend === undefined) {
    throw new AgentsError(
      AgentsErrorCode.ConfigInvalid,
      `Unknown sandbox backend "${name}"; use one of: ${Object.keys(SANDBOX_BACKENDS).join(', ')}.`,
      { details: { problems: [] } },
    );
  }
  return backend;
}
