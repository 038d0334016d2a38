import { Command, MemorySaver } from '@langchain/langgraph';
import { ToolMessage } from '@langchain/core/messages';
import { AIMessage, createAgent, fakeModel, humanInTheLoopMiddleware } from 'langchain';
import { describe, expect, it } from 'vitest';
import { toStructuredTool } from '../../src/mcp/structured-tool.js';
import { composeMiddleware } from '../../src/middleware/types.js';
import { createHumanInTheLoopPolicy } from '../../src/policy/hitl.js';
import { createPolicyMiddleware } from '../../src/policy/policy-middleware.js';
import type { PolicyRecord } from '../../src/policy/policy-middleware.js';
import { parsePolicy } from '../../src/policy/schema.js';
import { ResultMetaKey } from '../../src/registry/tool-descriptor.js';
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
