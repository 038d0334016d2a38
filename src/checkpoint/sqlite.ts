import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { z } from 'zod';
import { AgentsError, AgentsErrorCode, errorMessage } from '../errors.js';
import { checkpointerOf } from './backend.js';
import type { CheckpointBackend, OpenedStore } from './backend.js';

const DEFAULT_SQLITE_PATH = '.agents/checkpoints.sqlite';

const SqliteSettingsSchema = z.strictObject({
  type: z.literal('sqlite'),
  path: z.string().default(DEFAULT_SQLITE_PATH),
});

type SqliteSettings = z.input<typeof SqliteSettingsSchema>;

const pathOf = (settings: SqliteSettings, cwd: string | undefined): string =>
  resolve(cwd ?? process.cwd(), settings.path ?? DEFAULT_SQLITE_PATH);

/**
 * `{ type: 'sqlite', path }` (the default): a file, created with its folder when missing;
 * relative paths resolve against `cwd`. Survives restarts; one process at a time (no lease).
 */
export const sqliteCheckpointBackend = {
  type: 'sqlite',
  schema: SqliteSettingsSchema,
  ephemeral: false,
  localFile: (settings: SqliteSettings, cwd: string) => pathOf(settings, cwd),
  locate(settings: SqliteSettings, cwd: string) {
    const name = pathOf(settings, cwd);
    return { name, exists: existsSync(name) };
  },
  async openStore(settings: SqliteSettings, cwd: string): Promise<OpenedStore> {
    const { openSqliteKeyStore } = await import('./sqlite-key-store.js');
    return openSqliteKeyStore(`${pathOf(settings, cwd)}.tasks`);
  },
  async open(settings: SqliteSettings, options = {}) {
    options.signal?.throwIfAborted();
    const path = pathOf(settings, options.cwd);
    try {
      await mkdir(dirname(path), { recursive: true });
      // Imported lazily: better-sqlite3 is native (and optional), and importing a module never
      // starts work.
      const { openOrderedSqliteSaver } = await import('./sqlite-ordered-saver.js');
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
      return checkpointerOf('sqlite', saver, async () => {
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
  },
} satisfies CheckpointBackend<SqliteSettings & { type: 'sqlite' }>;
