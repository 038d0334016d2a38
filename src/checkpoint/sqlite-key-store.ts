import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { BaseStore, type Item, type Operation, type OperationResults } from '@langchain/langgraph';
import { AgentsError, AgentsErrorCode, errorMessage } from '../errors.js';
import type { OpenedStore } from './backend.js';

/**
 * The LangGraph store beside a SQLite checkpoint file (`<file>.tasks`): get and put by namespace
 * and key, all an actor's task ledger asks (see `actors/task-store.ts`).
 */
export async function openSqliteKeyStore(file: string): Promise<OpenedStore> {
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
