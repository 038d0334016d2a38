import { access, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Actor as ActorConfig } from '../config/actor-schema.js';
import { AgentsError, AgentsErrorCode } from '../errors.js';
import { removeEmptyDirs } from '../sandbox/empty-dirs.js';
import type { RunSandbox, SandboxBackend } from '../sandbox/backend.js';
import { agentsStateDir } from '../sandbox/state-dir.js';
import type { WorkspaceStore } from '../workspace/workspace-types.js';
import type { SandboxBaseOptions } from './sandbox-base-options.js';
import type { SharedThread } from './shared-thread.js';
import { describeActorFile } from './thread-config.js';
import {
  findThreadSandboxes,
  openThreadSandbox,
  recordThreadConfig,
  threadSandboxDir,
} from './thread-sandbox.js';

/** What {@link openActorSandbox} needs. */
export interface ActorSandboxOptions {
  /** Makes and opens the sandbox (the runtime's, from `sandbox.backend`). */
  backend: SandboxBackend;
  store: WorkspaceStore;
  actor: string;
  settings: ActorConfig['sandbox'];
  /** The thread the sandbox belongs to (a thread sandbox, kept between runs). */
  threadId?: string | undefined;
  /** Base folder of a temporary sandbox (default: the project's folder of the state folder). */
  baseDir?: string | undefined;
  /** What a new sandbox starts from, and where warnings about it go (`sandboxBaseOptions`). */
  base: SandboxBaseOptions;
  /**
   * The thread's lease and shared snapshot store (see `openSharedThread`): the lease replaces
   * the local run lock, the store rebuilds a missing sandbox and receives every snapshot.
   */
  shared?: SharedThread | undefined;
  signal?: AbortSignal | undefined;
}

/** The actor's sandbox and how to dispose of it. */
export interface ActorSandbox {
  sandbox: RunSandbox;
  /** A thread's sandbox (kept between runs), not a temporary one. */
  threadBound: boolean;
  /** The thread's sandbox existed already (it holds the thread's history). */
  reopened: boolean;
  /**
   * Closes it (releasing its run lock); with `remove` also deletes it, the thread's record and
   * the folders made for it under the state folder that are now empty.
   */
  dispose(remove: boolean): Promise<void>;
}

/**
 * Opens the actor's sandbox: the thread's own (made on the thread's first run, reopened later)
 * when `threadId` is given, else a temporary one. One thread, one actor: refuses a thread another
 * actor ran. When opening fails, everything it made is removed again (the thread's folder and
 * the empty folders above it), so a failed start leaves the state folder as it found it.
 */
export async function openActorSandbox(options: ActorSandboxOptions): Promise<ActorSandbox> {
  const { store, actor, settings, threadId, signal } = options;
  const source = store.resolvePath(settings.source);
  const stateDir = agentsStateDir();
  if (threadId === undefined) {
    const sandbox = await options.backend.create({
      source,
      ...options.base,
      ...snapshotSettings(settings),
      ...(options.baseDir ? { baseDir: options.baseDir } : {}),
      ...(signal ? { signal } : {}),
    });
    return {
      sandbox,
      threadBound: false,
      reopened: false,
      async dispose(remove) {
        await sandbox.close({ remove });
        // The container's parent is the project's sandboxes folder (made on first use).
        if (remove) await removeEmptyDirs(dirname(sandbox.container), stateDir);
      },
    };
  }

  await assertThreadOwner(store.root, actor, threadId);
  const dir = threadSandboxDir(store.root, actor, threadId);
  const existed = await access(dir).then(
    () => true,
    () => false,
  );
  const removeThread = async (): Promise<void> => {
    await rm(dir, { recursive: true, force: true });
    await removeEmptyDirs(dirname(dir), stateDir);
  };
  let sandbox: Awaited<ReturnType<typeof openThreadSandbox>>;
  try {
    sandbox = await openThreadSandbox({
      backend: options.backend,
      workspaceRoot: store.root,
      actor,
      threadId,
      source,
      ...options.base,
      projectDir: store.projectDir,
      ...snapshotSettings(settings),
      ...(signal ? { signal } : {}),
      lock: options.shared?.lease === undefined,
      ...(options.shared?.replica ? { replica: options.shared.replica } : {}),
    });
  } catch (error) {
    // A bad revision, a repo with no commits: nothing of the new thread may stay behind.
    if (!existed) await removeThread().catch(() => undefined);
    throw error;
  }
  // What the thread's read-only commands need from this actor's config, for them to skip reading
  // it while the file is unchanged (issue 29). A cache: failing to write it fails nothing.
  await recordThreadConfig(dir, (record) =>
    record.projectDir === undefined
      ? Promise.resolve(undefined)
      : describeActorFile(store.dir('actor'), actor, record.projectDir),
  ).catch(() => undefined);
  const opened: ActorSandbox = {
    sandbox,
    threadBound: true,
    reopened: sandbox.reopened,
    async dispose(remove) {
      if (!remove) return sandbox.close({ remove: false });
      await sandbox.close({ remove: true });
      await removeThread();
    },
  };
  // Two actors that started the same new thread together both passed the check above: the
  // later record (then the larger name) backs out.
  if (!sandbox.reopened) {
    try {
      await assertThreadOwner(store.root, actor, threadId);
    } catch (error) {
      await opened.dispose(true).catch(() => undefined);
      throw error;
    }
  }
  return opened;
}

/** The snapshot settings of an actor's `sandbox:` block, as sandbox options. */
function snapshotSettings(settings: {
  maxFileBytes?: number | undefined;
  exclude?: string[] | undefined;
}): { maxFileBytes?: number; exclude?: readonly string[] } {
  return {
    ...(settings.maxFileBytes === undefined ? {} : { maxFileBytes: settings.maxFileBytes }),
    ...(settings.exclude === undefined ? {} : { exclude: settings.exclude }),
  };
}

/**
 * One thread, one actor: refuses (`INVALID_ARGUMENTS`) when another actor already ran the
 * thread. A thread's checkpoints are the history of one graph (its nodes, tools and
 * instructions) and its sandbox holds that graph's files; a second actor would interleave its
 * history into the first's and leave the thread's checkpoints and rollbacks ambiguous.
 */
async function assertThreadOwner(
  workspaceRoot: string,
  actor: string,
  threadId: string,
): Promise<void> {
  const records = (await findThreadSandboxes(workspaceRoot, threadId))
    .map((location) => location.record)
    .sort((a, b) => a.createdAt - b.createdAt || a.actor.localeCompare(b.actor));
  const owner = records[0];
  if (owner === undefined || owner.actor === actor) return;
  throw new AgentsError(
    AgentsErrorCode.InvalidArguments,
    `Thread "${threadId}" belongs to actor "${owner.actor}" (one thread, one actor: its checkpoints and sandbox are that actor's history); run actor "${actor}" on another thread id, or remove the thread first (agents sandbox remove --thread ${threadId} --actor ${owner.actor}).`,
    { details: { threadId, actor, owner: owner.actor } },
  );
}
