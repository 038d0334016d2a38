import { AsyncLocalStorage } from 'node:async_hooks';
import { GraphInterrupt } from '@langchain/langgraph';

/**
 * Pauses deferred out of a grouped task. A graph may run several read-only tool calls in one
 * LangGraph task (`routeToolCallsPerTask({ group })`). LangGraph hands resume values to the
 * `interrupt()` calls of a task by their order, and calls running side by side pause in no fixed
 * order, so no call of a group may reach `interrupt()` while its siblings run: the library's
 * pause points (the policy's approval, a network approval, a 2026 server's question) throw
 * {@link PauseDeferred} instead, and the group runs that call again after its siblings, alone,
 * where it pauses for real (see `pipeline/grouped-calls.ts`).
 */
const deferring = new AsyncLocalStorage<boolean>();

/**
 * Thrown by a pause point inside {@link runWithPausesDeferred}. A `GraphInterrupt` by name, so
 * every layer that lets a pause through (audit, policy, input rounds) lets this through as well;
 * the group runner catches it before LangGraph sees it.
 */
export class PauseDeferred extends GraphInterrupt {
  constructor(what: string) {
    super([]);
    this.message = `${what}: deferred until the other calls of its task are done`;
  }
}

/** True for a {@link PauseDeferred}. */
export function isPauseDeferred(error: unknown): error is PauseDeferred {
  return error instanceof PauseDeferred;
}

/** Runs `fn` with every pause point inside it (across awaits) throwing {@link PauseDeferred}. */
export function runWithPausesDeferred<T>(fn: () => T): T {
  return deferring.run(true, fn);
}

/**
 * Effects of a grouped task's calls that would change whether a sibling's call pauses when the
 * task runs again (a pin written on approval turns that tool's next `ask` into `allow`). LangGraph
 * hands a task's resume values to its `interrupt()` calls by position, so every run of the task
 * must pause the same calls in the same order: such effects wait until every call of the group
 * is done ({@link runAsGroup}), and are dropped when the task pauses or fails (it runs again).
 */
const postponed = new AsyncLocalStorage<(() => Promise<unknown>)[]>();

/** Runs a grouped task's calls; the effects they postpone run once `fn` has resolved. */
export async function runAsGroup<T>(fn: () => Promise<T>): Promise<T> {
  const effects: (() => Promise<unknown>)[] = [];
  const value = await postponed.run(effects, fn);
  for (const effect of effects) await effect();
  return value;
}

/** Runs `effect` now, or at the end of the grouped task this runs in (see {@link runAsGroup}). */
export async function afterGroup(effect: () => Promise<unknown>): Promise<void> {
  const effects = postponed.getStore();
  if (effects === undefined) await effect();
  else effects.push(effect);
}

/** Called by a pause point right before `interrupt()`: throws when pauses are deferred here. */
export function deferPauseIfGrouped(what: string): void {
  if (deferring.getStore() === true) throw new PauseDeferred(what);
}
