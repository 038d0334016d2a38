import type { BaseCheckpointSaver } from '@langchain/langgraph';
import { withSaverMethods } from '../checkpoint/saver-proxy.js';
import type { CheckpointedGraph } from '../thread/checkpointed-graph.js';
import { planResume } from '../thread/resume-plan.js';
import type { RunSandbox, SandboxBackend, SnapshotReplica } from '../sandbox/backend.js';
import {
  checkpointStores,
  sandboxBackendNamed,
  type CheckpointerSettings,
} from '../runtime/agents-runtime.js';
import { AgentsError, AgentsErrorCode } from '../errors.js';
import type { ThreadLease } from '../checkpoint/backend.js';
import { PATH_PROJECT_ID_PREFIX, projectIdOf } from './project-id.js';
import type { WorkspaceStore } from '../workspace/workspace-types.js';
import { resolveSharedRemote } from './thread-config.js';

export { sharedThreadScope } from './thread-scope.js';

/**
 * The project id to namespace a shared snapshot store's refs with: one the same on every machine
 * (`.agents/project-id`, `git-<root commit>`). A path hash names the project on one machine
 * only, so such a project keeps the store's namespace without a project (as before).
 */
async function portableProjectId(projectDir: string): Promise<string | undefined> {
  const id = await projectIdOf(projectDir);
  return id.startsWith(PATH_PROJECT_ID_PREFIX) ? undefined : id;
}

// Moved beside the thread's recorded config facts (which resolve it too); still exported here.
export { resolveSharedRemote };

/** What lets a thread move between workers: its lease and its shared snapshot store. */
export interface SharedThread {
  /** Held while open when the checkpointer is Postgres (it replaces the local run lock). */
  readonly lease: ThreadLease | undefined;
  /** Set when the actor names a shared snapshot store (`snapshots.remote`). */
  readonly replica: SnapshotReplica | undefined;
  /**
   * The saver to compile the graph with: with a replica, every checkpoint write waits until the
   * snapshots made so far are in the shared store (see {@link withSnapshotBarrier}).
   */
  saver(saver: BaseCheckpointSaver): BaseCheckpointSaver;
  /** Pushes what is still queued, then releases the lease. Idempotent. */
  close(): Promise<void>;
}

/** Options of {@link openSharedThread}. */
export interface OpenSharedThreadOptions {
  /**
   * The project folder: its id (`projectIdOf`) is part of the lease, so two projects sharing a
   * database never hold each other's threads.
   */
  projectDir?: string;
  actor: string;
  threadId: string;
  checkpointer: CheckpointerSettings | undefined;
  /** The runtime's sandbox backend: its `share` keeps the snapshots in `remote`. */
  sandboxBackend: SandboxBackend;
  /** `snapshots.remote`, resolved (a relative path against the project folder). */
  remote: string | undefined;
  /** Take the Postgres lease (false for read-only commands). Default true. */
  lease?: boolean;
  signal?: AbortSignal;
}

/**
 * Takes what a thread needs to move between workers: the lease (when the checkpointer's
 * backend leases threads, i.e. Postgres, and `lease` is not false) and a {@link SnapshotReplica} for the shared snapshot
 * store (when `remote` is given). Returns `undefined` when neither applies (the local run lock
 * is then the thread's only guard). Throws `RUN_ACTIVE` when another worker holds the thread.
 */
export async function openSharedThread(
  options: OpenSharedThreadOptions,
): Promise<SharedThread | undefined> {
  const { actor, threadId } = options;
  // Only a store that several workers share leases threads (its backend has `lease`).
  const store =
    options.checkpointer === undefined
      ? undefined
      : (await checkpointStores()).resolve(options.checkpointer);
  const wantsLease = options.lease !== false && store?.backend.lease !== undefined;
  if (!wantsLease && options.remote === undefined) return undefined;
  const lease =
    wantsLease && store !== undefined
      ? await store.backend.lease?.(store.settings, {
          ...(options.projectDir === undefined
            ? {}
            : { project: await projectIdOf(options.projectDir) }),
          actor,
          threadId,
          ...(options.signal === undefined ? {} : { signal: options.signal }),
        })
      : undefined;
  const project =
    options.remote === undefined || options.projectDir === undefined
      ? undefined
      : await portableProjectId(options.projectDir);
  const replica =
    options.remote === undefined
      ? undefined
      : await sharingOf(options.sandboxBackend, options.remote).replica({
          remote: options.remote,
          actor,
          threadId,
          ...(project === undefined ? {} : { project }),
        });
  let closing: Promise<void> | undefined;
  return {
    lease,
    replica,
    saver: (saver) =>
      replica === undefined ? saver : withSnapshotBarrier(saver, () => replica.flush()),
    close: () =>
      (closing ??= (async () => {
        try {
          await replica?.flush();
        } finally {
          await lease?.release();
        }
      })()),
  };
}

/** The backend's snapshot sharing, or `SANDBOX_FAILED` when it has none (`memory`). */
function sharingOf(backend: SandboxBackend, remote: string): NonNullable<SandboxBackend['share']> {
  if (backend.share !== undefined) return backend.share;
  throw new AgentsError(
    AgentsErrorCode.SandboxFailed,
    `The ${backend.name} sandbox backend cannot keep snapshots in a shared store (snapshots.remote ${remote}); use a backend that shares them (git), or drop snapshots.remote.`,
    { details: { backend: backend.name } },
  );
}

/**
 * The saver with a barrier in front of its writes: `put` and `putWrites` wait for `barrier()`
 * (the shared store's flush) first. LangGraph writes a checkpoint (and a task's pending writes,
 * which a resume replays) only after the node that took the snapshot returned, so waiting here
 * means no checkpoint ever names a snapshot the shared store lacks; the tool call itself never
 * waits for the push. A failed push fails the write, and so the run, with the store's error.
 * Reads and everything else go straight to the saver (a Proxy keeps its class, so
 * `instanceof` and its private fields still work).
 */
export function withSnapshotBarrier(
  saver: BaseCheckpointSaver,
  barrier: () => Promise<void>,
): BaseCheckpointSaver {
  return withSaverMethods(saver, {
    put: async (...args: Parameters<BaseCheckpointSaver['put']>) => {
      await barrier();
      return saver.put(...args);
    },
    putWrites: async (...args: Parameters<BaseCheckpointSaver['putWrites']>) => {
      await barrier();
      return saver.putWrites(...args);
    },
  });
}

/** What {@link syncSandboxToThread} did. */
export interface SandboxSync {
  /** The snapshot the sandbox was at before. */
  from: string;
  /** The snapshot of the thread's latest checkpoint, now in the sandbox. */
  to: string;
  /**
   * Safety snapshot of the tree as it was (pushed like any snapshot); it differs from `from`
   * when the tree held changes no checkpoint recorded (a write of a run that died here).
   */
  safety: string;
}

/**
 * Brings a thread's sandbox to the files of the thread's latest checkpoint, whichever worker
 * wrote it: when the checkpoint names another snapshot than the sandbox's head (the thread ran
 * or was rolled back on another worker, or a run here died after a snapshot and before its
 * checkpoint), the sandbox is restored to it (`sandbox.restore`, which takes a safety snapshot
 * first, so nothing is lost). Returns `undefined` when the sandbox already matches or the thread
 * has no checkpoint yet. The snapshot must be in the sandbox's store (fetched by the replica).
 */
export async function syncSandboxToThread(input: {
  graph: CheckpointedGraph;
  threadId: string;
  sandbox: RunSandbox;
  signal?: AbortSignal;
}): Promise<SandboxSync | undefined> {
  const { graph, threadId, sandbox, signal } = input;
  const state = await graph.getState({ configurable: { thread_id: threadId } });
  if (state.createdAt === undefined) return undefined;
  // The head the thread goes on from: the checkpoint's, advanced by calls of an unfinished
  // step that completed (their results are saved, so they never run again: keep their files).
  const target = planResume(state).head ?? sandbox.base;
  const from = sandbox.head;
  if (target === from) return undefined;
  const restored = await sandbox.restore(target, signal === undefined ? {} : { signal });
  return { from, to: target, safety: restored.safety.sha };
}

/**
 * The actors of a workspace whose shared snapshot store holds `threadId` (one `git ls-remote`
 * per actor that names a store): how a worker that never ran a thread finds whose it is.
 * Actor files that do not parse are skipped (`agents actor list` reports them).
 */
export async function findSharedThreadActors(
  store: WorkspaceStore,
  threadId: string,
  signal?: AbortSignal,
): Promise<string[]> {
  const { records } = await store.list('actor');
  const found: string[] = [];
  let project: Promise<string | undefined> | undefined;
  for (const { name, value } of records) {
    const remote = resolveSharedRemote(value.snapshots?.remote, (path) => store.resolvePath(path));
    if (remote === undefined) continue;
    // A backend that cannot share (or an unknown one) has no shared store to look in.
    const sharing = backendOrUndefined(value.sandbox.backend)?.share;
    if (sharing === undefined) continue;
    project ??= portableProjectId(store.projectDir);
    const projectId = await project;
    const holds = await sharing.holds({
      remote,
      actor: name,
      threadId,
      ...(projectId === undefined ? {} : { project: projectId }),
      cwd: store.root,
      ...(signal === undefined ? {} : { signal }),
    });
    if (holds) found.push(name);
  }
  return found;
}

function backendOrUndefined(name: string): SandboxBackend | undefined {
  try {
    return sandboxBackendNamed(name, 'shared thread');
  } catch {
    return undefined;
  }
}
