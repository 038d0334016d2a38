import { AgentsError, AgentsErrorCode } from '../errors.js';

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
