import { Command, MemorySaver } from '@langchain/langgraph';
import { ToolMessage } from '@langchain/core/messages';
import type { BaseMessage } from '@langchain/core/messages';
import { AIMessage, createAgent, fakeModel, humanInTheLoopMiddleware } from 'langchain';
import { describe, expect, it } from 'vitest';
import { toStructuredTool } from '../../src/mcp/structured-tool.js';
import { composeMiddleware } from '../../src/core/tool-middleware.js';
import { isApprovalPreview } from '../../src/policy/approval.js';
import type { ApprovalPreview } from '../../src/policy/approval.js';
import { createHumanInTheLoopPolicy } from '../../src/policy/hitl.js';
import { createMemoryPinStore } from '../../src/policy/pins.js';
import { createPolicyMiddleware } from '../../src/policy/policy-middleware.js';
import type { PolicyRecord } from '../../src/policy/policy-middleware.js';
import { parsePolicy } from '../../src/config/policy-schema.js';
import { ResultMetaKey } from '../../src/core/tool-descriptor.js';
import { contentText, descriptorFor } from './helpers.js';

const writer = descriptorFor('fs', { name: 'write_file' });
const reader = descriptorFor(
  'fs',
  { name: 'read_file', annotations: { readOnlyHint: true } },
  { trusted: true },
);
const remover = descriptorFor('fs', { name: 'delete_file' });

describe('createAgent with humanInTheLoopMiddleware driven by the policy', () => {
  it('interrupts only for ask, denies deny, and does not ask twice after approval', async () => {
    const policy = parsePolicy({
      mode: 'ask',
      rules: [{ match: { destructive: true, tool: 'delete_*' }, decision: 'deny' }],
    });
    const descriptors = [writer, reader, remover];
    const hitl = createHumanInTheLoopPolicy({ policy, tools: descriptors });
    const ran: string[] = [];
    const handler = composeMiddleware(
      [createPolicyMiddleware({ policy, approve: hitl.approve })],
      async (request) => {
        ran.push(request.descriptor.name);
        return { content: [{ type: 'text', text: `ok ${request.descriptor.name}` }] };
      },
    );
    const agent = createAgent({
      model: fakeModel()
        .respondWithTools([
          { name: 'read_file', args: { path: 'a' }, id: 'r1' },
          { name: 'write_file', args: { path: 'a', content: 'x' }, id: 'w1' },
          { name: 'delete_file', args: { path: 'a' }, id: 'd1' },
        ])
        .respond(new AIMessage('finished')),
      tools: descriptors.map((descriptor) => toStructuredTool(descriptor, handler)),
      middleware: [humanInTheLoopMiddleware({ interruptOn: hitl.interruptOn })],
      checkpointer: new MemorySaver(),
    });
    const config = { configurable: { thread_id: 'hitl-1' } };
    const paused = await agent.invoke({ messages: [{ role: 'user', content: 'go' }] }, config);
    const request = paused.__interrupt__?.[0]?.value as {
      actionRequests: Array<{ name: string; description?: string }>;
    };
    expect(request.actionRequests.map((action) => action.name)).toEqual(['write_file']);
    expect(request.actionRequests[0]?.description).toContain('mode ask');
    expect(ran).toEqual([]);

    const done = await agent.invoke(
      new Command({ resume: { decisions: [{ type: 'approve' }] } }),
      config,
    );
    expect(done.__interrupt__).toBeUndefined();
    expect(ran.sort()).toEqual(['read_file', 'write_file']);
    const messages = done.messages.filter(
      (message): message is ToolMessage => message instanceof ToolMessage,
    );
    const byId = new Map(messages.map((message) => [message.tool_call_id, message]));
    expect(byId.get('d1')?.status).toBe('error');
    expect(contentText(byId.get('d1'))).toContain('rules[0]');
    const record = (byId.get('w1')?.artifact as { _meta?: Record<string, unknown> })._meta?.[
      ResultMetaKey.Policy
    ] as PolicyRecord;
    expect(record).toMatchObject({ outcome: 'approved', decidedBy: 'hitl' });
    expect(done.messages.at(-1)?.content).toBe('finished');
  });
});

function policyRecordOf(message: ToolMessage | undefined): PolicyRecord | undefined {
  const artifact = message?.artifact as { _meta?: Record<string, unknown> } | undefined;
  return artifact?._meta?.[ResultMetaKey.Policy] as PolicyRecord | undefined;
}

function toolMessagesOf(messages: BaseMessage[]): Map<string, ToolMessage> {
  return new Map(
    messages
      .filter((message): message is ToolMessage => message instanceof ToolMessage)
      .map((message) => [message.tool_call_id, message]),
  );
}

describe('createHumanInTheLoopPolicy().approve: only calls HITL put to a human count as approved', () => {
  it('asks through the fallback when the active skill’s allowed-tools makes a call ask that HITL let through', async () => {
    // auto mode: HITL's `when` (which cannot see allowed-tools) says allow; the middleware, which
    // sees `write_file(notes/*)`, says ask. Nobody saw this call, so it must not run as approved.
    const policy = parsePolicy({ mode: 'auto' });
    const asked: ApprovalPreview[] = [];
    const hitl = createHumanInTheLoopPolicy({
      policy,
      tools: [writer],
      fallback: (preview) => {
        asked.push(preview);
        return { type: 'reject', message: 'not reviewed', by: 'fallback' };
      },
    });
    const ran: string[] = [];
    const handler = composeMiddleware(
      [
        createPolicyMiddleware({
          policy,
          approve: hitl.approve,
          activeSkillAllowedTools: () => ['write_file(notes/*)'],
        }),
      ],
      async (request) => {
        ran.push(request.descriptor.name);
        return { content: [{ type: 'text', text: 'written' }] };
      },
    );
    const agent = createAgent({
      model: fakeModel()
        .respondWithTools([{ name: 'write_file', args: { path: 'a', content: 'x' }, id: 'w1' }])
        .respond(new AIMessage('finished')),
      tools: [toStructuredTool(writer, handler)],
      middleware: [humanInTheLoopMiddleware({ interruptOn: hitl.interruptOn })],
      checkpointer: new MemorySaver(),
    });
    const done = await agent.invoke(
      { messages: [{ role: 'user', content: 'go' }] },
      { configurable: { thread_id: 'hitl-allowed-tools' } },
    );
    expect(done.__interrupt__).toBeUndefined();
    expect(asked.map((preview) => [preview.toolId, preview.toolCallId, preview.rule])).toEqual([
      ['mcp:fs/write_file', 'w1', 'allowed-tools of the active skill'],
    ]);
    expect(ran).toEqual([]);
    expect(policyRecordOf(toolMessagesOf(done.messages).get('w1'))).toMatchObject({
      decision: 'ask',
      outcome: 'rejected',
      decidedBy: 'fallback',
      message: 'not reviewed',
    });
  });

  it('pauses with its own approval interrupt when a definition change is known only to the middleware’s pins', async () => {
    // The pins were given to createPolicyMiddleware only: HITL's `when` sees no pin and lets the
    // call through; the middleware sees the changed fingerprint and asks.
    const policy = parsePolicy({ mode: 'auto' });
    const pins = createMemoryPinStore([
      {
        toolId: writer.id,
        fingerprint: 'f'.repeat(64),
        approvedAt: '2026-01-01T00:00:00.000Z',
        approvedBy: 'user',
      },
    ]);
    const hitl = createHumanInTheLoopPolicy({ policy, tools: [writer] });
    const ran: string[] = [];
    const handler = composeMiddleware(
      [createPolicyMiddleware({ policy, pins, approve: hitl.approve })],
      async (request) => {
        ran.push(request.descriptor.name);
        return { content: [{ type: 'text', text: 'written' }] };
      },
    );
    const agent = createAgent({
      model: fakeModel()
        .respondWithTools([{ name: 'write_file', args: { path: 'a', content: 'x' }, id: 'w1' }])
        .respond(new AIMessage('finished')),
      tools: [toStructuredTool(writer, handler)],
      middleware: [humanInTheLoopMiddleware({ interruptOn: hitl.interruptOn })],
      checkpointer: new MemorySaver(),
    });
    const config = { configurable: { thread_id: 'hitl-pin' } };
    const paused = await agent.invoke({ messages: [{ role: 'user', content: 'go' }] }, config);
    const previews = (paused.__interrupt__ ?? []).map((item) => item.value);
    expect(previews).toHaveLength(1);
    const preview = previews[0];
    expect(isApprovalPreview(preview)).toBe(true);
    expect(preview).toMatchObject({
      toolId: 'mcp:fs/write_file',
      toolCallId: 'w1',
      rule: 'pin of mcp:fs/write_file',
      pinnedFingerprint: 'f'.repeat(64),
      fingerprint: writer.fingerprint,
    });
    expect(ran).toEqual([]);

    const done = await agent.invoke(
      new Command({ resume: { type: 'approve', by: 'alice' } }),
      config,
    );
    expect(done.__interrupt__).toBeUndefined();
    expect(ran).toEqual(['write_file']);
    expect(policyRecordOf(toolMessagesOf(done.messages).get('w1'))).toMatchObject({
      outcome: 'approved',
      decidedBy: 'alice',
      rule: 'pin of mcp:fs/write_file',
    });
    expect(pins.get(writer.id)?.fingerprint).toBe(writer.fingerprint);
  });

  it('does not count a call as HITL-approved when HITL is not in the agent at all', async () => {
    const policy = parsePolicy({ mode: 'ask' });
    const asked: string[] = [];
    const hitl = createHumanInTheLoopPolicy({
      policy,
      tools: [writer],
      fallback: (preview) => {
        asked.push(preview.toolCallId ?? '');
        return { type: 'reject' };
      },
    });
    const ran: string[] = [];
    const handler = composeMiddleware(
      [createPolicyMiddleware({ policy, approve: hitl.approve })],
      async (request) => {
        ran.push(request.descriptor.name);
        return { content: [{ type: 'text', text: 'written' }] };
      },
    );
    const result = await handler({
      descriptor: writer,
      args: { path: 'a' },
      context: { toolCallId: 'w1', threadId: 't' },
    });
    expect(result.isError).toBe(true);
    expect(asked).toEqual(['w1']);
    expect(ran).toEqual([]);
  });
});

describe('createHumanInTheLoopPolicy().approve after a HITL edit', () => {
  it('asks again through the fallback when the human’s edit turned the call into another tool', async () => {
    const policy = parsePolicy({ mode: 'ask' });
    const asked: string[] = [];
    const hitl = createHumanInTheLoopPolicy({
      policy,
      tools: [writer, remover],
      fallback: (preview) => {
        asked.push(`${preview.toolName} ${preview.toolCallId ?? ''}`);
        return { type: 'reject', by: 'fallback' };
      },
    });
    const ran: string[] = [];
    const handler = composeMiddleware(
      [createPolicyMiddleware({ policy, approve: hitl.approve })],
      async (request) => {
        ran.push(request.descriptor.name);
        return { content: [{ type: 'text', text: 'done' }] };
      },
    );
    const agent = createAgent({
      model: fakeModel()
        .respondWithTools([{ name: 'write_file', args: { path: 'a', content: 'x' }, id: 'w1' }])
        .respond(new AIMessage('finished')),
      tools: [writer, remover].map((descriptor) => toStructuredTool(descriptor, handler)),
      middleware: [humanInTheLoopMiddleware({ interruptOn: hitl.interruptOn })],
      checkpointer: new MemorySaver(),
    });
    const config = { configurable: { thread_id: 'hitl-edit' } };
    const paused = await agent.invoke({ messages: [{ role: 'user', content: 'go' }] }, config);
    expect(paused.__interrupt__).toHaveLength(1);
    const done = await agent.invoke(
      new Command({
        resume: {
          decisions: [{ type: 'edit', editedAction: { name: 'delete_file', args: { path: 'a' } } }],
        },
      }),
      config,
    );
    expect(asked).toEqual(['delete_file w1']);
    expect(ran).toEqual([]);
    expect(policyRecordOf(toolMessagesOf(done.messages).get('w1'))).toMatchObject({
      outcome: 'rejected',
      decidedBy: 'fallback',
    });
  });
});
