/** Rolling a thread back to a checkpoint, files and graph state together. */
import { HumanMessage } from '@langchain/core/messages';
import type { Sandbox } from '../sandbox/types.js';
import { assertNoActiveRun, markRunActive } from './active-runs.js';
import { loadCheckpoint, loadHead } from './checkpointed-graph.js';
import type { CheckpointedGraph } from './checkpointed-graph.js';
import { restoreAndFork } from './restore-and-fork.js';
import type { RollbackResult } from './restore-and-fork.js';
import { readSandboxState, undoStack } from '../core/sandbox-state.js';

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

function hasMessages(values: unknown): boolean {
  return (
    typeof values === 'object' &&
    values !== null &&
    Array.isArray((values as Record<string, unknown>)['messages'])
  );
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
