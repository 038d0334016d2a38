import { Annotation, MemorySaver, StateGraph } from '@langchain/langgraph';
import { describe, expect, it } from 'vitest';
import { storedThreadIdOf, withThreadNamespace } from '../../src/checkpoint/thread-namespace.js';

const State = Annotation.Root({
  items: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),
});

/** A one-node graph that appends `item` per run, checkpointed by `saver`. */
function graphWith(saver: MemorySaver | ReturnType<typeof withThreadNamespace>, item: string) {
  return new StateGraph(State)
    .addNode('add', () => ({ items: [item] }))
    .addEdge('__start__', 'add')
    .addEdge('add', '__end__')
    .compile({ checkpointer: saver });
}

describe('withThreadNamespace', () => {
  it('keeps two scopes apart on one saver while callers use the bare thread id', async () => {
    const shared = new MemorySaver();
    const first = withThreadNamespace(shared, { project: 'p1', actor: 'bot' });
    const second = withThreadNamespace(shared, { project: 'p2', actor: 'bot' });
    const config = { configurable: { thread_id: 't1' } };
    await graphWith(first, 'one').invoke({}, config);
    await graphWith(first, 'one-again').invoke({}, config);
    await graphWith(second, 'two').invoke({}, config);

    expect((await graphWith(first, 'x').getState(config)).values).toEqual({
      items: ['one', 'one-again'],
    });
    expect((await graphWith(second, 'x').getState(config)).values).toEqual({ items: ['two'] });
    // Stored under the namespaced ids only.
    expect(Object.keys(shared.storage).sort()).toEqual([
      storedThreadIdOf({ project: 'p1', actor: 'bot' }, 't1'),
      storedThreadIdOf({ project: 'p2', actor: 'bot' }, 't1'),
    ]);
    // Configs come back with the bare id, parents included; a listing across threads yields
    // only the scope's own.
    const listed = [];
    for await (const tuple of first.list({})) listed.push(tuple);
    expect(listed.length).toBeGreaterThan(2);
    for (const tuple of listed) {
      expect(tuple.config.configurable?.['thread_id']).toBe('t1');
      if (tuple.parentConfig !== undefined)
        expect(tuple.parentConfig.configurable?.['thread_id']).toBe('t1');
    }
    // Deleting the thread in one scope leaves the other's.
    await first.deleteThread('t1');
    expect(await first.getTuple(config)).toBeUndefined();
    expect((await graphWith(second, 'x').getState(config)).values).toEqual({ items: ['two'] });
  });

  it('adopts a thread under its bare id once, before the first read', async () => {
    const calls: Array<[string, string]> = [];
    const saver = withThreadNamespace(
      new MemorySaver(),
      { project: 'p', actor: 'a' },
      {
        adoptLegacyThread: async (legacy, stored) => {
          calls.push([legacy, stored]);
        },
      },
    );
    const config = { configurable: { thread_id: 'old' } };
    await saver.getTuple(config);
    await graphWith(saver, 'x').invoke({}, config);
    expect(calls).toEqual([['old', 'p/a/old']]);
  });
});
