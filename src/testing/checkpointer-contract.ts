import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { END, START, StateGraph, StateSchema } from '@langchain/langgraph';
import type { BaseCheckpointSaver } from '@langchain/langgraph';
import { z } from 'zod';
import type { Checkpointer } from '../checkpoint/backend.js';
import { listCheckpoints } from '../thread/checkpoint-list.js';
import { readSandboxState } from '../core/sandbox-state.js';
import { sandboxStateFields } from '../thread/state.js';
import type { ChangeRecord } from '../core/change-record.js';
import { perCaseContract, type Contract } from './contract.js';

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
 * Checks that `actual` holds every key of `expected` with an equal value (other keys allowed).
 */
function assertHas(actual: Record<string, unknown>, expected: Record<string, unknown>): void {
  for (const [key, value] of Object.entries(expected)) assert.deepEqual(actual[key], value, key);
}

interface Case {
  checkpointer: Checkpointer;
  threadId: string;
}

/**
 * The checkpointer contract: the behaviour rollback relies on, for any checkpoint store. History
 * per thread with parents, exact round trip of the sandbox fields, forks by `updateState` that
 * keep the old branch (each with its own channel versions), pending writes in task path order,
 * and `deleteThread`. `create` returns a fresh, open store for each case; the case closes it.
 * Framework-neutral: register `cases` with your runner (see
 * `test/checkpoint/checkpointer.int.test.ts`).
 */
export function checkpointerContract(create: () => Promise<Checkpointer>): Contract {
  const open = async (): Promise<Case> => ({
    checkpointer: await create(),
    threadId: `contract-${randomUUID()}`,
  });
  return perCaseContract(open, ({ checkpointer }) => checkpointer.close(), {
    'keeps one checkpoint per superstep, newest first, each linked to its parent': async ({
      checkpointer,
      threadId,
    }) => {
      const graph = graphOn(checkpointer.saver);
      await graph.invoke({}, { configurable: { thread_id: threadId } });
      const entries = await listCheckpoints({ graph, threadId });
      assert.deepEqual(
        entries.map((entry) => [entry.source, entry.step, entry.next]),
        [
          ['loop', 2, []],
          ['loop', 1, ['second']],
          ['loop', 0, ['first']],
          ['input', -1, ['__start__']],
        ],
      );
      for (let index = 0; index < entries.length - 1; index++) {
        assert.equal(entries[index]!.parentCheckpointId, entries[index + 1]!.checkpointId);
      }
      assert.deepEqual(
        entries.map((entry) => entry.changed.map((change) => change.path)),
        [['dir/file-2.txt', 'dir/file-3.txt'], ['dir/file-1.txt'], [], []],
      );
    },

    'round-trips the change log and sandbox head exactly': async ({ checkpointer, threadId }) => {
      const graph = graphOn(checkpointer.saver);
      await graph.invoke({}, { configurable: { thread_id: threadId } });
      const state = await graph.getState({ configurable: { thread_id: threadId } });
      assert.deepEqual(readSandboxState(state.values), {
        changeLog: [
          record(1, 'b'.repeat(40)),
          record(2, record(1, '').snapshot),
          record(3, record(2, '').snapshot),
        ],
        sandboxHead: record(3, '').snapshot,
        rollbacks: [],
      });
    },

    'forks with updateState from an old checkpoint and keeps the old branch': async ({
      checkpointer,
      threadId,
    }) => {
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
      assert.equal(
        head.config.configurable?.['checkpoint_id'],
        forkConfig.configurable?.['checkpoint_id'],
      );
      assert.equal(head.values.sandboxHead, 'f'.repeat(40));
      assert.equal(head.values.changeLog.length, 1);
      assert.equal(head.metadata?.source, 'update');
      const after = await listCheckpoints({ graph, threadId });
      assert.equal(after.length, before.length + 1);
      assert.equal(after[0]!.parentCheckpointId, afterFirst.checkpointId);
      const updates = [];
      for await (const tuple of checkpointer.saver.list(config, { filter: { source: 'update' } }))
        updates.push(tuple);
      assert.equal(updates.length, 1);
    },

    'gives each fork its own channel versions: two forks of one checkpoint and the old branch read their own values':
      async ({ checkpointer, threadId }) => {
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
        assertHas((await graph.getState(forkA)).values, {
          steps: ['fork-a'],
          sandboxHead: 'a'.repeat(40),
        });
        assertHas((await graph.getState(forkB)).values, {
          steps: ['fork-b'],
          sandboxHead: 'b'.repeat(40),
        });
        // Resuming a fork runs `second` on the fork's state, not the old branch's.
        const resumed = await graph.invoke(null, forkA);
        assert.deepEqual(resumed.steps, ['fork-a', 'second']);
        assert.equal(resumed.sandboxHead, record(3, '').snapshot);
        assert.deepEqual((await graph.getState(forkB)).values.steps, ['fork-b']);
        assertHas((await graph.getState(oldHead.config)).values, {
          steps: ['first', 'second'],
          sandboxHead: record(3, '').snapshot,
        });
      },

    'returns the pending writes of parallel tasks in (task path, task id, index) order': async ({
      checkpointer,
      threadId,
    }) => {
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
      assert.deepEqual(
        tuple?.pendingWrites?.map(([taskId, , value]) => [taskId, value]),
        [
          ['task-z', 'a0'],
          ['task-z', 'a1'],
          ['task-y', 'b0'],
          ['task-x', 'c0'],
          ['task-x', 'c1'],
        ],
      );
    },

    'keeps threads apart and deletes one thread without touching another': async ({
      checkpointer,
      threadId,
    }) => {
      const graph = graphOn(checkpointer.saver);
      const other = `${threadId}-other`;
      await graph.invoke({}, { configurable: { thread_id: threadId } });
      await graph.invoke({}, { configurable: { thread_id: other } });
      await checkpointer.saver.deleteThread(threadId);
      const gone = await checkpointer.saver.getTuple({ configurable: { thread_id: threadId } });
      assert.equal(gone, undefined);
      assert.equal((await listCheckpoints({ graph, threadId: other })).length, 4);
      await checkpointer.saver.deleteThread(other);
    },

    'closes idempotently': async ({ checkpointer }) => {
      await checkpointer.close();
      await checkpointer.close();
      assert.equal(await checkpointer[Symbol.asyncDispose](), undefined);
    },
  });
}
