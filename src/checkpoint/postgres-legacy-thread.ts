import { createHash } from 'node:crypto';
import type * as PgModule from 'pg';

/** The tables PostgresSaver keeps a thread's rows in, all keyed by `thread_id`. */
const THREAD_TABLES = ['checkpoints', 'checkpoint_blobs', 'checkpoint_writes'] as const;

/**
 * Moves a thread written before thread ids were namespaced (stored as its bare id, `t1`) to its
 * namespaced id (`<project>/<actor>/t1`), in one transaction, when the namespaced thread has no
 * checkpoint yet: the first project and actor that open a bare thread id after the upgrade
 * adopt its history. (Before namespacing, two projects using one id already wrote into the same
 * rows, so such rows have no single owner to find.) An advisory lock on the pair makes two
 * workers adopting at once harmless: the second finds the rows moved.
 */
export async function adoptLegacyPostgresThread(
  pool: PgModule.Pool,
  schema: string,
  legacyId: string,
  storedId: string,
): Promise<void> {
  const quoted = `"${schema.replaceAll('"', '""')}"`;
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const key = createHash('sha256')
      .update(`agents-thread-adopt\0${legacyId}`)
      .digest()
      .readBigInt64BE(0);
    await client.query('SELECT pg_advisory_xact_lock($1::bigint)', [key.toString()]);
    const present = await client.query(
      `SELECT 1 FROM ${quoted}.checkpoints WHERE thread_id = $1 LIMIT 1`,
      [storedId],
    );
    if (present.rowCount === 0) {
      for (const table of THREAD_TABLES) {
        await client.query(`UPDATE ${quoted}.${table} SET thread_id = $1 WHERE thread_id = $2`, [
          storedId,
          legacyId,
        ]);
      }
    }
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}
