/** The git sandbox backend: its capabilities, and its code loaded on first use (its settings: `../settings.ts`). */
import type { SandboxBackend } from '../backend.js';

// The implementation loads when a sandbox is first made: reading a config (which lists the
// backends) loads none of it.
const local = () => import('./local-sandbox.js');
const opening = () => import('./open-sandbox.js');
const sharing = () => import('./shared-store.js');

/**
 * The git backend: a tree of its own outside the user's, a private git snapshot store beside it,
 * kept on disk (threads resume in a later process; `snapshots.remote` shares them).
 */
export const gitSandboxBackend: SandboxBackend = {
  name: 'git',
  description:
    'a copy of your files beside a private git snapshot store, kept on disk so threads resume later and `snapshots.remote` can share them',
  persistent: true,
  create: async (options) => (await local()).createSandbox(options),
  open: async (options) => (await opening()).openSandbox(options),
  async list({ baseDir }) {
    const { listSandboxes } = await import('../sandbox-inventory.js');
    const entries = await listSandboxes({ baseDirs: [baseDir] });
    return entries
      .filter((entry) => entry.status === 'ok' && entry.sandboxId !== undefined)
      .map((entry) => ({ id: entry.sandboxId!, dir: entry.dir, source: entry.source ?? '' }));
  },
  remove: async (dir) => (await opening()).removeSandbox(dir),
  share: {
    replica: async (request) => new (await sharing()).ThreadReplica(request),
    holds: async (request) => (await sharing()).remoteHoldsThread(request),
  },
};
