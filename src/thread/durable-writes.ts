import type { BaseCheckpointSaver } from '@langchain/langgraph';
import { killPoint } from '../core/kill-point.js';

/*
 * Issue 38 item 9: LangGraph writes the checkpoint holding a run's input (`source: "input"`)
 * without waiting for it, even with `durability: "sync"` (only the checkpoints after each step
 * are awaited), so a model turn could start, and the process die, before the input was stored:
 * `--continue` then found the previous run's last checkpoint and answered "nothing to continue",
 * and the input was gone. The actor's agent node awaits {@link TrackedSaver.settled} before it
 * calls the model, so every checkpoint LangGraph has started writing is durable first.
 */

/** A saver whose writes in flight can be awaited. */
export interface TrackedSaver {
  /** The saver to compile the graph with (a Proxy: same class, private fields intact). */
  saver: BaseCheckpointSaver;
  /** Resolves once every `put` and `putWrites` started so far has ended (stored or failed). */
  settled(): Promise<void>;
}

/** Wraps `saver` so that its writes in flight can be awaited (see {@link TrackedSaver}). */
export function trackCheckpointWrites(saver: BaseCheckpointSaver): TrackedSaver {
  const inFlight = new Set<Promise<unknown>>();
  const proxy = new Proxy(saver, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      const method = value as (...args: unknown[]) => unknown;
      if (property !== 'put' && property !== 'putWrites') return method.bind(target);
      return (...args: unknown[]) => {
        if (property === 'put') killPoint('checkpoint-write');
        const write = Promise.resolve(method.apply(target, args));
        // A failure is LangGraph's to report (it fails the run); here it only ends the wait.
        const settled = write.then(
          () => undefined,
          () => undefined,
        );
        inFlight.add(settled);
        void settled.then(() => inFlight.delete(settled));
        return write;
      };
    },
  });
  return {
    saver: proxy,
    settled: async () => {
      // Zero cost when nothing is in flight (every step after the first: "sync" awaited it).
      while (inFlight.size > 0) await Promise.all([...inFlight]);
    },
  };
}
