import { AgentsError, AgentsErrorCode } from '../../errors.js';
import type { GitStoreAccess, RunSandbox } from '../backend.js';
import { runGitBytes } from '../git.js';
import type { RawTreeChange } from '../raw-tree-diff.js';

/**
 * What delivering a sandbox's work needs from it: its snapshot store, its tree, the user's
 * folder it was made from, and the base and latest snapshots. Any {@link RunSandbox} has it.
 */
export type DeliverySandbox = Pick<
  RunSandbox,
  'id' | 'store' | 'root' | 'source' | 'base' | 'head' | 'kind' | 'sourceCommit'
>;

/** True when `sandbox` carries a snapshot store delivery can read. */
export function isDeliverySandbox(sandbox: object): sandbox is DeliverySandbox {
  const record = sandbox as Partial<Record<keyof DeliverySandbox, unknown>>;
  return (
    typeof record.store === 'object' &&
    record.store !== null &&
    typeof record.root === 'string' &&
    typeof record.source === 'string' &&
    typeof record.base === 'string'
  );
}

/**
 * The thread a sandbox belongs to, as delivery reads it: where its latest checkpoint is. A
 * worker's sandbox may be behind the thread (another worker went on with it); given this, the
 * delivery functions read the thread's latest checkpoint instead of the sandbox's own head. Made
 * by `openThreadDelivery` (or `deliveryThreadOf` for a graph you hold).
 */
export interface DeliveryThread {
  readonly threadId: string;
  /**
   * Brings the sandbox's snapshot store up to date (fetches the thread's snapshots from its
   * shared store, when it has one) and returns the snapshot of the thread's latest checkpoint;
   * `undefined` when the thread has no checkpoint yet (the sandbox's head is then all there is).
   */
  latestSnapshot(signal?: AbortSignal): Promise<string | undefined>;
  /** The actor that ran the thread (named in commit trailers). */
  readonly actor?: string | undefined;
  /**
   * The checkpoints of the thread's current history (rolled-back branches left out) whose
   * snapshot differs from the one before, oldest first (the first may be the sandbox's base):
   * what `commitSandbox` makes one commit each of.
   */
  steps?(signal?: AbortSignal): Promise<DeliveryStep[]>;
}

/** One checkpoint of a thread that changed files (see {@link DeliveryThread.steps}). */
export interface DeliveryStep {
  /** The snapshot the checkpoint recorded (the files after it). */
  snapshot: string;
  checkpointId: string;
  /** The user's prompt of the turn the checkpoint belongs to (the latest human message). */
  prompt?: string | undefined;
  /** Ids of the tools whose calls in this step changed files (`mcp:SERVER/TOOL`, ...). */
  tools: string[];
}

/** Options shared by the delivery functions. */
export interface DeliveryGitOptions {
  signal?: AbortSignal | undefined;
  timeoutMs?: number | undefined;
  /**
   * The sandbox's thread: the default `to` (and `'head'`) is then the thread's latest checkpoint,
   * whichever worker wrote it, not this sandbox's own head (see {@link DeliveryThread}).
   */
  thread?: DeliveryThread | undefined;
}

/**
 * What `to: 'head'` (and no `to`) means: the thread's latest checkpoint when `options.thread`
 * is given, else the sandbox's own head. Throws `CHECKPOINT_NOT_FOUND`, saying what to do, when
 * the checkpoint names a snapshot this store cannot get.
 */
export async function deliveryHead(
  sandbox: DeliverySandbox,
  options: DeliveryGitOptions,
): Promise<string> {
  const thread = options.thread;
  if (thread === undefined) return sandbox.head;
  const head = await thread.latestSnapshot(options.signal);
  if (head === undefined || head === sandbox.head) return sandbox.head;
  try {
    return await resolveSnapshot(sandbox, head, { ...options, thread: undefined });
  } catch (error) {
    if (!AgentsError.hasCode(error, AgentsErrorCode.CheckpointNotFound)) throw error;
    throw new AgentsError(
      AgentsErrorCode.CheckpointNotFound,
      `The latest checkpoint of thread "${thread.threadId}" names snapshot ${head.slice(0, 12)}, which this worker's snapshot store does not have (the thread went on elsewhere and the actor has no shared snapshot store): set \`snapshots.remote\` in the actor, or deliver from the worker that ran it. To deliver this worker's copy anyway, pass to: '${sandbox.head.slice(0, 12)}'.`,
      { cause: error, details: { threadId: thread.threadId, snapshot: head } },
    );
  }
}

/**
 * The git access of the sandbox's store, for the delivery steps that need git itself (a commit
 * on the user's branch, a text patch); `SANDBOX_FAILED` naming the backend when it has none.
 */
export function storeGitAccess(sandbox: DeliverySandbox, what: string): GitStoreAccess {
  const git = sandbox.store.git;
  if (git === undefined) {
    throw new AgentsError(
      AgentsErrorCode.SandboxFailed,
      `Cannot ${what} for sandbox "${sandbox.id}": its ${sandbox.store.backend} backend keeps no git store; apply the changes to your files instead (agents sandbox apply).`,
      { details: { sandboxId: sandbox.id, backend: sandbox.store.backend } },
    );
  }
  return git;
}

/** Runs git (text output) on the sandbox's snapshot store (a git store only). */
export function storeRun(
  sandbox: DeliverySandbox,
  args: readonly string[],
  options: DeliveryGitOptions & { okExitCodes?: number[]; input?: string } = {},
) {
  return storeGitAccess(sandbox, `run git ${args[0] ?? ''}`.trim()).run(args, options);
}

/**
 * Runs git and returns stdout as bytes (file contents must round-trip exactly; the text runner
 * decodes as UTF-8). Exit codes in `okExitCodes` are returned, others throw `SANDBOX_FAILED`.
 */
export function gitBytes(
  args: readonly string[],
  options: {
    cwd: string;
    env: Record<string, string>;
    signal?: AbortSignal | undefined;
    timeoutMs?: number | undefined;
    okExitCodes?: readonly number[];
  },
): Promise<{ stdout: Buffer; exitCode: number }> {
  return runGitBytes(args, {
    cwd: options.cwd,
    env: options.env,
    ...(options.signal === undefined ? {} : { signal: options.signal }),
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    ...(options.okExitCodes === undefined ? {} : { okExitCodes: options.okExitCodes }),
  });
}

/** The exact bytes of a file content id in the sandbox's store. */
export function readBlob(
  sandbox: DeliverySandbox,
  id: string,
  options: DeliveryGitOptions = {},
): Promise<Buffer> {
  return sandbox.store.readBlob(id, options);
}

/**
 * The full id of a snapshot of the sandbox's store, or `CHECKPOINT_NOT_FOUND` naming the
 * sandbox when there is none (or `rev` is not hex).
 */
export async function resolveSnapshot(
  sandbox: DeliverySandbox,
  rev: string,
  options: DeliveryGitOptions = {},
): Promise<string> {
  const sha = /^[0-9a-f]{4,64}$/.test(rev) ? await sandbox.store.resolve(rev, options) : undefined;
  if (sha === undefined) {
    throw new AgentsError(
      AgentsErrorCode.CheckpointNotFound,
      `"${rev}" is not a snapshot of sandbox "${sandbox.id}"; list the thread's checkpoints (agents checkpoints --thread ID) to pick one.`,
      { details: { sandboxId: sandbox.id, rev } },
    );
  }
  return sha;
}

/**
 * The files that differ between snapshots `from` and `to` (under `paths`, literally), with both
 * content ids: no rename detection, so a move is a delete and an add.
 */
export function rawSnapshotDiff(
  sandbox: DeliverySandbox,
  from: string,
  to: string,
  paths: readonly string[] | undefined,
  options: DeliveryGitOptions,
): Promise<RawTreeChange[]> {
  return sandbox.store.diff(from, to, { ...options, paths });
}
