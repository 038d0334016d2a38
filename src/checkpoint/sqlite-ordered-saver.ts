import type { RunnableConfig } from '@langchain/core/runnables';
import type { CheckpointTuple, PendingWrite } from '@langchain/langgraph-checkpoint';
import { WRITES_IDX_MAP } from '@langchain/langgraph-checkpoint';
import type { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import { AgentsError, AgentsErrorCode, errorMessage } from '../errors.js';
import { withOrderedPendingWrites } from './pending-writes.js';
import type { TaskPathRow } from './pending-writes.js';

/** The few better-sqlite3 calls used here (its type package is not a dependency). */
interface Statement {
  run(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
}
interface SqliteDatabase {
  prepare(sql: string): Statement;
  exec(sql: string): unknown;
  transaction<T extends unknown[]>(work: (...args: T) => void): (...args: T) => void;
}

/**
 * Opens LangGraph's `SqliteSaver` on a file, made to keep the order of a superstep's writes.
 *
 * Why: the actor graph stores messages as a `DeltaChannel` (each message once; state rebuilt by
 * replaying per-step writes). LangGraph replays a step's writes in `(task_path, task_id, idx)`
 * order, the order the run applied them, and asks savers to return them so. `SqliteSaver` 1.0
 * drops the task path, so the results of parallel calls came back in task-id (random) order. This
 * saver keeps the path in an extra `task_path` column (added to an existing file on open; older
 * rows sort first, as LangGraph specifies) and sorts `pendingWrites` by it. It also prepares its
 * write statements once (`SqliteSaver.putWrites` compiles its SQL on every call: a hot path).
 */
export async function openOrderedSqliteSaver(path: string): Promise<SqliteSaver> {
  // Imported here: better-sqlite3 is native, and importing a module never starts work.
  const { SqliteSaver: Base } = await importSqlitePackages();

  class OrderedSqliteSaver extends Base {
    #insertOrIgnore: Statement | undefined;
    #insertOrReplace: Statement | undefined;
    #insertMany: ((rows: unknown[][], replace: boolean) => void) | undefined;
    #paths: Statement | undefined;

    override setup(): void {
      const first = !this.isSetup;
      super.setup();
      if (!first) return;
      const db = this.db as unknown as SqliteDatabase;
      const columns = db.prepare('PRAGMA table_info(writes)').all() as Array<{ name: string }>;
      if (!columns.some((column) => column.name === 'task_path'))
        db.exec(`ALTER TABLE writes ADD COLUMN task_path TEXT NOT NULL DEFAULT ''`);
      const insert = (verb: string) =>
        db.prepare(
          `INSERT ${verb} INTO writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, value, task_path) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        );
      this.#insertOrIgnore = insert('OR IGNORE');
      this.#insertOrReplace = insert('OR REPLACE');
      this.#insertMany = db.transaction((rows: unknown[][], replace: boolean) => {
        const statement = replace ? this.#insertOrReplace! : this.#insertOrIgnore!;
        for (const row of rows) statement.run(...row);
      });
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
      this.setup();
      const { thread_id, checkpoint_ns = '', checkpoint_id } = config.configurable ?? {};
      if (thread_id === undefined || checkpoint_id === undefined)
        throw new Error('putWrites needs thread_id and checkpoint_id in config.configurable.');
      // As SqliteSaver does: special writes (errors, interrupts) replace, others never do.
      const special = WRITES_IDX_MAP as Record<string, number>;
      const replace = writes.every(([channel]) => channel in special);
      const rows = await Promise.all(
        writes.map(async ([channel, value], idx) => {
          const [type, serialized] = await this.serde.dumpsTyped(value);
          return [
            thread_id,
            checkpoint_ns,
            checkpoint_id,
            taskId,
            special[channel] ?? idx,
            channel,
            type,
            serialized,
            taskPath ?? '',
          ];
        }),
      );
      this.#insertMany!(rows, replace);
    }

    override async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
      return withOrderedPendingWrites(
        await super.getTuple(config),
        ({ thread_id, checkpoint_ns, checkpoint_id }) =>
          this.#paths!.all(thread_id, checkpoint_ns, checkpoint_id) as TaskPathRow[],
      );
    }
  }

  // `fromConnString` opens the file (creating it); the subclass takes over its connection.
  return new OrderedSqliteSaver(Base.fromConnString(path).db);
}

/** The packages `type: sqlite` needs, as a consumer installs them (optional peers). */
const SQLITE_INSTALL = 'npm install @langchain/langgraph-checkpoint-sqlite better-sqlite3';

/**
 * The SQLite saver package, or `CONFIG_INVALID` naming the missing package and the install
 * line. SQLite is an optional peer so that library use without it (the adapter, memory or
 * Postgres checkpoints) installs no native module; the saver statically imports better-sqlite3,
 * so either missing package surfaces here.
 */
async function importSqlitePackages(): Promise<{ SqliteSaver: typeof SqliteSaver }> {
  try {
    return await import('@langchain/langgraph-checkpoint-sqlite');
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code;
    if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') throw error;
    const missing =
      /Cannot find (?:package|module) '([^']+)'/.exec(errorMessage(error))?.[1] ??
      '@langchain/langgraph-checkpoint-sqlite';
    throw new AgentsError(
      AgentsErrorCode.ConfigInvalid,
      `checkpointer type "sqlite" needs the package ${missing}, which is not installed; run \`${SQLITE_INSTALL}\` in the project (they are optional peers, so library use without SQLite installs no native module), or use checkpointer type "memory" or "postgres".`,
      { cause: error, details: { package: missing } },
    );
  }
}
