/** The step rollback and undo share: restore the files, then fork graph state from a checkpoint. */
import type { RunnableConfig } from '@langchain/core/runnables';
import type { StateSnapshot } from '@langchain/langgraph';
import { AgentsError, AgentsErrorCode, errorMessage } from '../errors.js';
import type { ChangedPath } from '../core/change-record.js';
import type { SkippedPath } from '../core/change-record.js';
import type { RestoreResult, Sandbox } from '../sandbox/types.js';
import type { CheckpointedGraph } from './checkpointed-graph.js';
import { readSandboxState, undoStack } from '../core/sandbox-state.js';
import type { RollbackRecord } from '../core/sandbox-state.js';

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

/** True when the graph's state has the `rollbacks` field (`sandboxStateFields` spread in). */
function recordsRollbacks(values: unknown): boolean {
  return (
    typeof values === 'object' &&
    values !== null &&
    Array.isArray((values as Record<string, unknown>)['rollbacks'])
  );
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
