/** Active runs: the per-process marks that keep a rollback off a thread while a run is on it. */
import { AgentsError, AgentsErrorCode } from '../errors.js';
import { assertRollbackDurability } from '../checkpoint/durability.js';
import type { Durability } from '../checkpoint/durability.js';

const activeRuns = new Map<string, number>();

/** A mark that a run is active on a thread; release it (or `using`) when the run ends. */
export interface ActiveRunMark extends Disposable {
  readonly threadId: string;
  /** Idempotent. */
  release(): void;
}

/**
 * Marks a run as active on a thread, so {@link rollback} refuses to touch it meanwhile. The
 * registry is per process: a run in another process is not seen. Marks nest (two marks, two
 * releases).
 */
export function markRunActive(threadId: string): ActiveRunMark {
  activeRuns.set(threadId, (activeRuns.get(threadId) ?? 0) + 1);
  let released = false;
  const release = (): void => {
    if (released) return;
    released = true;
    const count = (activeRuns.get(threadId) ?? 1) - 1;
    if (count <= 0) activeRuns.delete(threadId);
    else activeRuns.set(threadId, count);
  };
  return { threadId, release, [Symbol.dispose]: release };
}

/** True while a run marked with {@link markRunActive} is active on the thread. */
export function isRunActive(threadId: string): boolean {
  return (activeRuns.get(threadId) ?? 0) > 0;
}

/**
 * Runs `work` (e.g. `() => graph.invoke(input, config)`) with the thread marked active. Refuses
 * `durability: 'exit'` in `options` (no intermediate checkpoints to roll back to).
 */
export async function withActiveRun<T>(
  threadId: string,
  work: () => Promise<T>,
  options?: { durability?: Durability | undefined },
): Promise<T> {
  assertRollbackDurability(options);
  const mark = markRunActive(threadId);
  try {
    return await work();
  } finally {
    mark.release();
  }
}

export function assertNoActiveRun(threadId: string): void {
  if (isRunActive(threadId)) {
    throw new AgentsError(
      AgentsErrorCode.RunActive,
      `A run is active on thread "${threadId}"; wait for it to finish (or cancel it) before rolling back.`,
      { details: { threadId } },
    );
  }
}
