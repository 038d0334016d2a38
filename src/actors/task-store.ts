import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import {
  BaseStore,
  InMemoryStore,
  type Item,
  type Operation,
  type OperationResults,
} from '@langchain/langgraph';
import { AgentsError, AgentsErrorCode, errorMessage } from '../errors.js';

/*
 * The LangGraph store an actor's graph is compiled with (issue 38, item 11). It holds what a
 * resumed run must find again outside the checkpoints: the MCP task a tool call became
 * (`src/mcp/tasks.ts` notes it before polling), so a run killed or paused mid-task polls the same
 * task on `--continue` instead of sending `tools/call` again. It lives where the checkpoints do:
 * a SQLite file beside a SQLite checkpoint file, Postgres tables beside Postgres checkpoints,
 * memory beside memory. Every key is under the project and the actor, so two projects or actors
 * sharing one database never read each other's tasks with the same thread id.
 */

/** Where the store lives; from the actor's `checkpointer:` settings. */
export type ActorStoreLocation =
  { type: 'sqlite'; file: string } | { type: 'postgres'; url: string } | { type: 'memory' };

/** A store the actor owns, and how to release it. */
export interface ActorStore {
  store: BaseStore;
  close(): Promise<void>;
}

/** Opens the store at `location`, its keys scoped under `[project, actor]`. */
export async function openActorStore(
  location: ActorStoreLocation,
  scope: { project: string; actor: string },
): Promise<ActorStore> {
  const opened = await openBase(location);
  return {
    store: new ScopedStore(opened.store, [scope.project, scope.actor]),
    close: () => opened.close(),
  };
}

async function openBase(location: ActorStoreLocation): Promise<ActorStore> {
  if (location.type === 'memory') return { store: new InMemoryStore(), close: async () => {} };
  if (location.type === 'postgres') {
    const { PostgresStore } = await import('@langchain/langgraph-checkpoint-postgres/store');
    const store = PostgresStore.fromConnString(location.url);
    // Workers opening a fresh database at once race on its migrations (a duplicate key in
    // store_migrations, code 23505: the other worker ran that step); the next try skips it.
    for (let attempt = 1; ; attempt++) {
      try {
        await store.setup();
        break;
      } catch (error) {
        if ((error as { code?: unknown }).code !== '23505' || attempt >= 5) throw error;
      }
    }
    return { store, close: () => store.stop() as unknown as Promise<void> };
  }
  const file = location.file;
  try {
    await mkdir(dirname(file), { recursive: true });
    // @ts-expect-error better-sqlite3 ships no types; the few calls used are typed by `Db`.
    const { default: Database } = (await import('better-sqlite3')) as {
      default: new (file: string) => Db;
    };
    const db = new Database(file);
    db.pragma('journal_mode = WAL');
    db.exec(
      'CREATE TABLE IF NOT EXISTS store (namespace TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL, PRIMARY KEY (namespace, key))',
    );
    const store = new SqliteKeyStore(db);
    return { store, close: async () => void (db.open && db.close()) };
  } catch (error) {
    throw new AgentsError(
      AgentsErrorCode.ConfigInvalid,
      `Cannot open the actor's task store "${file}" (${errorMessage(error)}): move the file aside to start without noted tasks (a run paused in an MCP task then calls the tool again).`,
      { cause: error, details: { path: file } },
    );
  }
}

/** The part of a better-sqlite3 database this store uses. */
interface Db {
  readonly open: boolean;
  pragma(text: string): unknown;
  exec(sql: string): unknown;
  prepare(sql: string): {
    run(...values: string[]): unknown;
    get(...values: string[]): unknown;
  };
  close(): void;
}
type Row = { value: string; created_at: string; updated_at: string } | undefined;

/** Get and put by namespace and key, in one SQLite file (all the task ledger asks of a store). */
class SqliteKeyStore extends BaseStore {
  readonly #get;
  readonly #put;
  readonly #delete;
  constructor(db: Db) {
    super();
    this.#get = db.prepare(
      'SELECT value, created_at, updated_at FROM store WHERE namespace = ? AND key = ?',
    );
    this.#put = db.prepare(
      'INSERT INTO store (namespace, key, value, created_at, updated_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (namespace, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at',
    );
    this.#delete = db.prepare('DELETE FROM store WHERE namespace = ? AND key = ?');
  }

  async batch<Op extends Operation[]>(operations: Op): Promise<OperationResults<Op>> {
    return operations.map((op) => {
      if (!('key' in op) || !('namespace' in op)) {
        throw new AgentsError(
          AgentsErrorCode.InvalidArguments,
          "The actor's task store answers get and put only (no search or namespace listing).",
        );
      }
      const namespace = JSON.stringify(op.namespace);
      if ('value' in op) {
        const now = new Date().toISOString();
        if (op.value === null) this.#delete.run(namespace, op.key);
        else this.#put.run(namespace, op.key, JSON.stringify(op.value), now, now);
        return undefined;
      }
      const row = this.#get.get(namespace, op.key) as Row;
      if (row === undefined) return null;
      const item: Item = {
        namespace: op.namespace,
        key: op.key,
        value: JSON.parse(row.value) as Record<string, unknown>,
        createdAt: new Date(row.created_at),
        updatedAt: new Date(row.updated_at),
      };
      return item;
    }) as OperationResults<Op>;
  }
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

/**
 * Where an actor's store goes for its checkpoint store: beside a checkpoint file
 * (`<file>.tasks`), in the same Postgres database, else in memory (a caller's saver or memory
 * checkpoints: a pause within the process still resumes its task).
 */
export function actorStoreLocation(
  backend: { localFile?(settings: never, cwd: string): string } | undefined,
  settings: { type: string; url?: unknown } | undefined,
  projectDir: string,
): ActorStoreLocation {
  if (backend === undefined || settings === undefined) return { type: 'memory' };
  const file = backend.localFile?.(settings as never, projectDir);
  if (file !== undefined) return { type: 'sqlite', file: `${file}.tasks` };
  if (settings.type === 'postgres' && typeof settings.url === 'string') {
    return { type: 'postgres', url: settings.url };
  }
  return { type: 'memory' };
}
