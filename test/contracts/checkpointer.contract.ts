import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { END, START, StateGraph, StateSchema } from '@langchain/langgraph';
import type { BaseCheckpointSaver } from '@langchain/langgraph';
import { z } from 'zod';
import type { Checkpointer } from '../../src/middleware/checkpointer.js';
import { listCheckpoints } from '../../src/middleware/rollback.js';
import { readSandboxState, sandboxStateFields } from '../../src/middleware/state.js';
import type { ChangeRecord } from '../../src/core/tool-descriptor.js';

const State = new StateSchema({
  ...sandboxStateFields,
  steps: z.array(z.string()).default(() => []),
});

function record(n: number, parent: string): ChangeRecord {
  return {
    toolCallId: `call-${n}`,
    toolId: 'custom:write_file',
    parent,
    snapshot: `${n}`.repeat(40).slice(0, 40),
    changed: [{ status: 'A', path: `dir/file-${n}.txt` }],
  };
}

/** A two-step graph that writes change records and a head, like the tracked ToolNode does. */
function graphOn(saver: BaseCheckpointSaver) {
  return new StateGraph(State)
    .addNode('first', () => ({
      steps: ['first'],
      changeLog: [record(1, 'b'.repeat(40))],
      sandboxHead: record(1, '').snapshot,
    }))
    .addNode('second', (state: typeof State.State) => ({
      steps: [...state.steps, 'second'],
      changeLog: [record(2, record(1, '').snapshot), record(3, record(2, '').snapshot)],
      sandboxHead: record(3, '').snapshot,
    }))
    .addEdge(START, 'first')
    .addEdge('first', 'second')
    .addEdge('second', END)
    .compile({ checkpointer: saver });
}

/**
 * The behaviour rollback relies on, for any checkpoint store: history per thread with parents,
 * exact round trip of the sandbox fields, forks by `updateState` that keep the old branch, and
 * `deleteThread`. `create` returns a fresh, open store; the suite closes it.
 */
export function describeCheckpointerContract(
  name: string,
  create: () => Promise<Checkpointer>,
): void {
  describe(`checkpointer contract: ${name}`, () => {
    let checkpointer: Checkpointer;
    let threadId: string;

    beforeEach(async () => {
      checkpointer = await create();
      threadId = `contract-${randomUUID()}`;
    });
    afterEach(async () => {
      await checkpointer.close();
    });

    it('keeps one checkpoint per superstep, newest first, each linked to its parent', async () => {
      const graph = graphOn(checkpointer.saver);
      await graph.invoke({}, { configurable: { thread_id: threadId } });
      const entries = await listCheckpoints({ graph, threadId });
      expect(entries.map((entry) => [entry.source, entry.step, entry.next])).toEqual([
        ['loop', 2, []],
        ['loop', 1, ['second']],
        ['loop', 0, ['first']],
        ['input', -1, ['__start__']],
      ]);
      for (let index = 0; index < entries.length - 1; index++) {
        expect(entries[index]!.parentCheckpointId).toBe(entries[index + 1]!.checkpointId);
      }
      expect(entries.map((entry) => entry.changed.map((change) => change.path))).toEqual([
        ['dir/file-2.txt', 'dir/file-3.txt'],
        ['dir/file-1.txt'],
        [],
        [],
      ]);
    });

    it('round-trips the change log and sandbox head exactly', async () => {
      const graph = graphOn(checkpointer.saver);
      await graph.invoke({}, { configurable: { thread_id: threadId } });
      const state = await graph.getState({ configurable: { thread_id: threadId } });
      expect(readSandboxState(state.values)).toEqual({
        changeLog: [
          record(1, 'b'.repeat(40)),
          record(2, record(1, '').snapshot),
          record(3, record(2, '').snapshot),
        ],
        sandboxHead: record(3, '').snapshot,
        rollbacks: [],
      });
    });

    it('forks with updateState from an old checkpoint and keeps the old branch', async () => {
      const graph = graphOn(checkpointer.saver);
      const config = { configurable: { thread_id: threadId } };
      await graph.invoke({}, config);
      const before = await listCheckpoints({ graph, threadId });
      const afterFirst = before.find((entry) => entry.next.includes('second'))!;
      const forkConfig = await graph.updateState(
        afterFirst.config,
        { sandboxHead: 'f'.repeat(40) },
        'first',
      );
      const head = await graph.getState(config);
      expect(head.config.configurable?.['checkpoint_id']).toBe(
        forkConfig.configurable?.['checkpoint_id'],
      );
      expect(head.values.sandboxHead).toBe('f'.repeat(40));
      expect(head.values.changeLog).toHaveLength(1);
      expect(head.metadata?.source).toBe('update');
      const after = await listCheckpoints({ graph, threadId });
      expect(after).toHaveLength(before.length + 1);
      expect(after[0]!.parentCheckpointId).toBe(afterFirst.checkpointId);
      const updates = [];
      for await (const tuple of checkpointer.saver.list(config, { filter: { source: 'update' } }))
        updates.push(tuple);
      expect(updates).toHaveLength(1);
    });

    it('keeps threads apart and deletes one thread without touching another', async () => {
      const graph = graphOn(checkpointer.saver);
      const other = `${threadId}-other`;
      await graph.invoke({}, { configurable: { thread_id: threadId } });
      await graph.invoke({}, { configurable: { thread_id: other } });
      await checkpointer.saver.deleteThread(threadId);
      const gone = await checkpointer.saver.getTuple({ configurable: { thread_id: threadId } });
      expect(gone).toBeUndefined();
      expect(await listCheckpoints({ graph, threadId: other })).toHaveLength(4);
      await checkpointer.saver.deleteThread(other);
    });

    it('closes idempotently', async () => {
      await checkpointer.close();
      await checkpointer.close();
      await expect(checkpointer[Symbol.asyncDispose]()).resolves.toBeUndefined();
    });
  });
}
