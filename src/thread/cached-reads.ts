import type { RunnableConfig } from '@langchain/core/runnables';
import type { BaseCheckpointSaver, CheckpointTuple } from '@langchain/langgraph-checkpoint';

/**
 * The same saver, remembering each checkpoint it has read by id, for commands that only read a
 * thread (`agents checkpoints`, `sandbox diff --from CHECKPOINT`).
 *
 * Why: graphs with delta channels (the actor's `messages` and `changeLog`) rebuild a
 * checkpoint's state by replaying the writes of every ancestor, so reading the history of a
 * thread with N checkpoints reads (and deserializes) ancestors N²/2 times. A checkpoint is
 * immutable once written, so reading each once makes the listing linear. Only lookups by
 * `checkpoint_id` are remembered; the latest checkpoint is always read afresh. Do not use it on
 * a saver a run writes to meanwhile: a checkpoint's pending writes grow while its step runs.
 */
export function withCachedCheckpointReads<Saver extends BaseCheckpointSaver>(saver: Saver): Saver {
  const cache = new Map<string, Promise<CheckpointTuple | undefined>>();
  const getTuple = (config: RunnableConfig): Promise<CheckpointTuple | undefined> => {
    const { thread_id, checkpoint_ns = '', checkpoint_id } = config.configurable ?? {};
    if (typeof checkpoint_id !== 'string') return saver.getTuple(config);
    const key = `${String(thread_id)}\0${String(checkpoint_ns)}\0${checkpoint_id}`;
    let found = cache.get(key);
    if (found === undefined) {
      found = saver.getTuple(config);
      cache.set(key, found);
      // A failed read is not remembered: the next caller tries again.
      found.catch(() => cache.delete(key));
    }
    return found;
  };
  return new Proxy(saver, {
    get(target, property, receiver) {
      if (property === 'getTuple') return getTuple;
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      // The base class's ancestor walk calls `this.getTuple`: run it on the proxy so it reads
      // through the cache. Other methods run on the saver itself (private fields).
      return (value as (...args: unknown[]) => unknown).bind(
        property === 'getDeltaChannelHistory' ? receiver : target,
      );
    },
  });
}
