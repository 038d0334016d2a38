import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AIMessage, ToolMessage } from '@langchain/core/messages';
import type { BaseMessage, ToolCall } from '@langchain/core/messages';
import { Command, END, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { composeMiddleware } from '../../src/core/tool-middleware.js';
import type {
  ToolCallHandler,
  ToolMiddleware as ToolCallMiddleware,
} from '../../src/core/tool-middleware.js';
import type { ToolDescriptor } from '../../src/core/tool-descriptor.js';
import { toStructuredTool } from '../../src/mcp/structured-tool.js';
import { parsePolicy } from '../../src/config/policy-schema.js';
import type { PolicyInput } from '../../src/config/policy-schema.js';
import { createMemoryPinStore } from '../../src/policy/pins.js';
import type { PinStore } from '../../src/policy/pins.js';
import {
  createInterruptApprover,
  createPolicyMiddleware,
} from '../../src/policy/policy-middleware.js';
import type { PolicyRecord } from '../../src/policy/policy-middleware.js';
import { isApprovalPreview, toApprovalPreview } from '../../src/policy/approval.js';
import { readOnlyAllowedCalls } from '../../src/actors/call-grouping.js';
import { createTrackedToolNode, routeToolCallsPerTask } from '../../src/pipeline/tool-node.js';
import { ResultMetaKey } from '../../src/core/tool-descriptor.js';
import { AgentsError, AgentsErrorCode } from '../../src/errors.js';
import { decide } from '../../src/policy/decide.js';
import { createInterruptInputHandler } from '../../src/policy/input-requests.js';
import { isPauseDeferred, runWithPausesDeferred } from '../../src/policy/pause-deferral.js';
import { descriptorFor, interruptsOf } from '../policy/helpers.js';

/*
 * routeToolCallsPerTask's `group` (issue 37): the calls it picks share one LangGraph task, the
 * others keep one each, and a grouped call that pauses anyway pauses alone, after its siblings,
 * so each approval reaches the call it was asked for. Real StateGraph, real SQLite checkpointer,
 * the real policy middleware asking through LangGraph interrupt().
 */

const readFile = descriptorFor('fs', {
  name: 'read_file',
  annotations: { readOnlyHint: true },
});
const listDir = descriptorFor('fs', {
  name: 'list_directory',
  annotations: { readOnlyHint: true },
});
const writeFile = descriptorFor('fs', {
  name: 'write_file',
  annotations: { readOnlyHint: false, destructiveHint: false },
});

/** Every execution that reached the tool's handler, by tool call id. */
type Ran = string[];

function toolsFor(
  descriptors: ToolDescriptor[],
  policyInput: PolicyInput,
  ran: Ran,
  pins: PinStore = createMemoryPinStore(),
) {
  const handler: ToolCallHandler = async (request) => {
    ran.push(request.context.toolCallId ?? '?');
    return { content: [{ type: 'text', text: `ran ${request.context.toolCallId}` }] };
  };
  const policy = parsePolicy(policyInput);
  // r1 reaches the policy last, so side by side its question would come after r2's.
  const late: ToolCallMiddleware = {
    name: 'late-r1',
    async wrap(request, next) {
      if (request.context.toolCallId === 'r1') await new Promise((done) => setTimeout(done, 50));
      return next(request);
    },
  };
  const governed = composeMiddleware(
    [late, createPolicyMiddleware({ policy, pins, name: 'actor "t"' })],
    handler,
  );
  return descriptors.map((descriptor) => toStructuredTool(descriptor, governed));
}

function graphWith(
  tools: ReturnType<typeof toolsFor>,
  calls: ToolCall[],
  group: (call: ToolCall) => boolean,
  saver: SqliteSaver,
) {
  const agent = (state: { messages: BaseMessage[] }) =>
    state.messages.some((message) => AIMessage.isInstance(message))
      ? { messages: [new AIMessage('done')] }
      : { messages: [new AIMessage({ content: '', tool_calls: calls })] };
  return new StateGraph(MessagesAnnotation)
    .addNode('agent', agent)
    .addNode('tools', createTrackedToolNode(tools))
    .addEdge(START, 'agent')
    .addConditionalEdges('agent', routeToolCallsPerTask({ group }), ['tools', END])
    .addEdge('tools', 'agent')
    .compile({ checkpointer: saver });
}

const call = (name: string, id: string): ToolCall => ({
  name,
  id,
  args: { path: `${id}.txt`, content: id },
  type: 'tool_call',
});

function outcomes(messages: BaseMessage[]): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const message of messages) {
    if (!ToolMessage.isInstance(message)) continue;
    const artifact = message.artifact as { _meta?: Record<string, unknown> } | undefined;
    out[message.tool_call_id] = (
      artifact?._meta?.[ResultMetaKey.Policy] as PolicyRecord | undefined
    )?.outcome;
  }
  return out;
}

let dir: string;
let saver: SqliteSaver;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agents-grouped-'));
  saver = SqliteSaver.fromConnString(join(dir, 'checkpoints.sqlite'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('grouped tool calls (routeToolCallsPerTask group)', () => {
  it('runs the read-only allowed calls of a turn in one task and each write in its own', async () => {
    const ran: Ran = [];
    const tools = toolsFor([readFile, listDir, writeFile], { mode: 'auto' }, ran);
    const calls = [
      call('read_file', 'r1'),
      call('write_file', 'w1'),
      call('list_directory', 'l1'),
      call('read_file', 'r2'),
    ];
    const group = readOnlyAllowedCalls(tools, parsePolicy({ mode: 'auto' }));
    const graph = graphWith(tools, calls, group, saver);
    const config = { configurable: { thread_id: 'one-task' } };
    const done = await graph.invoke({ messages: [{ role: 'user', content: 'go' }] }, config);

    expect(outcomes(done.messages)).toEqual({
      r1: 'allowed',
      w1: 'allowed',
      l1: 'allowed',
      r2: 'allowed',
    });
    expect([...ran].sort()).toEqual(['l1', 'r1', 'r2', 'w1']);
    // The checkpoint before the tools step: one task for the three reads, one for the write.
    const history = [];
    for await (const snapshot of graph.getStateHistory(config)) history.push(snapshot);
    const beforeTools = history.filter((snapshot) => snapshot.next.includes('tools'));
    expect(beforeTools).toHaveLength(1);
    const inputs = beforeTools[0]!.tasks.map((task) => task.name);
    expect(inputs).toEqual(['tools', 'tools']);
    // The messages keep the turn's order where the group stands (at its first call).
    expect(
      done.messages.filter((m) => ToolMessage.isInstance(m)).map((m) => m.tool_call_id),
    ).toEqual(['r1', 'l1', 'r2', 'w1']);
  });

  it('pauses grouped calls that ask one at a time, each answer reaching its own call, and never runs a finished write again', async () => {
    const ran: Ran = [];
    // read_file asks by a rule the router's guess does not see: both reads pause inside the group.
    const policy: PolicyInput = {
      mode: 'auto',
      tools: { 'mcp:fs/read_file': { decision: 'ask' } },
    };
    const tools = toolsFor([readFile, listDir, writeFile], policy, ran);
    const calls = [
      call('read_file', 'r1'),
      call('list_directory', 'l1'),
      call('read_file', 'r2'),
      call('write_file', 'w1'),
    ];
    const graph = graphWith(tools, calls, (each) => each.name !== 'write_file', saver);
    const config = { configurable: { thread_id: 'deferred' } };

    const first = await graph.invoke({ messages: [{ role: 'user', content: 'go' }] }, config);
    const asked = interruptsOf(first);
    // One question at a time from the group: the first grouped call that asks.
    expect(asked).toHaveLength(1);
    expect(isApprovalPreview(asked[0]) && asked[0].toolCallId).toBe('r1');
    // The siblings that need no answer ran; the write (its own task) ran and is saved.
    expect([...ran].sort()).toEqual(['l1', 'w1']);

    const second = await graph.invoke(new Command({ resume: { type: 'approve' } }), config);
    const askedAgain = interruptsOf(second);
    expect(askedAgain).toHaveLength(1);
    expect(isApprovalPreview(askedAgain[0]) && askedAgain[0].toolCallId).toBe('r2');

    const done = await graph.invoke(
      new Command({ resume: { type: 'reject', message: 'not that one' } }),
      config,
    );
    expect(interruptsOf(done)).toEqual([]);
    // The approval went to r1, the rejection to r2: never swapped.
    expect(outcomes(done.messages)).toEqual({
      r1: 'approved',
      l1: 'allowed',
      r2: 'rejected',
      w1: 'allowed',
    });
    // The write ran once across both resumes; r2 never ran. The group runs again on each
    // resume (its results are saved at its end): l1 three times, r1 on each run it was approved.
    expect(ran.filter((id) => id === 'w1')).toHaveLength(1);
    expect(ran.filter((id) => id === 'r2')).toHaveLength(0);
    expect(ran.filter((id) => id === 'l1')).toHaveLength(3);
    expect(ran.filter((id) => id === 'r1')).toHaveLength(2);
  });

  it('hands each answer to its own call when an approval pins the tool it approved', async () => {
    const ran: Ran = [];
    // Both reads were approved before and their definitions changed since: both ask, though
    // the router groups them (it reads no pins). Approving r1 pins it, so r1 runs without a
    // question when the group runs again; r2's question must still get r2's answer.
    const stale = (descriptor: ToolDescriptor) => ({
      toolId: descriptor.id,
      fingerprint: 'old-definition',
      approvedAt: '2026-01-01T00:00:00.000Z',
      approvedBy: 'user',
    });
    const pins = createMemoryPinStore([stale(readFile), stale(listDir)]);
    const tools = toolsFor([readFile, listDir], { mode: 'auto' }, ran, pins);
    const calls = [call('read_file', 'r1'), call('list_directory', 'l1')];
    const group = readOnlyAllowedCalls(tools, parsePolicy({ mode: 'auto' }));
    const graph = graphWith(tools, calls, group, saver);
    const config = { configurable: { thread_id: 'pinned' } };

    const first = await graph.invoke({ messages: [{ role: 'user', content: 'go' }] }, config);
    // The precondition: both calls share a task and the first question is r1's.
    const before = (await graph.getState(config)).tasks;
    expect(before).toHaveLength(1);
    expect(isApprovalPreview(interruptsOf(first)[0]) && interruptsOf(first)[0]).toMatchObject({
      toolCallId: 'r1',
    });
    const second = await graph.invoke(new Command({ resume: { type: 'approve' } }), config);
    expect(interruptsOf(second)[0]).toMatchObject({ toolCallId: 'l1' });
    // r1's approval is not pinned while its group waits on l1, so r1 asks again on each run.
    expect(pins.get(readFile.id)?.fingerprint).toBe('old-definition');
    const done = await graph.invoke(
      new Command({ resume: { type: 'reject', message: 'not this one' } }),
      config,
    );
    expect(interruptsOf(done)).toEqual([]);
    expect(outcomes(done.messages)).toEqual({ r1: 'approved', l1: 'rejected' });
    expect(ran.filter((id) => id === 'l1')).toHaveLength(0);
    // Pinned once the group was done: the approved definition, not the rejected one.
    expect(pins.get(readFile.id)?.fingerprint).toBe(readFile.fingerprint);
    expect(pins.get(listDir.id)?.fingerprint).toBe('old-definition');
  });

  it('does not run a grouped call whose tool was relisted as a write after routing', async () => {
    const ran: Ran = [];
    const tools = toolsFor([readFile, listDir], { mode: 'auto' }, ran);
    // list_directory as its server lists it again between routing and running: it may write.
    const relisted = {
      ...writeFile,
      id: listDir.id,
      name: listDir.name,
      originalName: listDir.name,
    };
    const [asWrite] = toolsFor([relisted], { mode: 'auto' }, ran);
    const readOnly = readOnlyAllowedCalls(tools, parsePolicy({ mode: 'auto' }));
    const routed: string[] = [];
    const group = (each: ToolCall) => {
      const grouped = readOnly(each);
      if (grouped) routed.push(each.id!);
      // The refresh lands once the turn is routed (the tool set refreshes its array in place).
      if (routed.length === 2) tools[1] = asWrite!;
      return grouped;
    };
    const graph = graphWith(
      tools,
      [call('read_file', 'r1'), call('list_directory', 'l1')],
      group,
      saver,
    );
    const done = await graph.invoke(
      { messages: [{ role: 'user', content: 'go' }] },
      { configurable: { thread_id: 'relisted' } },
    );
    // The precondition: both calls were grouped as read-only.
    expect(routed).toEqual(['r1', 'l1']);
    const answers = done.messages.filter((m) => ToolMessage.isInstance(m)) as ToolMessage[];
    expect(answers.map((m) => [m.tool_call_id, m.status])).toEqual([
      ['r1', 'success'],
      ['l1', 'error'],
    ]);
    expect(answers[1]!.text).toMatch(/changed after this turn was planned and may write now/);
    expect(ran).toEqual(['r1']);
  });

  it('groups no call of a server that may ask about a host (its approval pins at once)', () => {
    const webRead = descriptorFor('web', {
      name: 'read_page',
      annotations: { readOnlyHint: true },
    });
    const tools = toolsFor([readFile, webRead], { mode: 'auto' }, []);
    const policy = parsePolicy({ mode: 'auto' });
    const calls = [call('read_file', 'r1'), call('read_page', 'p1')];
    // The precondition: both are read-only, allowed calls.
    expect(calls.map(readOnlyAllowedCalls(tools, policy))).toEqual([true, true]);
    expect(calls.map(readOnlyAllowedCalls(tools, policy, new Set(['web'])))).toEqual([true, false]);
  });

  it('makes every pause point of the library defer inside a group, and only there', async () => {
    const verdict = decide(readFile, parsePolicy({ mode: 'auto' }));
    const preview = toApprovalPreview(readFile, { path: 'a' }, verdict, { toolCallId: 'r1' });
    const request = { descriptor: readFile, args: { path: 'a' }, context: {} };
    const approve = () => createInterruptApprover()(preview, request);
    const question = () =>
      createInterruptInputHandler(
        readFile,
        { path: 'a' },
        'r1',
      )({
        serverName: 'fs',
        toolName: 'read_file',
        round: 1,
        questions: {
          q: {
            method: 'elicitation/create',
            params: { mode: 'form', message: 'Which?', requestedSchema: { type: 'object' } },
          },
        },
      });
    for (const pause of [approve, question]) {
      let inside: unknown;
      await runWithPausesDeferred(async () => {
        try {
          await pause();
        } catch (error) {
          inside = error;
        }
      });
      expect(isPauseDeferred(inside)).toBe(true);
      // Outside a group the same call reaches LangGraph's interrupt(), which refuses outside a graph.
      let outside: unknown;
      try {
        await pause();
      } catch (error) {
        outside = error;
      }
      expect(isPauseDeferred(outside)).toBe(false);
      expect(AgentsError.hasCode(outside, AgentsErrorCode.PolicyDenied)).toBe(true);
    }
  });
});
