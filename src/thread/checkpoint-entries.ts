/**
 * Building a thread's checkpoint entries (what `agents checkpoints` prints) from plain views of
 * its checkpoints, as {@link listCheckpoints} reads them through LangGraph's `getStateHistory`
 * (the one checkpoint reader, issue 39). Loads neither LangGraph nor zod.
 */
import type { RunnableConfig } from '@langchain/core/runnables';
import type { ChangeRecord, ChangedPath } from '../core/change-record.js';
import type { RollbackRecord, SandboxState } from '../core/sandbox-state.js';
import type { Sandbox } from '../sandbox/types.js';
import { stepActivity } from './step-activity.js';
import type { StepActivity } from './step-activity.js';

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

/** What the entries are built from: one checkpoint as read by either lister. */
export interface CheckpointView {
  checkpointId: string;
  parentCheckpointId?: string;
  /** Checkpoint metadata (`step`, `source`); absent for a checkpoint that does not exist. */
  metadata?: { step?: unknown; source?: unknown };
  createdAt?: string;
  next: string[];
  /** The state values (`messages` is what {@link stepActivity} reads). */
  values: unknown;
  /** The sandbox fields of `values`. */
  state: SandboxState;
  config: RunnableConfig;
}

/** What {@link buildCheckpointEntries} needs besides the views. */
export interface BuildEntriesOptions {
  /** Every view read (the listed ones and the one past the window), by checkpoint id. */
  byId: ReadonlyMap<string, CheckpointView>;
  /** A parent outside the window (a fork's parent): read just that one. */
  loadParent(checkpointId: string): Promise<CheckpointView>;
  sandbox?: Sandbox | undefined;
  signal?: AbortSignal | undefined;
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
 * The entries of `selected` (newest first), each with its step, its sandbox head and the file
 * changes it introduced against its parent.
 */
export async function buildCheckpointEntries(
  selected: readonly CheckpointView[],
  options: BuildEntriesOptions,
): Promise<CheckpointEntry[]> {
  const { byId, sandbox, signal } = options;
  const entries: CheckpointEntry[] = [];
  for (const view of selected) {
    signal?.throwIfAborted();
    const { checkpointId, parentCheckpointId, state } = view;
    const parent =
      parentCheckpointId === undefined
        ? undefined
        : (byId.get(parentCheckpointId) ?? (await options.loadParent(parentCheckpointId)));
    const parentState = parent?.state ?? { changeLog: [], rollbacks: [] };
    // The change log is append-only along a branch, so what this checkpoint added is its tail.
    const records = state.changeLog.slice(
      parentState.changeLog.length <= state.changeLog.length ? parentState.changeLog.length : 0,
    );
    // A fork made by a rollback or undo carries one record more than its parent: that one.
    const made = state.rollbacks.at(-1);
    const rollbackRecord =
      made !== undefined &&
      view.metadata?.source === 'update' &&
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
    const metadata = view.metadata;
    entries.push({
      checkpointId,
      ...(parentCheckpointId === undefined ? {} : { parentCheckpointId }),
      step: typeof metadata?.step === 'number' ? metadata.step : -1,
      source: typeof metadata?.source === 'string' ? metadata.source : 'unknown',
      ...(view.createdAt === undefined ? {} : { createdAt: view.createdAt }),
      next: [...view.next],
      ...(state.sandboxHead === undefined ? {} : { sandboxHead: state.sandboxHead }),
      changed,
      records,
      ...(rollbackRecord === undefined ? {} : { rollback: rollbackRecord }),
      activity: stepActivity(view.values, parent?.values),
      config: view.config,
    });
  }
  return entries;
}
