import type { BaseCheckpointSaver } from '@langchain/langgraph';
import { killPoint } from '../core/kill-point.js';
import { withSaverMethods } from '../checkpoint/saver-proxy.js';

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
  const track = <T>(write: Promise<T>): Promise<T> => {
    // A failure is LangGraph's to report (it fails the run); here it only ends the wait.
    const settled = write.then(
      () => undefined,
      () => undefined,
    );
    inFlight.add(settled);
    void settled.then(() => inFlight.delete(settled));
    return write;
  };
  const proxy = withSaverMethods(saver, {
    put: (...args: Parameters<BaseCheckpointSaver['put']>) => {
      killPoint('checkpoint-write');
      return track(saver.put(...args));
    },
    putWrites: (...args: Parameters<BaseCheckpointSaver['putWrites']>) =>
      track(saver.putWrites(...args)),
  });
  return {
    saver: proxy,
    settled: async () => {
      // Zero cost when nothing is in flight (every step after the first: "sync" awaited it).
      while (inFlight.size > 0) await Promise.all([...inFlight]);
    },
  };
}
