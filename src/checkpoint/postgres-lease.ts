import { createHash } from 'node:crypto';
import { hostname } from 'node:os';
import type * as PgModule from 'pg';
import { AgentsError, AgentsErrorCode, errorMessage } from '../errors.js';
import { redactUrl } from '../redact.js';
import type { ThreadLease } from './backend.js';

/** Options of {@link acquireThreadLease}. */
export interface AcquireThreadLeaseOptions {
  /** The Postgres URL of the checkpointer (`checkpointer.url`). */
  url: string;
  /** The project id, part of the lock key (see {@link threadLeaseKey}). */
  project?: string;
  actor: string;
  threadId: string;
  signal?: AbortSignal;
}

/**
 * The advisory lock key of a thread: 64 bits of sha256 over a fixed prefix, the project (when
 * known: two projects' threads of one name are two leases), actor and thread.
 */
export function threadLeaseKey(actor: string, threadId: string, project?: string): bigint {
  const scope = project === undefined ? '' : `${project}\0`;
  const digest = createHash('sha256')
    .update(`agents-thread-lease\0${scope}${actor}\0${threadId}`)
    .digest();
  return digest.readBigInt64BE(0);
}

/**
 * Takes the lease of one thread in Postgres, so two workers never run (or roll back) the same
 * thread at once: a session advisory lock (`pg_try_advisory_lock`) held on a connection of its
 * own for as long as the lease lives. Postgres drops the lock when that connection ends, so a
 * worker that crashes or is killed frees its threads as soon as its socket closes (a worker cut
 * off by the network: when TCP keepalive gives up). Never waits: a thread held elsewhere fails
 * at once with `RUN_ACTIVE`, naming the thread and the holder (its host and pid, from
 * `pg_stat_activity`). Throws `CONFIG_INVALID` when Postgres cannot be reached.
 */
export async function acquireThreadLease(options: AcquireThreadLeaseOptions): Promise<ThreadLease> {
  const { actor, threadId, signal } = options;
  signal?.throwIfAborted();
  const pg = await importPg();
  // application_name is how the holder is named to the worker that is refused (max 63 bytes).
  const holder = `agents ${hostname().slice(0, 30)} pid ${process.pid}`;
  const client = new pg.default.Client({
    connectionString: options.url,
    application_name: holder,
    keepAlive: true,
  });
  // A dropped connection means the lease is gone; the error must not crash the process.
  let lost: unknown;
  client.on('error', (error: unknown) => {
    lost = error;
  });
  try {
    await client.connect();
  } catch (error) {
    await client.end().catch(() => undefined);
    throw new AgentsError(
      AgentsErrorCode.ConfigInvalid,
      `Cannot take the lease of thread "${threadId}": Postgres at ${redactUrl(options.url, { keepUsername: true, query: 'secret' })} is unreachable (${errorMessage(error)}). Check checkpointer.url.`,
      { cause: error, details: { threadId, actor } },
    );
  }
  const key = threadLeaseKey(actor, threadId, options.project).toString();
  try {
    const taken = await client.query<{ ok: boolean }>(
      'SELECT pg_try_advisory_lock($1::bigint) AS ok',
      [key],
    );
    if (taken.rows[0]?.ok !== true) {
      const other = await holderOf(client, key);
      throw new AgentsError(
        AgentsErrorCode.RunActive,
        `Thread "${threadId}" of actor "${actor}" is held by another worker (${other ?? 'holder unknown'}): it is running or being rolled back there. Wait for it to finish, then retry.`,
        { details: { threadId, actor, holder: other ?? null } },
      );
    }
  } catch (error) {
    await client.end().catch(() => undefined);
    throw error;
  }
  let releasing: Promise<void> | undefined;
  const release = (): Promise<void> =>
    (releasing ??= (async () => {
      // Ending the session drops its advisory locks; an explicit unlock first is cheap and
      // frees the thread even if `end()` is slow to close the socket.
      if (lost === undefined) {
        await client.query('SELECT pg_advisory_unlock($1::bigint)', [key]).catch(() => undefined);
      }
      await client.end().catch(() => undefined);
    })());
  return { actor, threadId, holder, release, [Symbol.asyncDispose]: release };
}

/** Who holds the advisory lock `key`: the `application_name` and address of its session. */
async function holderOf(client: PgModule.Client, key: string): Promise<string | undefined> {
  // A bigint advisory lock shows in pg_locks as classid (high 32 bits) and objid (low 32 bits).
  const big = BigInt.asUintN(64, BigInt(key));
  const classid = (big >> 32n).toString();
  const objid = (big & 0xffffffffn).toString();
  const result = await client
    .query<{ application_name: string | null; client_addr: string | null; pid: number }>(
      `SELECT a.application_name, host(a.client_addr) AS client_addr, a.pid
         FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
        WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
          AND l.classid = $1::oid AND l.objid = $2::oid
        LIMIT 1`,
      [classid, objid],
    )
    .catch(() => undefined);
  const row = result?.rows[0];
  if (row === undefined) return undefined;
  const name =
    row.application_name !== null && row.application_name !== ''
      ? row.application_name
      : 'a client';
  return `${name}${row.client_addr === null ? '' : ` from ${row.client_addr}`}, server pid ${row.pid}`;
}

async function importPg(): Promise<typeof PgModule> {
  try {
    return await import('pg');
  } catch (error) {
    throw new AgentsError(
      AgentsErrorCode.ConfigInvalid,
      'The thread lease of a Postgres checkpointer needs the package pg, which is not installed; run `npm install pg` in the project (an optional peer).',
      { cause: error, details: { package: 'pg' } },
    );
  }
}
