import type { BaseCheckpointSaver } from '@langchain/langgraph';
import { z } from 'zod';
import { AgentsError, AgentsErrorCode } from '../errors.js';
import type { Checkpointer, CheckpointBackend, OpenCheckpointerOptions } from './backend.js';
import { memoryCheckpointBackend } from './memory.js';
import { postgresCheckpointBackend } from './postgres.js';
import { sqliteCheckpointBackend } from './sqlite.js';

/**
 * The checkpoint stores, keyed by `checkpointer.type`. A new store is one file under
 * `src/checkpoint/` and one entry here; the config schema and every caller follow from it.
 */
export const checkpointBackends = {
  sqlite: sqliteCheckpointBackend,
  postgres: postgresCheckpointBackend,
  memory: memoryCheckpointBackend,
} as const;

/** The store names users may write as `checkpointer.type`. */
export type CheckpointBackendType = keyof typeof checkpointBackends;

type Schemas = { [K in CheckpointBackendType]: (typeof checkpointBackends)[K]['schema'] };
type SettingsSchema = Schemas[CheckpointBackendType];

/**
 * `checkpointer:` of an actor's config: one of the stores' settings, chosen by `type`; derived
 * from the table, so a new store's entry is its schema's place here too.
 */
export const CheckpointerSettingsSchema = z
  .union(
    Object.values(checkpointBackends).map((backend) => backend.schema) as [
      SettingsSchema,
      ...SettingsSchema[],
    ],
  )
  .describe('Where LangGraph checkpoints live.');

/** Checkpointer settings as users write them (`actor.checkpointer`); `sqlite` is the default. */
export type CheckpointerSettings = z.input<SettingsSchema>;

/** True when a saver a caller passed in is one of an ephemeral store's (e.g. a `MemorySaver`). */
export async function isEphemeralSaver(saver: BaseCheckpointSaver): Promise<boolean> {
  for (const backend of Object.values(checkpointBackends) as CheckpointBackend[]) {
    if (backend.ephemeral && (await backend.owns?.(saver)) === true) return true;
  }
  return false;
}

/** The store an actor without `checkpointer:` uses. */
export const DEFAULT_CHECKPOINTER_TYPE = 'sqlite' satisfies CheckpointBackendType;

/**
 * The stores whose settings need nothing but their type (a command-line flag can name them), in
 * table order; the others need options only a config file holds (a URL).
 */
export function typeOnlyCheckpointerTypes(): string[] {
  return (Object.values(checkpointBackends) as CheckpointBackend[])
    .filter((backend) => backend.schema.safeParse({ type: backend.type }).success)
    .map((backend) => backend.type);
}

/**
 * Opens the checkpoint store an actor's settings name (see {@link checkpointBackends}):
 * `{ type: 'sqlite', path }` (default), `{ type: 'postgres', url }`, `{ type: 'memory' }`.
 *
 * The caller owns the result and must `close()` it. Throws `CONFIG_INVALID` when the store
 * cannot be opened (with the path or the redacted URL).
 */
export async function createCheckpointer(
  settings: CheckpointerSettings = { type: DEFAULT_CHECKPOINTER_TYPE },
  options: OpenCheckpointerOptions = {},
): Promise<Checkpointer> {
  const { backend, settings: parsed } = resolveCheckpointer(settings);
  return backend.open(parsed, options);
}

/**
 * The backend of `settings` and the settings as it reads them: its schema fills defaults (the
 * SQLite path) and refuses unknown keys. Throws `CONFIG_INVALID`.
 */
export function resolveCheckpointer(settings: { type: string }): {
  backend: CheckpointBackend;
  settings: { type: string };
} {
  if (!Object.hasOwn(checkpointBackends, settings.type)) {
    throw new AgentsError(
      AgentsErrorCode.ConfigInvalid,
      `Unknown checkpointer type "${settings.type}"; use one of ${Object.keys(checkpointBackends).join(', ')}.`,
      { details: { type: settings.type } },
    );
  }
  // Typed as the general interface: callers hold only that.
  const backend: CheckpointBackend = checkpointBackends[settings.type as CheckpointBackendType];
  const parsed = backend.schema.safeParse(settings);
  if (!parsed.success) {
    throw new AgentsError(
      AgentsErrorCode.ConfigInvalid,
      `Invalid checkpointer settings for type "${settings.type}": ${parsed.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`).join('; ')}.`,
      { details: { type: settings.type } },
    );
  }
  return { backend, settings: parsed.data };
}
