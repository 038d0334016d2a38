import { randomInt } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import type { BaseCheckpointSaver } from '@langchain/langgraph';
import type { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import type * as PgModule from 'pg';
import type { z } from 'zod';
import type { CheckpointerSettingsSchema } from '../config/schemas.js';
import { AgentsError, AgentsErrorCode, errorMessage } from '../errors.js';
import { redactUrl } from '../redact.js';

/** Checkpointer settings as users write them (`actor.checkpointer`); `sqlite` is the default. */
export type CheckpointerSettings = z.input<typeof CheckpointerSettingsSchema>;

/** A LangGraph checkpoint saver plus the one way to release what it holds. */
export interface Checkpointer extends AsyncDisposable {
  /** Pass to `graph.compile({ checkpointer: saver })`. */
  readonly saver: BaseCheckpointSaver;
  readonly type: 'sqlite' | 'postgres' | 'memory';
  /** Closes the SQLite file / Postgres pool. Idempotent. */
  close(): Promise<void>;
}

/** Options of {@link createCheckpointer}. */
export interface CreateCheckpointerOptions {
  /** Folder that a relative SQLite path is resolved against. Default `process.cwd()`. */
  cwd?: string;
  /** Postgres schema for the checkpoint tables. Default `public`. */
  postgresSchema?: string;
  signal?: AbortSignal;
}

const DEFAULT_SQLITE_PATH = '.agents/checkpoints.sqlite';

/**
 * Hides the secrets of a connection URL before it goes into an error message: the password, and
 * secret-looking query values (`?password=...`, which `pg` also reads). User, host and other
 * parameters (e.g. `sslmode`) stay visible, since they are what a user checks first.
 */
export function redactConnectionUrl(url: string): string {
  return redactUrl(url, { keepUsername: true, query: 'secret' });
}

/**
 * Opens the checkpoint store an actor's settings name.
 *
 * - `{ type: 'sqlite', path }` (default): a file, created with its folder when missing;
 *   relative paths resolve against `options.cwd`. Survives restarts.
 * - `{ type: 'postgres', url }`: runs `setup()` (creates tables) before returning.
 * - `{ type: 'memory' }`: `MemorySaver`, for tests.
 *
 * The caller owns the result and must `close()` it. Throws `CONFIG_INVALID` when the store
 * cannot be opened (with the path or the redacted URL).
 */
export async function createCheckpointer(
  settings: CheckpointerSettings = { type: 'sqlite' },
  options: CreateCheckpointerOptions = {},
): Promise<Checkpointer> {
  options.signal?.throwIfAborted();
  if (settings.type === 'memory') {
    // Imported on use: LangGraph is heavy, and reading a config must not load it.
    const { MemorySaver } = await import('@langchain/langgraph');
    return wrap('memory', new MemorySaver(), async () => {});
  }
  if (settings.type === 'sqlite') {
    const path = resolve(options.cwd ?? process.cwd(), settings.path ?? DEFAULT_SQLITE_PATH);
    try {
      await mkdir(dirname(path), { recursive: true });
      // Imported lazily: better-sqlite3 is native, and importing a module never starts work.
      const { openOrderedSqliteSaver } = await import('./sqlite-saver.js');
      const saver = await openOrderedSqliteSaver(path);
      try {
        // The saver touches the file only on first use; a broken file must fail here, named.
        saver.db.prepare('SELECT count(*) FROM sqlite_master').get();
      } catch (error) {
        saver.db.close();
        throw new AgentsError(
          AgentsErrorCode.ConfigInvalid,
          `The checkpoint file "${path}" cannot be read as SQLite (${errorMessage(error)}): it is corrupt or not a checkpoint database. ` +
            `Move it aside (e.g. mv "${path}" "${path}.broken") to start with an empty history, or set checkpointer.path to another file; threads saved in it cannot be resumed.`,
          { cause: error, details: { path } },
        );
      }
      return wrap('sqlite', saver, async () => {
        if (saver.db.open) saver.db.close();
      });
    } catch (error) {
      if (AgentsError.isInstance(error)) throw error;
      throw new AgentsError(
        AgentsErrorCode.ConfigInvalid,
        `Cannot open the SQLite checkpoint file "${path}": ${errorMessage(error)}. Check that the folder is writable, or set checkpointer.path.`,
        { cause: error, details: { path } },
      );
    }
  }
  const redacted = redactConnectionUrl(settings.url);
  let saver: PostgresSaver | undefined;
  const { PostgresSaver: PostgresSaverClass, pg } = await importPostgresPackages();
  try {
    /**
     * PostgresSaver keys channel blobs by (thread, ns, channel, version) and ignores conflicts,
     * while the base class numbers versions 1, 2, 3... A fork (`updateState` from an older
     * checkpoint) therefore reuses a version the old branch already wrote, and the fork reads the
     * OLD branch's values: rollback would fork the wrong state. Versions here stay numeric and
     * increasing but get a random fraction, so two branches never share one.
     */
    class ForkSafePostgresSaver extends PostgresSaverClass {
      override getNextVersion(current: number | undefined): number {
        const whole = typeof current === 'number' ? Math.floor(current) + 1 : 1;
        return whole + (1 + randomInt(999_998)) / 1_000_000;
      }
    }
    saver = new ForkSafePostgresSaver(
      new pg.default.Pool({ connectionString: settings.url }),
      undefined,
      {
        ...(options.postgresSchema === undefined ? {} : { schema: options.postgresSchema }),
      },
    );
    await saver.setup();
    options.signal?.throwIfAborted();
    const opened = saver;
    return wrap('postgres', opened, () => opened.end());
  } catch (error) {
    await saver?.end().catch(() => {});
    throw new AgentsError(
      AgentsErrorCode.ConfigInvalid,
      `Cannot open the Postgres checkpointer at ${redacted}: ${errorMessage(error)}. Check that the server runs and the URL (checkpointer.url) is right.`,
      { cause: error, details: { url: redacted } },
    );
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

function wrap(
  type: Checkpointer['type'],
  saver: BaseCheckpointSaver,
  closeStore: () => Promise<void>,
): Checkpointer {
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => (closing ??= closeStore());
  return { type, saver, close, [Symbol.asyncDispose]: close };
}

/** The `durability` values LangGraph accepts on `invoke`/`stream`. */
export type Durability = 'exit' | 'async' | 'sync';

/**
 * Refuses `durability: 'exit'`: it persists only the final checkpoint of a run, so there would
 * be nothing to roll back to. Call it wherever this library starts a run. Throws
 * `CONFIG_INVALID`.
 */
export function assertRollbackDurability(
  options: { durability?: Durability | undefined } | undefined,
): void {
  if (options?.durability === 'exit') {
    throw new AgentsError(
      AgentsErrorCode.ConfigInvalid,
      'durability "exit" keeps only the last checkpoint of a run, so rollback to intermediate steps is impossible. Use "async" (the default) or "sync".',
      { details: { durability: 'exit' } },
    );
  }
}
