import { randomInt } from 'node:crypto';
import type { RunnableConfig } from '@langchain/core/runnables';
import type { CheckpointTuple, PendingWrite } from '@langchain/langgraph-checkpoint';
import type { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import type * as PgModule from 'pg';
import { z } from 'zod';
import { AgentsError, AgentsErrorCode, errorMessage } from '../errors.js';
import { redactUrl } from '../redact.js';
import { checkpointerOf } from './backend.js';
import type { TaskPathRow } from './pending-writes.js';
import type { CheckpointBackend, OpenedStore } from './backend.js';
import { acquireThreadLease } from './postgres-lease.js';
import { adoptLegacyPostgresThread } from './postgres-legacy-thread.js';
import { withThreadNamespace, type ThreadScope } from './thread-namespace.js';

const PostgresSettingsSchema = z.strictObject({ type: z.literal('postgres'), url: z.string() });

type PostgresSettings = z.output<typeof PostgresSettingsSchema>;

/** The advisory lock that serializes table setup (any fixed 64-bit number of our own). */
const SETUP_LOCK_KEY = '7301526620390816001';

/**
 * Hides the secrets of a connection URL before it goes into an error message: the password, and
 * secret-looking query values (`?password=...`, which `pg` also reads). User, host and other
 * parameters (e.g. `sslmode`) stay visible, since they are what a user checks first.
 */
export function redactConnectionUrl(url: string): string {
  return redactUrl(url, { keepUsername: true, query: 'secret' });
}

/**
 * `{ type: 'postgres', url }`: runs `setup()` (creates tables) on open. Shared by several
 * workers, so it leases threads (a Postgres advisory lock, see `postgres-lease.ts`).
 */
export const postgresCheckpointBackend = {
  type: 'postgres',
  schema: PostgresSettingsSchema,
  ephemeral: false,
  // Whether the database has the thread is only known by connecting: removal asks it.
  locate: (settings: PostgresSettings) => ({
    name: redactConnectionUrl(settings.url),
    exists: true,
  }),
  async open(settings: PostgresSettings, options = {}) {
    options.signal?.throwIfAborted();
    const redacted = redactConnectionUrl(settings.url);
    let saver: PostgresSaver | undefined;
    const { PostgresSaver: PostgresSaverClass, pg } = await importPostgresPackages();
    // Imported on use, like the saver: reading a config must not load LangGraph.
    const { withOrderedPendingWrites } = await import('./pending-writes.js');
    try {
      const pool = new pg.default.Pool({ connectionString: settings.url });
      const writesTable = `"${(options.postgresSchema ?? 'public').replaceAll('"', '""')}".checkpoint_writes`;
      /**
       * Two fixes over PostgresSaver 1.0, both covered by the checkpointer contract suite:
       *
       * - Fork versions. It keys channel blobs by (thread, ns, channel, version) and ignores
       *   conflicts, while the base class numbers versions 1, 2, 3... A fork (`updateState` from
       *   an older checkpoint) therefore reused a version the old branch already wrote, and the
       *   fork read the OLD branch's values: rollback would fork the wrong state. Versions here
       *   stay numeric and increasing but get a random fraction, so two branches never share one.
       * - Write order. It drops the task path and returns a superstep's pending writes by task id
       *   (random), while LangGraph replays them in (task path, task id, index) order. The path is
       *   kept in an extra `task_path` column (added on setup; older rows sort first, as LangGraph
       *   specifies) and `getTuple` sorts by it, as the SQLite saver does.
       */
      class OrderedForkSafePostgresSaver extends PostgresSaverClass {
        override getNextVersion(current: number | undefined): number {
          const whole = typeof current === 'number' ? Math.floor(current) + 1 : 1;
          return whole + (1 + randomInt(999_998)) / 1_000_000;
        }

        override async setup(): Promise<void> {
          // Two workers opening a fresh database at once raced on its CREATE ... IF NOT EXISTS
          // (duplicate key in pg_namespace / pg_type, so one failed to open): one setup at a
          // time per database, under a session advisory lock.
          const client = await pool.connect();
          try {
            await client.query('SELECT pg_advisory_lock($1::bigint)', [SETUP_LOCK_KEY]);
            try {
              await super.setup();
              await pool.query(
                `ALTER TABLE ${writesTable} ADD COLUMN IF NOT EXISTS task_path TEXT NOT NULL DEFAULT ''`,
              );
            } finally {
              await client.query('SELECT pg_advisory_unlock($1::bigint)', [SETUP_LOCK_KEY]);
            }
          } finally {
            // Closed rather than pooled: a failed unlock must not leave the lock held.
            client.release(true);
          }
        }

        override async putWrites(
          config: RunnableConfig,
          writes: PendingWrite[],
          taskId: string,
          taskPath?: string,
        ): Promise<void> {
          await super.putWrites(config, writes, taskId);
          if (taskPath === undefined || taskPath === '') return;
          // A task's path never changes, so setting it after the insert is idempotent.
          const { thread_id, checkpoint_ns = '', checkpoint_id } = config.configurable ?? {};
          await pool.query(
            `UPDATE ${writesTable} SET task_path = $1 WHERE thread_id = $2 AND checkpoint_ns = $3 AND checkpoint_id = $4 AND task_id = $5`,
            [taskPath, thread_id, checkpoint_ns, checkpoint_id, taskId],
          );
        }

        override async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
          return withOrderedPendingWrites(
            await super.getTuple(config),
            async ({ thread_id, checkpoint_ns, checkpoint_id }) =>
              (
                await pool.query<TaskPathRow>(
                  `SELECT DISTINCT task_id, task_path FROM ${writesTable} WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id = $3`,
                  [thread_id, checkpoint_ns, checkpoint_id],
                )
              ).rows,
          );
        }
      }
      saver = new OrderedForkSafePostgresSaver(pool, undefined, {
        ...(options.postgresSchema === undefined ? {} : { schema: options.postgresSchema }),
      });
      await saver.setup();
      options.signal?.throwIfAborted();
      const opened = saver;
      // Shared by projects and actors: each one's thread ids get a namespace of their own.
      const scope = options.threadScope;
      const schema = options.postgresSchema ?? 'public';
      const scoped =
        scope === undefined
          ? opened
          : withThreadNamespace(opened, scope, {
              adoptLegacyThread: (legacyId, storedId) =>
                adoptLegacyPostgresThread(pool, schema, legacyId, storedId),
            });
      return checkpointerOf('postgres', scoped, () => opened.end());
    } catch (error) {
      await saver?.end().catch(() => {});
      throw new AgentsError(
        AgentsErrorCode.ConfigInvalid,
        `Cannot open the Postgres checkpointer at ${redacted}: ${errorMessage(error)}. Check that the server runs and the URL (checkpointer.url) is right.`,
        { cause: error, details: { url: redacted } },
      );
    }
  },
  lease: (settings: PostgresSettings, request) =>
    acquireThreadLease({ ...request, url: settings.url }),
  threadOwners: (settings: PostgresSettings, threadId: string) =>
    threadOwnersOf(settings.url, threadId),
  async openStore(settings: PostgresSettings): Promise<OpenedStore> {
    await importPostgresPackages();
    const { PostgresStore } = await import('@langchain/langgraph-checkpoint-postgres/store');
    const store = PostgresStore.fromConnString(settings.url);
    // Workers opening a fresh database at once race on its migrations (a duplicate key in
    // store_migrations, SQLSTATE 23505: the other worker ran that step); the next try skips it.
    for (let attempt = 1; ; attempt++) {
      try {
        await store.setup();
        break;
      } catch (error) {
        if ((error as { code?: unknown }).code !== '23505' || attempt >= 5) throw error;
      }
    }
    return { store, close: () => store.stop() as unknown as Promise<void> };
  },
} satisfies CheckpointBackend<PostgresSettings>;

/** Postgres's SQLSTATE for a table that does not exist. */
const UNDEFINED_TABLE = '42P01';

/** One extra connection: the rows whose stored thread id ends in `/<threadId>` name its owners. */
async function threadOwnersOf(url: string, threadId: string): Promise<ThreadScope[]> {
  const { pg } = await importPostgresPackages();
  const client = new pg.default.Client({ connectionString: url });
  await client.connect();
  try {
    const suffix = `/${threadId}`;
    const pattern = `%${suffix.replace(/[\\%_]/g, (match) => `\\${match}`)}`;
    const { rows } = await client
      .query<{ thread_id: string }>(
        "SELECT DISTINCT thread_id FROM checkpoints WHERE thread_id LIKE $1 ESCAPE '\\' LIMIT 20",
        [pattern],
      )
      .catch((error: unknown) => {
        // A fresh database: the checkpointer makes its tables after this check; no thread yet.
        if ((error as { code?: unknown }).code === UNDEFINED_TABLE) return { rows: [] };
        throw error;
      });
    return rows.flatMap(({ thread_id: id }) => {
      // `<project>/<actor>`: the actor has no `/` (a file name), a project id may.
      const owner = id.slice(0, -suffix.length);
      const slash = owner.lastIndexOf('/');
      return slash <= 0 ? [] : [{ project: owner.slice(0, slash), actor: owner.slice(slash + 1) }];
    });
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** The optional peers behind `type: postgres`; a missing one is named, not blamed on the URL. */
async function importPostgresPackages(): Promise<{
  PostgresSaver: typeof PostgresSaver;
  pg: typeof PgModule;
}> {
  const load = async <T>(name: string, importer: () => Promise<T>): Promise<T> => {
    try {
      return await importer();
    } catch (error) {
      if (!isModuleNotFound(error)) throw error;
      throw new AgentsError(
        AgentsErrorCode.ConfigInvalid,
        `checkpointer type "postgres" needs the package ${name}, which is not installed; run \`npm install @langchain/langgraph-checkpoint-postgres pg\` in the project (they are optional peers).`,
        { cause: error, details: { package: name } },
      );
    }
  };
  const { PostgresSaver: saverClass } = await load(
    '@langchain/langgraph-checkpoint-postgres',
    () => import('@langchain/langgraph-checkpoint-postgres'),
  );
  const pg = await load('pg', () => import('pg'));
  return { PostgresSaver: saverClass, pg };
}

function isModuleNotFound(error: unknown): boolean {
  return (
    typeof error === 'object' &&
    error !== null &&
    'code' in error &&
    (error.code === 'ERR_MODULE_NOT_FOUND' || error.code === 'MODULE_NOT_FOUND')
  );
}
