import { HumanMessage } from '@langchain/core/messages';
import type { RunnableConfig } from '@langchain/core/runnables';
import type { StateSnapshot } from '@langchain/langgraph';
import { AgentsError, AgentsErrorCode, errorMessage } from '../errors.js';
import type { ChangeRecord, ChangedPath } from '../core/tool-descriptor.js';
import type { SkippedPath } from '../core/tool-descriptor.js';
import type { RestoreResult, Sandbox } from '../sandbox/types.js';
import { assertRollbackDurability } from './checkpointer.js';
import type { Durability } from './checkpointer.js';
import { readSandboxState, undoStack } from './state.js';
import type { RollbackRecord } from './state.js';

/**
 * The part of a compiled LangGraph graph (`CompiledStateGraph` / `Pregel`) that checkpoints and
 * rollback use. The graph must be compiled with a checkpointer.
 */
export interface CheckpointedGraph {
  getState(config: RunnableConfig): Promise<StateSnapshot>;
  getStateHistory(
    config: RunnableConfig,
    options?: { limit?: number },
  ): AsyncIterableIterator<StateSnapshot>;
  updateState(
    config: RunnableConfig,
    values: Record<string, unknown>,
    asNode?: string,
  ): Promise<RunnableConfig>;
}

// ---------------------------------------------------------------------------------------------
// Active runs

const activeRuns = new Map<string, number>();

/** A mark that a run is active on a thread; release it (or `using`) when the run ends. */
export interface ActiveRunMark extends Disposable {
  readonly threadId: string;
  /** Idempotent. */
  release(): void;
}

/**
 * Marks a run as active on a thread, so {@link rollback} refuses to touch it meanwhile. The
 * registry is per process: a run in another process is not seen. Marks nest (two marks, two
 * releases).
 */
export function markRunActive(threadId: string): ActiveRunMark {
  activeRuns.set(threadId, (activeRuns.get(threadId) ?? 0) + 1);
  let released = false;
  const release = (): void => {
    if (released) return;
    released = true;
    const count = (activeRuns.get(threadId) ?? 1) - 1;
    if (count <= 0) activeRuns.delete(threadId);
    else activeRuns.set(threadId, count);
  };
  return { threadId, release, [Symbol.dispose]: release };
}

/** True while a run marked with {@link markRunActive} is active on the thread. */
export function isRunActive(threadId: string): boolean {
  return (activeRuns.get(threadId) ?? 0) > 0;
}

/**
 * Runs `work` (e.g. `() => graph.invoke(input, config)`) with the thread marked active. Refuses
 * `durability: 'exit'` in `options` (no intermediate checkpoints to roll back to).
 */
export async function withActiveRun<T>(
  threadId: string,
  work: () => Promise<T>,
  options?: { durability?: Durability | undefined },
): Promise<T> {
  assertRollbackDurability(options);
  const mark = markRunActive(threadId);
  try {
    return await work();
  } finally {
    mark.release();
  }
}

export function assertNoActiveRun(threadId: string): void {
  if (isRunActive(threadId)) {
    throw new AgentsError(
      AgentsErrorCode.RunActive,
      `A run is active on thread "${threadId}"; wait for it to finish (or cancel it) before rolling back.`,
      { details: { threadId } },
    );
  }
}

// ---------------------------------------------------------------------------------------------
// Listing

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

export function checkpointIdOf(config: RunnableConfig | undefined): string | undefined {
  const id: unknown = config?.configurable?.['checkpoint_id'];
  return typeof id === 'string' ? id : undefined;
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

/**
 * Lists a thread's checkpoints, newest first, each with its step, its sandbox head and the file
 * changes it introduced. Includes every branch (old branches stay after a rollback). Throws
 * `CHECKPOINT_NOT_FOUND` when the thread has no checkpoints.
 */
export async function listCheckpoints(options: ListCheckpointsOptions): Promise<CheckpointEntry[]> {
  const { graph, threadId, sandbox, signal } = options;
  signal?.throwIfAborted();
  const snapshots: StateSnapshot[] = [];
  const config = { configurable: { thread_id: threadId } };
  // One more than asked: the oldest listed entry's parent, usually the next one in history.
  const history = graph.getStateHistory(
    config,
    options.limit === undefined ? undefined : { limit: options.limit + 1 },
  );
  for await (const snapshot of history) snapshots.push(snapshot);
  if (snapshots.length === 0) {
    throw new AgentsError(
      AgentsErrorCode.CheckpointNotFound,
      `Thread "${threadId}" has no checkpoints; check the thread id and the checkpointer settings.`,
      { details: { threadId } },
    );
  }
  const byId = new Map<string, StateSnapshot>();
  for (const snapshot of snapshots) {
    const id = checkpointIdOf(snapshot.config);
    if (id !== undefined) byId.set(id, snapshot);
  }
  const selected = options.limit === undefined ? snapshots : snapshots.slice(0, options.limit);
  const entries: CheckpointEntry[] = [];
  for (const snapshot of selected) {
    signal?.throwIfAborted();
    const checkpointId = checkpointIdOf(snapshot.config);
    if (checkpointId === undefined) continue;
    const parentCheckpointId = checkpointIdOf(snapshot.parentConfig);
    const state = readSandboxState(snapshot.values);
    const parent =
      parentCheckpointId === undefined
        ? undefined
        : (byId.get(parentCheckpointId) ??
          // A fork's parent can lie outside the listed window: read just that one.
          (await graph.getState({
            configurable: { thread_id: threadId, checkpoint_id: parentCheckpointId },
          })));
    const parentState = readSandboxState(parent?.values);
    // The change log is append-only along a branch, so what this checkpoint added is its tail.
    const records = state.changeLog.slice(
      parentState.changeLog.length <= state.changeLog.length ? parentState.changeLog.length : 0,
    );
    // A fork made by a rollback or undo carries one record more than its parent: that one.
    const made = state.rollbacks.at(-1);
    const rollbackRecord =
      made !== undefined &&
      snapshot.metadata?.source === 'update' &&
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
    const metadata = snapshot.metadata;
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
      config: snapshot.config,
    });
  }
  return entries;
}
// ---------------------------------------------------------------------------------------------
// Rollback

/** Options of {@link rollback}. */
export interface RollbackOptions {
  graph: CheckpointedGraph;
  threadId: string;
  /** The checkpoint to go back to (from {@link listCheckpoints}). */
  checkpointId: string;
  /** The thread's sandbox; its snapshot store must hold the checkpoint's sandbox head. */
  sandbox: Sandbox;
  /** Only compute the preview; change nothing. */
  dryRun?: boolean;
  /**
   * A note for the model, added as a human message to the forked state (only when the state
   * has a `messages` field), e.g. "Files were rolled back; the last two edits are undone."
   */
  note?: string;
  /** Extra values written into the fork. */
  values?: Record<string, unknown>;
  /** The node the fork is written as (LangGraph `updateState` `asNode`); default: inferred. */
  asNode?: string;
  signal?: AbortSignal;
}

/** What {@link rollback} did (or, for a dry run, would do). */
export interface RollbackResult {
  dryRun: boolean;
  threadId: string;
  target: { checkpointId: string; sandboxHead: string; config: RunnableConfig };
  /** File changes from the current tree to the target. */
  preview: ChangedPath[];
  /** Safety snapshot of the tree taken just before the restore (absent for a dry run). */
  safety?: string;
  /** The thread's head before the rollback, for `undoRollback()`. */
  previous?: { checkpointId?: string; config: RunnableConfig; sandboxHead: string };
  /** Config of the forked checkpoint; `graph.invoke(null, forkConfig)` resumes from it. */
  forkConfig?: RunnableConfig;
  /**
   * Paths the snapshots leave out (size cap, nested repos, ...): the rollback did not (or, for a
   * dry run, will not) restore or remove them. Absent when none.
   */
  notRestored?: SkippedPath[];
  /** Files the target ignores that the restore put back after deleting them; absent when none. */
  keptIgnored?: string[];
  /**
   * How many rollbacks of the thread `undoRollback()` can undo now, one per call, newest
   * first (`0` when the graph state has no `rollbacks` field to record them in).
   */
  undoable: number;
}

export async function loadCheckpoint(
  graph: CheckpointedGraph,
  threadId: string,
  checkpointId: string,
): Promise<StateSnapshot> {
  const snapshot = await graph.getState({
    configurable: { thread_id: threadId, checkpoint_id: checkpointId },
  });
  if (checkpointIdOf(snapshot.config) !== checkpointId || snapshot.createdAt === undefined) {
    throw new AgentsError(
      AgentsErrorCode.CheckpointNotFound,
      `Checkpoint "${checkpointId}" does not exist on thread "${threadId}"; run \`agents checkpoints --thread ${threadId}\` to list them.`,
      { details: { threadId, checkpointId } },
    );
  }
  return snapshot;
}

function hasMessages(values: unknown): boolean {
  return (
    typeof values === 'object' &&
    values !== null &&
    Array.isArray((values as Record<string, unknown>)['messages'])
  );
}

/** True when the graph's state has the `rollbacks` field (`sandboxStateFields` spread in). */
function recordsRollbacks(values: unknown): boolean {
  return (
    typeof values === 'object' &&
    values !== null &&
    Array.isArray((values as Record<string, unknown>)['rollbacks'])
  );
}

/** The thread's head: its state and checkpoint id. */
export async function loadHead(
  graph: CheckpointedGraph,
  threadId: string,
): Promise<{ snapshot: StateSnapshot; checkpointId: string | undefined }> {
  const snapshot = await graph.getState({ configurable: { thread_id: threadId } });
  return { snapshot, checkpointId: checkpointIdOf(snapshot.config) };
}

/** What {@link restoreAndFork} is asked to do: one rollback or undo. */
export interface RestoreAndForkInput {
  kind: RollbackRecord['kind'];
  graph: CheckpointedGraph;
  threadId: string;
  sandbox: Sandbox;
  /** The thread's head before the operation. */
  head: { snapshot: StateSnapshot; checkpointId: string | undefined };
  /** The checkpoint whose state is forked. */
  target: { checkpointId: string; config: RunnableConfig };
  /** The snapshot the files go to. */
  sandboxHead: string;
  update: Record<string, unknown>;
  asNode: string | undefined;
  signal: AbortSignal | undefined;
}

/**
 * Restores files to `sandboxHead` (taking a safety snapshot), puts back ignored files the
 * restore deleted, then forks graph state from the target, recording the operation in the
 * `rollbacks` field. Files first: if the state step fails, the files go back to the safety
 * snapshot and `ROLLBACK_FAILED` is thrown.
 */
export async function restoreAndFork(input: RestoreAndForkInput): Promise<RollbackResult> {
  const { graph, threadId, sandbox, sandboxHead, signal } = input;
  let restored: RestoreResult;
  try {
    restored = await sandbox.restore(sandboxHead, signal === undefined ? {} : { signal });
  } catch (error) {
    if (AgentsError.isInstance(error)) throw error;
    throw new AgentsError(
      AgentsErrorCode.RollbackFailed,
      `Restoring the files of thread "${threadId}" to snapshot ${sandboxHead} failed: ${errorMessage(error)}. Graph state was not changed.`,
      { cause: error, details: { threadId, sandboxHead } },
    );
  }
  const safety = restored.safety.sha;
  const headValues = input.head.snapshot.values;
  const records = recordsRollbacks(headValues);
  const rollbacks: RollbackRecord[] = [
    ...readSandboxState(headValues).rollbacks,
    {
      kind: input.kind,
      safety,
      from: input.head.checkpointId ?? '',
      to: input.target.checkpointId,
      sandboxHead,
      time: new Date().toISOString(),
    },
  ];
  let forkConfig: RunnableConfig;
  try {
    forkConfig = await graph.updateState(
      input.target.config,
      { ...input.update, sandboxHead, ...(records ? { rollbacks } : {}) },
      input.asNode,
    );
  } catch (error) {
    let undoError: unknown;
    try {
      await sandbox.restore(safety);
    } catch (caught) {
      undoError = caught;
    }
    throw new AgentsError(
      AgentsErrorCode.RollbackFailed,
      `Forking the state of thread "${threadId}" failed: ${errorMessage(error)}. ` +
        (undoError === undefined
          ? `The files were put back to safety snapshot ${safety}.`
          : `Putting the files back to safety snapshot ${safety} also failed (${errorMessage(undoError)}); restore it by hand.`),
      { cause: error, details: { threadId, safety } },
    );
  }
  const keptIgnored = restored.keptIgnored ?? [];
  const notRestored = sandbox.skippedPaths?.() ?? [];
  return {
    ...(notRestored.length === 0 ? {} : { notRestored }),
    dryRun: false,
    threadId,
    target: { ...input.target, sandboxHead },
    preview: restored.changed,
    safety,
    previous: {
      ...(input.head.checkpointId === undefined ? {} : { checkpointId: input.head.checkpointId }),
      config: input.head.snapshot.config,
      sandboxHead: safety,
    },
    forkConfig,
    ...(keptIgnored.length === 0 ? {} : { keptIgnored }),
    undoable: records ? undoStack(rollbacks).length : 0,
  };
}

/**
 * Rolls a thread back to an earlier checkpoint, files and state together:
 *
 * 1. refuses while a run is active on the thread (`RUN_ACTIVE`). The marks are per process;
 *    across processes the sandbox's run lock does it: open the thread's sandbox with
 *    `openSandbox({ ..., lock: true })` (as `agents rollback` and thread-bound actors do), and a
 *    second process holding it gets `RUN_ACTIVE` from `openSandbox` before any rollback starts;
 * 2. previews the file changes (a dry run stops here, changing nothing; files edited since the
 *    last snapshot are not in a dry-run preview);
 * 3. takes a safety snapshot and restores the checkpoint's tree (`sandbox.restore`): files the
 *    sandbox tracked that are not in the target are removed, ignored and never-tracked files
 *    are left alone;
 * 4. forks graph state from the checkpoint with `updateState` (the old branch stays in
 *    history), recording the rollback and its safety snapshot in the `rollbacks` state field;
 *    if that fails the files are put back.
 *
 * Resume with `graph.invoke(null, result.forkConfig)`. Undo with `undoRollback()` (several
 * levels deep). Throws `CHECKPOINT_NOT_FOUND` for an unknown checkpoint, `ROLLBACK_FAILED` when a
 * step fails.
 */
export async function rollback(options: RollbackOptions): Promise<RollbackResult> {
  const { graph, threadId, checkpointId, sandbox, signal } = options;
  signal?.throwIfAborted();
  assertNoActiveRun(threadId);
  if (options.dryRun === true) {
    const target = await loadCheckpoint(graph, threadId, checkpointId);
    const targetHead = readSandboxState(target.values).sandboxHead ?? sandbox.base;
    const preview = sandbox.head === targetHead ? [] : await sandbox.diff(sandbox.head, targetHead);
    const head = await loadHead(graph, threadId);
    const notRestored = sandbox.skippedPaths?.() ?? [];
    return {
      dryRun: true,
      threadId,
      target: { checkpointId, sandboxHead: targetHead, config: target.config },
      preview,
      ...(notRestored.length === 0 ? {} : { notRestored }),
      undoable: undoStack(readSandboxState(head.snapshot.values).rollbacks).length,
    };
  }
  // Hold the thread from the check on, before the first await: a run or a second rollback must
  // not start between the check, the restore and the fork.
  const mark = markRunActive(threadId);
  try {
    const target = await loadCheckpoint(graph, threadId, checkpointId);
    const targetHead = readSandboxState(target.values).sandboxHead ?? sandbox.base;
    const head = await loadHead(graph, threadId);
    const update: Record<string, unknown> = { ...options.values };
    if (options.note !== undefined && hasMessages(target.values)) {
      update['messages'] = [new HumanMessage({ content: options.note })];
    }
    return await restoreAndFork({
      kind: 'rollback',
      graph,
      threadId,
      sandbox,
      head,
      target: { checkpointId, config: target.config },
      sandboxHead: targetHead,
      update,
      asNode: options.asNode,
      signal,
    });
  } finally {
    mark.release();
  }
}
