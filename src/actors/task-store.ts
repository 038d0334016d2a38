import {
  BaseStore,
  InMemoryStore,
  type Item,
  type Operation,
  type OperationResults,
} from '@langchain/langgraph';
import type { CheckpointBackend, OpenedStore } from '../checkpoint/backend.js';

/*
 * The LangGraph store an actor's graph is compiled with (issue 38, item 11). It holds what a
 * resumed run must find again outside the checkpoints: the MCP task a tool call became
 * (`src/mcp/tasks.ts` notes it before polling), so a run killed or paused mid-task polls the same
 * task on `--continue` instead of sending `tools/call` again. It lives where the checkpoints do
 * (the checkpoint backend's `openStore`: a file beside a SQLite file, tables beside Postgres
 * checkpoints), else in memory. Every key is under the project and the actor, so two projects or
 * actors sharing one database never read each other's tasks with the same thread id.
 */

/**
 * Opens the actor's store beside its checkpoints (`backend.openStore` with `settings`, relative
 * paths against `projectDir`), in memory without one (a caller's saver: a pause within the
 * process still resumes its task); its keys scoped under `[project, actor]`.
 */
export async function openActorStore(
  checkpoints: {
    backend: CheckpointBackend | undefined;
    settings: { type: string };
    projectDir: string;
  },
  scope: { project: string; actor: string },
): Promise<OpenedStore> {
  const { backend, settings, projectDir } = checkpoints;
  const opened = (await backend?.openStore?.(settings, projectDir)) ?? {
    store: new InMemoryStore(),
    close: async () => {},
  };
  return {
    store: new ScopedStore(opened.store, [scope.project, scope.actor]),
    close: () => opened.close(),
  };
}

/** Puts every namespace under `prefix` (the project and actor) and takes it off in answers. */
class ScopedStore extends BaseStore {
  constructor(
    readonly inner: BaseStore,
    readonly prefix: string[],
  ) {
    super();
  }

  async batch<Op extends Operation[]>(operations: Op): Promise<OperationResults<Op>> {
    const scoped = operations.map((op) =>
      'namespace' in op ? { ...op, namespace: [...this.prefix, ...op.namespace] } : op,
    ) as Op;
    const results = (await this.inner.batch(scoped)) as unknown[];
    return results.map((result) =>
      result !== null && typeof result === 'object' && 'namespace' in result
        ? { ...result, namespace: (result as Item).namespace.slice(this.prefix.length) }
        : result,
    ) as OperationResults<Op>;
  }
}
