/** The checkpointed graph rollback works on, and reading its checkpoints by id. */
import type { RunnableConfig } from '@langchain/core/runnables';
import type { StateSnapshot } from '@langchain/langgraph';
import { AgentsError, AgentsErrorCode } from '../errors.js';

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

export function checkpointIdOf(config: RunnableConfig | undefined): string | undefined {
  const id: unknown = config?.configurable?.['checkpoint_id'];
  return typeof id === 'string' ? id : undefined;
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

/** The thread's head: its state and checkpoint id. */
export async function loadHead(
  graph: CheckpointedGraph,
  threadId: string,
): Promise<{ snapshot: StateSnapshot; checkpointId: string | undefined }> {
  const snapshot = await graph.getState({ configurable: { thread_id: threadId } });
  return { snapshot, checkpointId: checkpointIdOf(snapshot.config) };
}
