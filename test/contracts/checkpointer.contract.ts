import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { END, START, StateGraph, StateSchema } from '@langchain/langgraph';
import type { BaseCheckpointSaver } from '@langchain/langgraph';
import { z } from 'zod';
import type { Checkpointer } from '../../src/checkpoint/backend.js';
import { listCheckpoints } from '../../src/thread/checkpoint-list.js';
import { readSandboxState } from '../../src/core/sandbox-state.js';
import { sandboxStateFields } from '../../src/thread/state.js';
import type { ChangeRecord } from '../../src/core/change-record.js';

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

    it('gives each fork its own channel versions: two forks of one checkpoint and the old branch read their own values', async () => {
      // PostgresSaver keys channel values by version and ignores a second write of one version;
      // with versions 1, 2, 3... a fork reused the old branch's version and read ITS values.
      const graph = graphOn(checkpointer.saver);
      const config = { configurable: { thread_id: threadId } };
      await graph.invoke({}, config);
      const history = await listCheckpoints({ graph, threadId });
      const oldHead = history[0]!;
      const afterFirst = history.find((entry) => entry.next.includes('second'))!;
      const forkA = await graph.updateState(
        afterFirst.config,
        { steps: ['fork-a'], sandboxHead: 'a'.repeat(40) },
        'first',
      );
      const forkB = await graph.updateState(
        afterFirst.config,
        { steps: ['fork-b'], sandboxHead: 'b'.repeat(40) },
        'first',
      );
      expect((await graph.getState(forkA)).values).toMatchObject({
        steps: ['fork-a'],
        sandboxHead: 'a'.repeat(40),
      });
      expect((await graph.getState(forkB)).values).toMatchObject({
        steps: ['fork-b'],
        sandboxHead: 'b'.repeat(40),
      });
      // Resuming a fork runs `second` on the fork's state, not the old branch's.
      const resumed = await graph.invoke(null, forkA);
      expect(resumed.steps).toEqual(['fork-a', 'second']);
      expect(resumed.sandboxHead).toBe(record(3, '').snapshot);
      expect((await graph.getState(forkB)).values.steps).toEqual(['fork-b']);
      expect((await graph.getState(oldHead.config)).values).toMatchObject({
        steps: ['first', 'second'],
        sandboxHead: record(3, '').snapshot,
      });
    });

    it('returns the pending writes of parallel tasks in (task path, task id, index) order', async () => {
      // LangGraph replays a superstep's writes in the order the run applied them, the task path
      // order, and asks savers to return them so; SqliteSaver 1.0 and PostgresSaver 1.0 sort by
      // task id (random) instead. Task ids here sort the opposite way to their paths.
      const graph = graphOn(checkpointer.saver);
      await graph.invoke({}, { configurable: { thread_id: threadId } });
      const [head] = await listCheckpoints({ graph, threadId });
      const at = head!.config;
      const tasks = [
        { id: 'task-x', path: '~__pregel_push, 2', values: ['c0', 'c1'] },
        { id: 'task-z', path: '~__pregel_push, 0', values: ['a0', 'a1'] },
        { id: 'task-y', path: '~__pregel_push, 1', values: ['b0'] },
      ];
      // Stored concurrently, as parallel tasks finish, in neither path nor id order.
      await Promise.all(
        [tasks[1]!, tasks[0]!, tasks[2]!].map((task) =>
          checkpointer.saver.putWrites(
            at,
            task.values.map((value) => ['steps', value] as [string, unknown]),
            task.id,
            task.path,
          ),
        ),
      );
      const tuple = await checkpointer.saver.getTuple(at);
      expect(tuple?.pendingWrites?.map(([taskId, , value]) => [taskId, value])).toEqual([
        ['task-z', 'a0'],
        ['task-z', 'a1'],
        ['task-y', 'b0'],
        ['task-x', 'c0'],
        ['task-x', 'c1'],
      ]);
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
