import { AgentsError, AgentsErrorCode } from '../errors.js';
import type { Sandbox } from '../sandbox/types.js';
import { assertNoActiveRun, markRunActive } from './active-runs.js';
import { loadCheckpoint, loadHead } from './checkpointed-graph.js';
import { restoreAndFork } from './restore-and-fork.js';
import type { CheckpointedGraph } from './checkpointed-graph.js';
import type { RollbackResult } from './restore-and-fork.js';
import { readSandboxState, undoStack } from '../core/sandbox-state.js';

/** Options of {@link undoRollback}. */
export interface UndoRollbackOptions {
  graph: CheckpointedGraph;
  sandbox: Sandbox;
  /** The thread; required unless `rollback` is given. */
  threadId?: string;
  /**
   * The rollback to undo. Default: the thread's latest rollback not yet undone, as recorded in
   * its graph state (`rollbacks`); each call undoes one more level.
   */
  rollback?: RollbackResult;
  asNode?: string;
  signal?: AbortSignal;
}

/**
 * Undoes a rollback: restores its safety snapshot, the exact tree of the moment before the
 * rollback (files edited after the last tool snapshot and files of a killed call included;
 * ignored files the rollback left in place stay), and forks state from the checkpoint the thread
 * was at then. Called again, it undoes the rollback before that one, and so on.
 *
 * The undo takes a safety snapshot of its own (listed with the thread's rollbacks by
 * `listCheckpoints`), so it loses nothing either; passing an undo's result as `rollback` redoes
 * the rollback, as a new rollback that `undoRollback()` can undo in turn.
 *
 * Throws `CHECKPOINT_NOT_FOUND` when there is nothing to undo (no rollback recorded, or a dry
 * run; as `undoApply` does) or when the checkpoint the thread was at is gone, `RUN_ACTIVE` while
 * a run is active on the thread.
 */
export async function undoRollback(options: UndoRollbackOptions): Promise<RollbackResult> {
  const { graph, sandbox, signal } = options;
  const threadId = options.threadId ?? options.rollback?.threadId;
  if (threadId === undefined) {
    throw new AgentsError(
      AgentsErrorCode.InvalidArguments,
      'undoRollback needs a threadId (or the rollback result to undo).',
    );
  }
  const given = options.rollback;
  if (given !== undefined && (given.dryRun || given.previous === undefined)) {
    throw new AgentsError(
      AgentsErrorCode.CheckpointNotFound,
      `Nothing to undo on thread "${threadId}": the rollback was a dry run.`,
      { details: { threadId } },
    );
  }
  signal?.throwIfAborted();
  assertNoActiveRun(threadId);
  const mark = markRunActive(threadId);
  try {
    const head = await loadHead(graph, threadId);
    const top = undoStack(readSandboxState(head.snapshot.values).rollbacks).at(-1);
    if (given?.previous !== undefined && given.safety !== undefined) {
      // The latest rollback: an undo. Any other: a move of its own, undoable in turn.
      const kind = top?.safety === given.safety ? 'undo' : 'rollback';
      return await restoreAndFork({
        kind,
        graph,
        threadId,
        sandbox,
        head,
        target: {
          checkpointId: given.previous.checkpointId ?? '',
          config: given.previous.config,
        },
        sandboxHead: given.safety,
        update: {},
        asNode: options.asNode,
        signal,
      });
    }
    if (top === undefined) {
      // The same code (and exit code 4) as `sandbox apply --undo` with nothing left to undo.
      throw new AgentsError(
        AgentsErrorCode.CheckpointNotFound,
        `Nothing to undo on thread "${threadId}": no rollback of it is left to undo (\`agents checkpoints --thread ${threadId}\` lists its rollbacks and their safety snapshots).`,
        { details: { threadId } },
      );
    }
    const target = await loadCheckpoint(graph, threadId, top.from);
    return await restoreAndFork({
      kind: 'undo',
      graph,
      threadId,
      sandbox,
      head,
      target: { checkpointId: top.from, config: target.config },
      sandboxHead: top.safety,
      update: {},
      asNode: options.asNode,
      signal,
    });
  } finally {
    mark.release();
  }
}
