/** Listing a thread's checkpoints with the file changes each one made. */
import type { RunnableConfig } from '@langchain/core/runnables';
import type { StateSnapshot } from '@langchain/langgraph';
import type { ChangeRecord, ChangedPath } from '../core/change-record.js';
import { readSandboxState, type RollbackRecord } from '../core/sandbox-state.js';
import { AgentsError, AgentsErrorCode } from '../errors.js';
import type { Sandbox } from '../sandbox/types.js';
import { checkpointIdOf, type CheckpointedGraph } from './checkpointed-graph.js';
import { stepActivity, type StepActivity } from './step-activity.js';

/** One checkpoint of a thread, with the file state it belongs to. */
export interface CheckpointEntry {
  checkpointId: string;
  parentCheckpointId?: string;
  /** LangGraph superstep (`-1` for the input checkpoint). */
  step: number;
  /** `input`, `loop`, `update` or `fork`. */
  source: string;
  createdAt?: string;
  /** Nodes that would run next from here. */
  next: string[];
  /** Snapshot sha of the sandbox tree at this checkpoint (absent before any tracked write). */
  sandboxHead?: string;
  /** Files this checkpoint changed compared with its parent checkpoint. */
  changed: ChangedPath[];
  /** Change records added by this checkpoint (tool calls since the parent). */
  records: ChangeRecord[];
  /**
   * The rollback or undo that made this checkpoint (its fork), with the safety snapshot taken
   * just before it; absent for other checkpoints.
   */
  rollback?: RollbackRecord;
  /** The prompt, tool calls and answer this checkpoint's step added to the messages. */
  activity: StepActivity;
  /** Config that addresses this checkpoint (for `getState`, `invoke(null, config)`). */
  config: RunnableConfig;
}

/** Options of {@link listCheckpoints}. */
export interface ListCheckpointsOptions {
  graph: CheckpointedGraph;
  threadId: string;
  /**
   * When given, each entry's `changed` is the real tree diff against the parent checkpoint
   * (`sandbox.diff`); otherwise it is the union of the entry's change records.
   */
  sandbox?: Sandbox;
  /**
   * At most this many entries, newest first: only they (and, for the oldest one, its parent) are
   * read, so listing the latest few of a long thread stays cheap.
   */
  limit?: number;
  signal?: AbortSignal;
}

/**
 * Lists a thread's checkpoints (LangGraph's `getStateHistory`, the one checkpoint reader),
 * newest first, each with its step, its sandbox head and the file changes it introduced against
 * its parent. Includes every branch (old branches stay after a rollback). Throws
 * `CHECKPOINT_NOT_FOUND` when the thread has no checkpoints.
 */
export async function listCheckpoints(options: ListCheckpointsOptions): Promise<CheckpointEntry[]> {
  const { graph, threadId, sandbox, signal } = options;
  signal?.throwIfAborted();
  const snapshots: StateSnapshot[] = [];
  // One more than asked: the oldest listed entry's parent, usually the next one in history.
  const history = graph.getStateHistory(
    { configurable: { thread_id: threadId } },
    options.limit === undefined ? undefined : { limit: options.limit + 1 },
  );
  for await (const snapshot of history) {
    if (checkpointIdOf(snapshot.config) !== undefined) snapshots.push(snapshot);
  }
  if (snapshots.length === 0) {
    throw new AgentsError(
      AgentsErrorCode.CheckpointNotFound,
      `Thread "${threadId}" has no checkpoints; check the thread id and the checkpointer settings.`,
      { details: { threadId } },
    );
  }
  const byId = new Map(snapshots.map((item) => [checkpointIdOf(item.config)!, item]));
  const entries: CheckpointEntry[] = [];
  for (const snapshot of options.limit === undefined
    ? snapshots
    : snapshots.slice(0, options.limit)) {
    signal?.throwIfAborted();
    const checkpointId = checkpointIdOf(snapshot.config)!;
    const parentCheckpointId = checkpointIdOf(snapshot.parentConfig);
    // A fork's parent can lie outside the listed window: read just that one.
    const parent =
      parentCheckpointId === undefined
        ? undefined
        : (byId.get(parentCheckpointId) ??
          (await graph.getState({
            configurable: { thread_id: threadId, checkpoint_id: parentCheckpointId },
          })));
    const state = readSandboxState(snapshot.values);
    const parentState =
      parent === undefined ? { changeLog: [], rollbacks: [] } : readSandboxState(parent.values);
    // The change log is append-only along a branch, so what this checkpoint added is its tail.
    const records = state.changeLog.slice(
      parentState.changeLog.length <= state.changeLog.length ? parentState.changeLog.length : 0,
    );
    // A fork made by a rollback or undo carries one record more than its parent: that one.
    const made = state.rollbacks.at(-1);
    const metadata = snapshot.metadata as { step?: unknown; source?: unknown } | undefined;
    const rollbackRecord =
      made !== undefined &&
      metadata?.source === 'update' &&
      !parentState.rollbacks.some((item) => item.safety === made.safety && item.time === made.time)
        ? made
        : undefined;
    let changed = mergeChanges(records);
    if (sandbox !== undefined) {
      const head = state.sandboxHead ?? sandbox.base;
      const parentHead =
        parent === undefined ? sandbox.base : (parentState.sandboxHead ?? sandbox.base);
      // Records that chain from the parent's head to this head say what the tree diff would
      // (each is a diff-tree of its call): a git process per checkpoint only when they do not.
      const chain = head === parentHead ? [] : recordChain(records, parentHead, head);
      changed = chain === undefined ? await sandbox.diff(parentHead, head) : composeChanges(chain);
    }
    entries.push({
      checkpointId,
      ...(parentCheckpointId === undefined ? {} : { parentCheckpointId }),
      step: typeof metadata?.step === 'number' ? metadata.step : -1,
      source: typeof metadata?.source === 'string' ? metadata.source : 'unknown',
      ...(snapshot.createdAt === undefined ? {} : { createdAt: snapshot.createdAt }),
      next: [...snapshot.next],
      ...(state.sandboxHead === undefined ? {} : { sandboxHead: state.sandboxHead }),
      changed,
      records,
      ...(rollbackRecord === undefined ? {} : { rollback: rollbackRecord }),
      activity: stepActivity(snapshot.values, parent?.values),
      config: snapshot.config,
    });
  }
  return entries;
}

function mergeChanges(records: readonly ChangeRecord[]): ChangedPath[] {
  const byPath = new Map<string, ChangedPath>();
  for (const record of records) {
    for (const change of record.changed) byPath.set(change.path, change);
  }
  return [...byPath.values()].sort((a, b) => a.path.localeCompare(b.path));
}

/**
 * The net change of serialized records per path, as a tree diff from the first call's start to
 * the last call's end reports it: added then modified is added, added then deleted is nothing,
 * deleted then added is modified.
 */
function composeChanges(records: readonly ChangeRecord[]): ChangedPath[] {
  const byPath = new Map<string, ChangedPath | undefined>();
  const existedBefore = new Map<string, boolean>();
  for (const record of records) {
    for (const change of record.changed) {
      if (!existedBefore.has(change.path)) existedBefore.set(change.path, change.status !== 'A');
      const existed = existedBefore.get(change.path)!;
      if (change.status === 'D') byPath.set(change.path, existed ? change : undefined);
      else
        byPath.set(
          change.path,
          existed
            ? { ...change, status: change.status === 'A' ? 'M' : change.status }
            : { ...change, status: 'A' },
        );
    }
  }
  // Byte order, as git lists paths.
  return [...byPath.values()]
    .filter((change): change is ChangedPath => change !== undefined)
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/**
 * The records that change the tree, in call order, when they lead from `from` to `to` (each
 * call starting where the previous one ended); `undefined` otherwise. Their composed change lists
 * then equal the tree diff between the two snapshots.
 */
function recordChain(
  records: readonly ChangeRecord[],
  from: string,
  to: string,
): ChangeRecord[] | undefined {
  const advancing = records.filter((record) => record.snapshot !== record.parent);
  const byParent = new Map(advancing.map((record) => [record.parent, record]));
  if (advancing.length === 0 || byParent.size !== advancing.length) return undefined;
  const chain: ChangeRecord[] = [];
  for (let at = from; chain.length < advancing.length;) {
    const record = byParent.get(at);
    if (record === undefined) return undefined;
    chain.push(record);
    at = record.snapshot;
  }
  return chain.at(-1)?.snapshot === to ? chain : undefined;
}
