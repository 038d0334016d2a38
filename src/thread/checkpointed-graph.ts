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

/**
 * The full id of a thread's checkpoint from its id or a unique prefix of it, as git takes a
 * short sha (`1f1ef230-5d14-6` for a 36-character UUID). Throws `CHECKPOINT_NOT_FOUND` when no
 * checkpoint starts so, `INVALID_ARGUMENTS` naming the candidates when several do.
 */
export async function resolveCheckpointId(
  graph: CheckpointedGraph,
  threadId: string,
  idOrPrefix: string,
  signal?: AbortSignal,
): Promise<string> {
  const exact = await graph.getState({
    configurable: { thread_id: threadId, checkpoint_id: idOrPrefix },
  });
  if (checkpointIdOf(exact.config) === idOrPrefix && exact.createdAt !== undefined)
    return idOrPrefix;
  const matches: string[] = [];
  if (idOrPrefix !== '') {
    for await (const snapshot of graph.getStateHistory({ configurable: { thread_id: threadId } })) {
      signal?.throwIfAborted();
      const id = checkpointIdOf(snapshot.config);
      if (id?.startsWith(idOrPrefix) === true) matches.push(id);
    }
  }
  if (matches.length === 1) return matches[0]!;
  const list = `\`agents checkpoints --thread ${threadId}\``;
  if (matches.length === 0) {
    throw new AgentsError(
      AgentsErrorCode.CheckpointNotFound,
      `Checkpoint "${idOrPrefix}" does not exist on thread "${threadId}"; run ${list} to list them.`,
      { details: { threadId, checkpointId: idOrPrefix } },
    );
  }
  const shown = matches.slice(0, 5).join(', ');
  throw new AgentsError(
    AgentsErrorCode.InvalidArguments,
    `Checkpoint prefix "${idOrPrefix}" is ambiguous on thread "${threadId}": ${matches.length} checkpoints start with it (${shown}${matches.length > 5 ? ', ...' : ''}); give more characters (${list} lists them).`,
    { details: { threadId, checkpointId: idOrPrefix, candidates: matches } },
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
