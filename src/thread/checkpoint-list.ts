/** Listing a thread's checkpoints with the file changes each one made. */
import type { StateSnapshot } from '@langchain/langgraph';
import { AgentsError, AgentsErrorCode } from '../errors.js';
import type { Sandbox } from '../sandbox/types.js';
import { checkpointIdOf } from './checkpointed-graph.js';
import type { CheckpointedGraph } from './checkpointed-graph.js';
import { readSandboxState } from '../core/sandbox-state.js';
import { buildCheckpointEntries } from './checkpoint-entries.js';
import type { CheckpointEntry, CheckpointView } from './checkpoint-entries.js';

export type { CheckpointEntry } from './checkpoint-entries.js';

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
  const view = (snapshot: StateSnapshot): CheckpointView => {
    const parentCheckpointId = checkpointIdOf(snapshot.parentConfig);
    return {
      checkpointId: checkpointIdOf(snapshot.config) ?? '',
      ...(parentCheckpointId === undefined ? {} : { parentCheckpointId }),
      ...(snapshot.metadata === undefined ? {} : { metadata: snapshot.metadata }),
      ...(snapshot.createdAt === undefined ? {} : { createdAt: snapshot.createdAt }),
      next: [...snapshot.next],
      values: snapshot.values,
      state: readSandboxState(snapshot.values),
      config: snapshot.config,
    };
  };
  const views = snapshots
    .filter((snapshot) => checkpointIdOf(snapshot.config) !== undefined)
    .map(view);
  const byId = new Map(views.map((item) => [item.checkpointId, item]));
  const selected = options.limit === undefined ? views : views.slice(0, options.limit);
  return buildCheckpointEntries(selected, {
    byId,
    // A fork's parent can lie outside the listed window: read just that one.
    loadParent: async (parentCheckpointId) =>
      view(
        await graph.getState({
          configurable: { thread_id: threadId, checkpoint_id: parentCheckpointId },
        }),
      ),
    sandbox,
    signal,
  });
}
