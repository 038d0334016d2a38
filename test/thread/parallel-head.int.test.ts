import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AIMessage, HumanMessage } from '@langchain/core/messages';
import type { BaseMessage } from '@langchain/core/messages';
import type { StructuredTool } from '@langchain/core/tools';
import { END, MessagesValue, START, StateGraph, StateSchema } from '@langchain/langgraph';
import type { BaseCheckpointSaver } from '@langchain/langgraph';
import { sandboxStateFields } from '../../src/thread/state.js';
import { createTrackedToolNode, routeToolCallsPerTask } from '../../src/pipeline/tool-node.js';
import { toStructuredTool } from '../../src/mcp/structured-tool.js';
import { createChangeTrackingMiddleware } from '../../src/pipeline/change-tracking.js';
import { composeMiddleware } from '../../src/core/tool-middleware.js';
import type { ToolCallHandler } from '../../src/core/tool-middleware.js';
import { readSandboxState } from '../../src/core/sandbox-state.js';
import { reduceSandboxHead } from '../../src/core/head-claim.js';
import type { HeadClaim } from '../../src/core/head-claim.js';
import { withHeadCheck } from '../../src/thread/head-check.js';
import { AgentsError } from '../../src/errors.js';
import type { Checkpointer } from '../../src/checkpoint/backend.js';
import type { LocalSandbox } from '../../src/sandbox/git/local-sandbox.js';
import { fileHandlers, makeThreadParts, readTree } from './helpers.js';
import type { ThreadParts } from './helpers.js';

/*
 * Issue 38, item 1: the checkpoint after a parallel turn names the turn's newest snapshot,
 * whatever order the calls finish in. The first call is slow *before* it takes the sandbox lock
 * (a server starting, an approval): the second call snapshots first and its task is done before
 * the first even starts writing, so under last write wins (tasks applied in call order) the
 * checkpoint named the second call's older snapshot and dropped the first call's file.
 */

const State = new StateSchema({ messages: MessagesValue, ...sandboxStateFields });

/** write_file through change tracking, after `preLockMs` spent outside the sandbox lock. */
function slowStartWriteTool(sandbox: LocalSandbox): StructuredTool {
  const { descriptor, handler } = fileHandlers(() => sandbox.root)['write_file']!;
  const tracked = composeMiddleware([createChangeTrackingMiddleware(sandbox)], handler);
  const slowStart: ToolCallHandler = async (context) => {
    const wait = context.args['preLockMs'];
    if (typeof wait === 'number') await new Promise((resolve) => setTimeout(resolve, wait));
    return tracked(context);
  };
  return toStructuredTool(
    {
      ...descriptor,
      inputSchema: {
        ...descriptor.inputSchema,
        properties: {
          ...(descriptor.inputSchema['properties'] as Record<string, unknown>),
          preLockMs: { type: 'number' },
        },
      },
    },
    slowStart,
  );
}

function buildGraph(tools: StructuredTool[], sandbox: LocalSandbox, saver: BaseCheckpointSaver) {
  const agent = (state: { messages: BaseMessage[] }) => {
    const turn = state.messages.filter((message) => AIMessage.isInstance(message)).length;
    if (turn > 0) return { messages: [new AIMessage('done')] };
    const calls = [
      { path: 'slow.txt', content: 'first call, slow start', preLockMs: 400 },
      { path: 'fast-1.txt', content: 'second call' },
      { path: 'fast-2.txt', content: 'third call', delayMs: 30 },
    ];
    return {
      messages: [
        new AIMessage({
          content: '',
          tool_calls: calls.map((args, index) => ({
            id: `c${index}`,
            name: 'write_file',
            args,
            type: 'tool_call' as const,
          })),
        }),
      ],
    };
  };
  return new StateGraph(State)
    .addNode('agent', agent)
    .addNode('tools', createTrackedToolNode(tools, { sandbox }))
    .addEdge(START, 'agent')
    .addConditionalEdges('agent', routeToolCallsPerTask({ tools: 'tools', end: END }), [
      'tools',
      END,
    ])
    .addEdge('tools', 'agent')
    .compile({ checkpointer: withHeadCheck(saver) });
}

describe('the head of a parallel turn (issue 38, item 1)', () => {
  let parts: ThreadParts;
  let sandbox: LocalSandbox;
  let checkpointer: Checkpointer;

  beforeEach(async () => {
    parts = await makeThreadParts();
    ({ sandbox, checkpointer } = parts);
  });

  afterEach(async () => {
    await parts.cleanup(checkpointer);
  });

  it('names the newest snapshot of the turn when the first call finishes last', async () => {
    const graph = buildGraph([slowStartWriteTool(sandbox)], sandbox, checkpointer.saver);
    const config = { configurable: { thread_id: 'parallel-1' } };
    const final = await graph.invoke({ messages: [new HumanMessage('go')] }, config);
    const state = readSandboxState(final);
    // Precondition: the slow first call really snapshotted last (its record builds on the others).
    const slow = state.changeLog.find((record) => record.toolCallId === 'c0');
    expect(slow?.parent).not.toBe(sandbox.base);
    expect(state.changeLog.find((record) => record.toolCallId === 'c1')?.parent).toBe(sandbox.base);
    expect(state.sandboxHead).toBe(slow?.snapshot);
    expect(state.sandboxHead).toBe(sandbox.head);
    // The checkpoint written after the tools step (not only the final state) has every file.
    const history = [];
    for await (const snapshot of graph.getStateHistory(config)) history.push(snapshot);
    const afterTools = history.find((snapshot) => snapshot.next.includes('agent'));
    expect(readSandboxState(afterTools?.values).sandboxHead).toBe(sandbox.head);
    const files = await sandbox.diff(
      sandbox.base,
      readSandboxState(afterTools?.values).sandboxHead!,
    );
    expect(files.map((file) => file.path).sort()).toEqual(['fast-1.txt', 'fast-2.txt', 'slow.txt']);
    expect(await readTree(sandbox.root)).toMatchObject({ 'slow.txt': 'first call, slow start' });
  });

  it('keeps the newest claim of a step in any write order, and lets a later step or a plain write replace it', () => {
    const claim = (sha: string, ancestors: string[], step = 't|1'): HeadClaim => ({
      kind: 'head-claim',
      sha,
      step,
      ancestors,
    });
    const a = claim('h1', ['h0']);
    const b = claim('h2', ['h1', 'h0']);
    const c = claim('h3', ['h2', 'h1', 'h0']);
    for (const order of [
      [a, b, c],
      [c, b, a],
      [b, c, a],
      [a, c, b],
    ]) {
      const head = order.reduce<string>((current, next) => reduceSandboxHead(current, next), 'h0');
      expect(head).toBe('h3');
    }
    // A claim of the next step replaces the head, even one with a shorter chain.
    expect(reduceSandboxHead('h3', claim('h9', ['h3'], 't|2'))).toBe('h9');
    // A plain sha (rollback, updateState) sets the head outright.
    expect(reduceSandboxHead('h3', 'h0')).toBe('h0');
    expect(reduceSandboxHead('h3', undefined)).toBe('h3');
  });

  it('refuses a checkpoint whose head is not a snapshot its own step recorded', async () => {
    const checked = withHeadCheck(checkpointer.saver);
    // A real thread first, so the refused write has a parent checkpoint with pending writes.
    const graph = buildGraph([slowStartWriteTool(sandbox)], sandbox, checkpointer.saver);
    const config = { configurable: { thread_id: 'refused-1' } };
    await graph.invoke({ messages: [new HumanMessage('go')] }, config);
    const latest = await checkpointer.saver.getTuple(config);
    expect(latest).toBeDefined();
    const parent = { configurable: { ...latest!.config.configurable } };
    await checked.putWrites(
      parent,
      [
        [
          'changeLog',
          [{ toolId: 'x', snapshot: 'b'.repeat(40), parent: 'a'.repeat(40), changed: [] }],
        ],
      ],
      'task-1',
    );
    const checkpoint = {
      ...latest!.checkpoint,
      id: '1f000000-0000-6000-8000-000000000001',
      channel_values: { ...latest!.checkpoint.channel_values, sandboxHead: 'a'.repeat(40) },
    };
    const write = checked.put(
      parent,
      checkpoint,
      { source: 'loop', step: 99, parents: {} },
      { sandboxHead: 99 },
    );
    await expect(write).rejects.toBeInstanceOf(AgentsError);
    await expect(write).rejects.toThrow(/is not the snapshot of any change its own step recorded/);
  });
});
