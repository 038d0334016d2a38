import { describe, expect, it } from 'vitest';
import { ToolMessage } from '@langchain/core/messages';
import { END, MemorySaver, START, StateGraph, StateSchema } from '@langchain/langgraph';
import {
  createChangeTracker,
  createChangeTrackingMiddleware,
  findChangeRecord,
} from '../../src/pipeline/change-tracking.js';
import { appendChangeRecords, sandboxStateFields } from '../../src/thread/state.js';
import { chainTip, readSandboxState } from '../../src/core/sandbox-state.js';
import { changeUpdateFromMessages } from '../../src/pipeline/tool-node.js';
import { composeMiddleware } from '../../src/core/tool-middleware.js';
import type { ChangedPath, ChangeRecord } from '../../src/core/change-record.js';
import type { Sandbox, Snapshot } from '../../src/sandbox/types.js';
import { descriptor } from '../thread/helpers.js';

/** An in-memory sandbox: files in a Map, snapshots as numbered copies. No git, no processes. */
function memorySandbox() {
  const files = new Map<string, string>();
  const snapshots = new Map<string, Map<string, string>>([['s0', new Map()]]);
  let head = 's0';
  let counter = 0;
  const diff = async (from: string, to: string): Promise<ChangedPath[]> => {
    const a = snapshots.get(from)!;
    const b = snapshots.get(to)!;
    const out: ChangedPath[] = [];
    for (const [path, content] of b)
      if (!a.has(path)) out.push({ status: 'A', path });
      else if (a.get(path) !== content) out.push({ status: 'M', path });
    for (const path of a.keys()) if (!b.has(path)) out.push({ status: 'D', path });
    return out.sort((x, y) => x.path.localeCompare(y.path));
  };
  const sandbox: Sandbox & { files: Map<string, string>; snapshotCalls: number } = {
    files,
    snapshotCalls: 0,
    id: 'mem',
    root: '/mem',
    source: '/src',
    paths: { root: '/mem', toSandbox: (path) => path, fromSandbox: (text) => text },
    get head() {
      return head;
    },
    base: 's0',
    async snapshot(): Promise<Snapshot> {
      sandbox.snapshotCalls++;
      await Promise.resolve();
      const parent = head;
      const copy = new Map(files);
      const same =
        [...copy].length === snapshots.get(parent)!.size &&
        [...copy].every(([k, v]) => snapshots.get(parent)!.get(k) === v);
      if (same) return { sha: parent, parent, changed: [] };
      const sha = `s${++counter}`;
      snapshots.set(sha, copy);
      head = sha;
      return { sha, parent, changed: await diff(parent, sha) };
    },
    diff,
    async restore() {
      throw new Error('not used');
    },
    async close() {},
    async [Symbol.asyncDispose]() {},
  };
  return sandbox;
}

const writeTool = descriptor('write', false, {});
const readTool = descriptor('read', true, {});

describe('change tracking core (in memory)', () => {
  it('runs at most one write call at a time and attributes each change to its call', async () => {
    const sandbox = memorySandbox();
    let inFlight = 0;
    let maxInFlight = 0;
    const handler = composeMiddleware(
      [createChangeTrackingMiddleware(sandbox)],
      async ({ args }) => {
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        await new Promise((resolve) => setTimeout(resolve, Number(args['delay'])));
        sandbox.files.set(String(args['path']), 'x');
        inFlight--;
        return { content: [] };
      },
    );
    const results = await Promise.all(
      [30, 0, 10].map((delay, index) =>
        handler({
          descriptor: writeTool,
          args: { path: `f${index}`, delay },
          context: { toolCallId: `c${index}` },
        }),
      ),
    );
    expect(maxInFlight).toBe(1);
    expect(results.map((result) => findChangeRecord(result)?.changed)).toEqual([
      [{ status: 'A', path: 'f0' }],
      [{ status: 'A', path: 'f1' }],
      [{ status: 'A', path: 'f2' }],
    ]);
  });

  it('lets read-only calls run beside a write call without a snapshot', async () => {
    const sandbox = memorySandbox();
    const order: string[] = [];
    let releaseWrite!: () => void;
    const handler = composeMiddleware(
      [createChangeTrackingMiddleware(sandbox)],
      async ({ descriptor: d }) => {
        if (d.name === 'write') await new Promise<void>((resolve) => (releaseWrite = resolve));
        order.push(d.name);
        return { content: [] };
      },
    );
    const write = handler({ descriptor: writeTool, args: {}, context: {} });
    const read = await handler({ descriptor: readTool, args: {}, context: {} });
    expect(order).toEqual(['read']);
    expect(findChangeRecord(read)).toBeUndefined();
    releaseWrite();
    await write;
    expect(sandbox.snapshotCalls).toBe(1);
  });

  it('snapshots once when trackers of the same sandbox are nested', async () => {
    const sandbox = memorySandbox();
    const tracker = createChangeTracker(sandbox);
    const inner = composeMiddleware([createChangeTrackingMiddleware(sandbox)], async () => {
      sandbox.files.set('n', '1');
      return { content: [] };
    });
    const outcome = await tracker.track({ toolId: 'outer', toolCallId: 'o1' }, () =>
      inner({ descriptor: writeTool, args: {}, context: { toolCallId: 'o1' } }),
    );
    expect(sandbox.snapshotCalls).toBe(1);
    expect(outcome.ok).toBe(true);
    // The inner middleware saw the held lock and left the snapshot to the outer tracker.
    expect(outcome.ok ? findChangeRecord(outcome.value) : 'failed').toBeUndefined();
    expect(outcome.record?.changed).toEqual([{ status: 'A', path: 'n' }]);
  });

  it('recovers the record of a thrown call for a plain error ToolMessage', async () => {
    const sandbox = memorySandbox();
    const handler = composeMiddleware([createChangeTrackingMiddleware(sandbox)], async () => {
      sandbox.files.set('half', 'h');
      throw new Error('boom');
    });
    await expect(
      handler({ descriptor: writeTool, args: {}, context: { toolCallId: 'e1' } }),
    ).rejects.toThrow('boom');
    const update = changeUpdateFromMessages(
      [new ToolMessage({ content: 'Error: boom', tool_call_id: 'e1', status: 'error' })],
      createChangeTracker(sandbox),
    );
    expect(update).toEqual({
      changeLog: [
        {
          toolCallId: 'e1',
          toolId: 'custom:write',
          parent: 's0',
          snapshot: 's1',
          changed: [{ status: 'A', path: 'half' }],
        },
      ],
      sandboxHead: 's1',
    });
  });
});

describe('sandbox state fields', () => {
  const record = (parent: string, snapshot: string): ChangeRecord => ({
    toolId: 't',
    parent,
    snapshot,
    changed: [],
  });

  it('finds the chain tip whatever order the records come in', () => {
    expect(chainTip([record('a', 'b'), record('b', 'c')])).toBe('c');
    expect(chainTip([record('b', 'c'), record('a', 'b')])).toBe('c');
    expect(chainTip([record('c', 'c'), record('a', 'b'), record('b', 'c')])).toBe('c');
    expect(chainTip([record('a', 'a')])).toBe('a');
    expect(chainTip([])).toBeUndefined();
  });

  it('appends records from parallel writers in one superstep and round-trips through a checkpoint', async () => {
    const State = new StateSchema(sandboxStateFields);
    const graph = new StateGraph(State)
      .addNode('left', () => ({ changeLog: [record('a', 'b')], sandboxHead: 'b' }))
      .addNode('right', () => ({ changeLog: record('b', 'c'), sandboxHead: 'c' }))
      .addEdge(START, 'left')
      .addEdge(START, 'right')
      .addEdge('left', END)
      .addEdge('right', END)
      .compile({ checkpointer: new MemorySaver() });
    const config = { configurable: { thread_id: 'p' } };
    await graph.invoke({}, config);
    const state = readSandboxState((await graph.getState(config)).values);
    expect(state.changeLog).toEqual([record('a', 'b'), record('b', 'c')]);
    expect(['b', 'c']).toContain(state.sandboxHead);
    expect(appendChangeRecords(undefined, undefined)).toEqual([]);
  });
});
