import type { RunnableConfig } from '@langchain/core/runnables';
import type { CheckpointTuple, PendingWrite } from '@langchain/langgraph-checkpoint';
import { compareWritesSortKeys, writesSortKey } from '@langchain/langgraph-checkpoint';
import type { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';

/** The few better-sqlite3 calls used here (its type package is not a dependency). */
interface Statement {
  run(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
}
interface SqliteDatabase {
  prepare(sql: string): Statement;
  exec(sql: string): unknown;
}

/**
 * Opens LangGraph's `SqliteSaver` on a file, made to keep the order of a superstep's writes.
 *
 * Why: the actor graph stores messages as a `DeltaChannel` (each message once; state rebuilt by
 * replaying per-step writes). LangGraph replays a step's writes in `(task_path, task_id, idx)`
 * order, the order the run applied them, and asks savers to return them so. `SqliteSaver` 1.0
 * drops the task path, so the results of parallel calls came back in task-id (random) order. This
 * saver keeps the path in an extra `task_path` column (added to an existing file on open; older
 * rows sort first, as LangGraph specifies) and sorts `pendingWrites` by it.
 */
export async function openOrderedSqliteSaver(path: string): Promise<SqliteSaver> {
  // Imported here: better-sqlite3 is native, and importing a module never starts work.
  const { SqliteSaver: Base } = await import('@langchain/langgraph-checkpoint-sqlite');

  class OrderedSqliteSaver extends Base {
    #setPath: Statement | undefined;
    #paths: Statement | undefined;

    override setup(): void {
      const first = !this.isSetup;
      super.setup();
      if (!first) return;
      const db = this.db as unknown as SqliteDatabase;
      const columns = db.prepare('PRAGMA table_info(writes)').all() as Array<{ name: string }>;
      if (!columns.some((column) => column.name === 'task_path'))
        db.exec(`ALTER TABLE writes ADD COLUMN task_path TEXT NOT NULL DEFAULT ''`);
      this.#setPath = db.prepare(
        'UPDATE writes SET task_path = ? WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ? AND task_id = ?',
      );
      this.#paths = db.prepare(
        'SELECT DISTINCT task_id, task_path FROM writes WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?',
      );
    }

    override async putWrites(
      config: RunnableConfig,
      writes: PendingWrite[],
      taskId: string,
      taskPath?: string,
    ): Promise<void> {
      await super.putWrites(config, writes, taskId);
      if (taskPath === undefined || taskPath === '') return;
      const { thread_id, checkpoint_ns = '', checkpoint_id } = config.configurable ?? {};
      this.#setPath!.run(taskPath, thread_id, checkpoint_ns, checkpoint_id, taskId);
    }

    override async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
      const tuple = await super.getTuple(config);
      const writes = tuple?.pendingWrites;
      if (tuple === undefined || writes === undefined || writes.length < 2) return tuple;
      const { thread_id, checkpoint_ns = '', checkpoint_id } = tuple.config.configurable ?? {};
      const rows = this.#paths!.all(thread_id, checkpoint_ns, checkpoint_id) as Array<{
        task_id: string;
        task_path: string;
      }>;
      const pathOf = new Map(rows.map((row) => [row.task_id, row.task_path]));
      // Stable sort: a task's own writes keep their stored (idx) order.
      const keyed = writes.map((write, index) => ({
        write,
        key: writesSortKey(pathOf.get(write[0]) ?? '', write[0], index),
      }));
      keyed.sort((left, right) => compareWritesSortKeys(left.key, right.key));
      return { ...tuple, pendingWrites: keyed.map((item) => item.write) };
    }
  }

  // `fromConnString` opens the file (creating it); the subclass takes over its connection.
  return new OrderedSqliteSaver(Base.fromConnString(path).db);
}
