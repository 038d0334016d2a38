import type { BaseCheckpointSaver } from '@langchain/langgraph';

type SaverMethod = (...args: never[]) => unknown;

/**
 * `saver` with some of its methods replaced: the one way our checkpoint layers (namespacing,
 * the head check, durable writes, the snapshot barrier) wrap a saver. A Proxy keeps the saver's
 * class, so `instanceof` checks and LangGraph's own type tests still hold; every other method
 * runs on the saver itself (its private fields need `this` to be the saver), bound once per
 * method rather than on every read, since each checkpoint read and write passes through here.
 */
export function withSaverMethods(
  saver: BaseCheckpointSaver,
  overrides: Partial<Record<keyof BaseCheckpointSaver, SaverMethod>>,
): BaseCheckpointSaver {
  const bound = new Map<PropertyKey, { source: unknown; method: unknown }>();
  return new Proxy(saver, {
    get(target, property) {
      if (Object.hasOwn(overrides, property)) {
        return overrides[property as keyof BaseCheckpointSaver];
      }
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      const known = bound.get(property);
      if (known !== undefined && known.source === value) return known.method;
      const method = (value as (...args: unknown[]) => unknown).bind(target);
      bound.set(property, { source: value, method });
      return method;
    },
  });
}
