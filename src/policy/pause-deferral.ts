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

/** Called by a pause point right before `interrupt()`: throws when pauses are deferred here. */
export function deferPauseIfGrouped(what: string): void {
  if (deferring.getStore() === true) throw new PauseDeferred(what);
}
