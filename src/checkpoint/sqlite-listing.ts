/**
 * A thread's checkpoint listing, kept beside the checkpoints in the SQLite file so that
 * `agents checkpoints` can print it without loading LangGraph (issue 29: start-up is module
 * count). What is stored is what LangGraph's own reader produced (issue 39: one checkpoint
 * reader), with the thread's stamp at the time it was read; a listing is served only while the
 * stamp still matches, so any write to the thread (a run, a rollback, a compaction, another
 * tool) makes the next listing ask LangGraph again, which stores the new one.
 */

/** The few better-sqlite3 calls used here (its type package is not a dependency). */
interface Statement {
  all(...params: unknown[]): unknown[];
  run(...params: unknown[]): unknown;
}
interface Database {
  prepare(sql: string): Statement;
  exec(sql: string): unknown;
  close(): void;
}

const TABLE = 'agents_checkpoint_listing';

/** The listing side table of one SQLite checkpoint file. */
export interface SqliteListingStore {
  /**
   * What the thread's rows are now: their count, newest id and row ids (a replaced or deleted row
   * changes it). Cheap: two index range scans, nothing decoded.
   */
  stamp(threadId: string): string;
  /** The listing stored for the thread while its stamp is still `stamp`; else undefined. */
  read(threadId: string, stamp: string): unknown;
  /** Stores `listing` (JSON) as the thread's listing at `stamp`. Only on a writable store. */
  write(threadId: string, stamp: string, listing: unknown): void;
  close(): void;
}

/**
 * Opens the listing side table of the SQLite checkpoint `file`; undefined when the file does not
 * exist or holds no checkpoint tables (nothing listed from it: the caller asks LangGraph, which
 * says why). `writable` opens it to store a listing (creating the side table).
 */
export async function openSqliteListing(
  file: string,
  options: { writable: boolean },
): Promise<SqliteListingStore | undefined> {
  // better-sqlite3 only (native, a few files); the specifier is a variable: no type package.
  const specifier = 'better-sqlite3';
  const { default: Sqlite } = (await import(specifier)) as {
    default: new (path: string, options: object) => Database;
  };
  let db: Database;
  try {
    db = new Sqlite(file, { readonly: !options.writable, fileMustExist: true });
  } catch {
    return undefined;
  }
  try {
    const tables = new Set(
      (
        db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as Array<{
          name: string;
        }>
      ).map((row) => row.name),
    );
    if (!tables.has('checkpoints') || !tables.has('writes')) {
      db.close();
      return undefined;
    }
    if (options.writable)
      db.exec(
        `CREATE TABLE IF NOT EXISTS ${TABLE} (thread_id TEXT PRIMARY KEY, stamp TEXT NOT NULL, listing TEXT NOT NULL)`,
      );
    const hasListing = options.writable || tables.has(TABLE);
    const checkpoints = db.prepare(
      'SELECT count(*) AS n, max(checkpoint_id) AS last, total(rowid) AS ids FROM checkpoints WHERE thread_id = ?',
    );
    const writes = db.prepare(
      'SELECT count(*) AS n, total(rowid) AS ids FROM writes WHERE thread_id = ?',
    );
    const stored = hasListing
      ? db.prepare(`SELECT stamp, listing FROM ${TABLE} WHERE thread_id = ?`)
      : undefined;
    return {
      stamp(threadId) {
        const rows = checkpoints.all(threadId)[0] as { n: number; last: unknown; ids: number };
        const written = writes.all(threadId)[0] as { n: number; ids: number };
        return JSON.stringify([rows.n, rows.last, rows.ids, written.n, written.ids]);
      },
      read(threadId, stamp) {
        const row = stored?.all(threadId)[0] as { stamp: string; listing: string } | undefined;
        return row?.stamp === stamp ? JSON.parse(row.listing) : undefined;
      },
      write(threadId, stamp, listing) {
        db.prepare(
          `INSERT INTO ${TABLE} (thread_id, stamp, listing) VALUES (?, ?, ?) ON CONFLICT(thread_id) DO UPDATE SET stamp = excluded.stamp, listing = excluded.listing`,
        ).run(threadId, stamp, JSON.stringify(listing));
      },
      close() {
        db.close();
      },
    };
  } catch (error) {
    db.close();
    throw error;
  }
}
