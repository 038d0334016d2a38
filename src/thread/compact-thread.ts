import type { RunnableConfig } from '@langchain/core/runnables';
import { DeltaSnapshot } from '@langchain/langgraph-checkpoint';
import type { BaseCheckpointSaver } from '@langchain/langgraph-checkpoint';
import { AgentsError, AgentsErrorCode } from '../errors.js';
import type { CheckpointedGraph } from './checkpointed-graph.js';

/** The better-sqlite3 calls used here (its type package is not a dependency). */
interface Statement {
  run(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
  get(...params: unknown[]): unknown;
}
interface SqliteDatabase {
  prepare(sql: string): Statement;
  exec(sql: string): unknown;
  transaction<T extends unknown[]>(work: (...args: T) => void): (...args: T) => void;
}

/** Options of {@link compactThread}. */
export interface CompactThreadOptions {
  /** The thread's graph (its state shape rebuilds the kept checkpoints' values). */
  graph: CheckpointedGraph;
  /** The graph's checkpointer: an SQLite saver (`SqliteSaver`, as `createCheckpointer` opens). */
  saver: BaseCheckpointSaver;
  threadId: string;
  /** Newest checkpoints to keep (all branches, by creation); at least 1. */
  keep: number;
  /** Also give the freed pages back to the file system (`VACUUM`; rewrites the whole file). */
  vacuum?: boolean;
}

/** What {@link compactThread} did. */
export interface CompactThreadResult {
  /** Checkpoints before and after. */
  before: number;
  after: number;
  /** Kept checkpoints whose parent went away; their full state was written into them. */
  reseeded: number;
  /** The SQLite file's size in bytes (page count × page size) before and after. */
  bytesBefore: number;
  bytesAfter: number;
}

function sqliteOf(saver: BaseCheckpointSaver): SqliteDatabase {
  const db: unknown = (saver as { db?: unknown }).db;
  if (typeof db === 'object' && db !== null && typeof (db as SqliteDatabase).prepare === 'function')
    return db as SqliteDatabase;
  throw new AgentsError(
    AgentsErrorCode.InvalidArguments,
    'Compacting a thread needs the SQLite checkpointer; for Postgres delete old rows by checkpoint_id, or drop a whole thread with saver.deleteThread(threadId).',
    { details: {} },
  );
}

function fileBytes(db: SqliteDatabase): number {
  const pages = db.prepare('PRAGMA page_count').get() as { page_count: number };
  const size = db.prepare('PRAGMA page_size').get() as { page_size: number };
  return pages.page_count * size.page_size;
}

/**
 * Drops a thread's old checkpoints, keeping the newest `keep` (of every branch) and what they
 * need to be read, resumed and rolled back to.
 *
 * Why the reseeding: messages and change records are delta channels (each stored once, in the
 * step that wrote it), so a checkpoint's state is rebuilt from its ancestors' writes. A kept
 * checkpoint whose parent is dropped therefore gets its full state written into it as a
 * LangGraph `DeltaSnapshot` and becomes a root; later checkpoints build on it as before. The
 * sandbox snapshots (git) are not touched: rollback to a kept checkpoint restores its files.
 *
 * Refuses (`INVALID_ARGUMENTS`) a saver that is not SQLite or a `keep` below 1; throws
 * `CHECKPOINT_NOT_FOUND` for a thread without checkpoints. Run it while the thread is idle (the
 * CLI holds the thread's run lock).
 */
export async function compactThread(options: CompactThreadOptions): Promise<CompactThreadResult> {
  const { graph, saver, threadId, keep } = options;
  if (!Number.isInteger(keep) || keep < 1) {
    throw new AgentsError(
      AgentsErrorCode.InvalidArguments,
      `keep must be a whole number of checkpoints, at least 1 (got ${keep}).`,
      { details: { keep } },
    );
  }
  const db = sqliteOf(saver);
  const rows = db
    .prepare(
      `SELECT checkpoint_id, parent_checkpoint_id FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = '' ORDER BY checkpoint_id DESC`,
    )
    .all(threadId) as Array<{ checkpoint_id: string; parent_checkpoint_id: string | null }>;
  if (rows.length === 0) {
    throw new AgentsError(
      AgentsErrorCode.CheckpointNotFound,
      `Thread "${threadId}" has no checkpoints; check the thread id.`,
      { details: { threadId } },
    );
  }
  const bytesBefore = fileBytes(db);
  if (rows.length <= keep) {
    return {
      before: rows.length,
      after: rows.length,
      reseeded: 0,
      bytesBefore,
      bytesAfter: bytesBefore,
    };
  }
  const kept = rows.slice(0, keep);
  const keptIds = new Set(kept.map((row) => row.checkpoint_id));
  // Checkpoint ids are uuid6 (time-ordered): everything older than the oldest kept one goes.
  const oldestKept = kept.at(-1)!.checkpoint_id;
  const boundary = kept.filter(
    (row) => row.parent_checkpoint_id !== null && !keptIds.has(row.parent_checkpoint_id),
  );

  // Read every boundary's full state before deleting anything it is rebuilt from.
  const reseeds: Array<{ id: string; type: string; blob: Uint8Array | string }> = [];
  for (const row of boundary) {
    const config: RunnableConfig = {
      configurable: { thread_id: threadId, checkpoint_ns: '', checkpoint_id: row.checkpoint_id },
    };
    const [snapshot, tuple] = await Promise.all([graph.getState(config), saver.getTuple(config)]);
    if (tuple === undefined) continue;
    const checkpoint = {
      ...tuple.checkpoint,
      channel_values: { ...tuple.checkpoint.channel_values },
    };
    const values = (snapshot.values ?? {}) as Record<string, unknown>;
    for (const [channel, value] of Object.entries(values)) {
      // A delta channel has a version but no stored value at a non-snapshot step.
      if (channel in checkpoint.channel_versions && !(channel in checkpoint.channel_values))
        checkpoint.channel_values[channel] = new DeltaSnapshot(value);
    }
    const [type, blob] = await saver.serde.dumpsTyped(checkpoint);
    reseeds.push({ id: row.checkpoint_id, type, blob });
  }

  const reseed = db.prepare(
    `UPDATE checkpoints SET type = ?, checkpoint = ?, parent_checkpoint_id = NULL WHERE thread_id = ? AND checkpoint_ns = '' AND checkpoint_id = ?`,
  );
  const dropCheckpoints = db.prepare(
    `DELETE FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = '' AND checkpoint_id < ?`,
  );
  const dropWrites = db.prepare(
    `DELETE FROM writes WHERE thread_id = ? AND checkpoint_ns = '' AND checkpoint_id < ?`,
  );
  db.transaction(() => {
    for (const item of reseeds) reseed.run(item.type, item.blob, threadId, item.id);
    dropCheckpoints.run(threadId, oldestKept);
    dropWrites.run(threadId, oldestKept);
  })();
  if (options.vacuum === true) {
    db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
    db.exec('VACUUM');
  }
  return {
    before: rows.length,
    after: kept.length,
    reseeded: reseeds.length,
    bytesBefore,
    bytesAfter: fileBytes(db),
  };
}
