import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { ElicitRequest, ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { createPolicyMiddleware } from '../../src/policy/policy-middleware.js';
import type { PolicyRecord } from '../../src/policy/policy-middleware.js';
import { parsePolicy } from '../../src/config/policy-schema.js';
import type { PolicyInput } from '../../src/config/policy-schema.js';
import { ResultMetaKey } from '../../src/core/tool-descriptor.js';
import { createMcpServer } from '../../src/serving/mcp-server.js';
import { capabilities, descriptor, entry } from './helpers.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Served {
  client: Client;
  /** Arguments the tool actually ran with, one item per run. */
  runs: Array<Record<string, unknown>>;
  /** Elicitation requests the client received. */
  asked: ElicitRequest['params'][];
}

/**
 * A served `write_note` tool (write-class) behind the policy middleware, and a client that
 * answers elicitation with `answer` (or declares no elicitation when `answer` is undefined).
 */
async function serve(
  answer: ((request: ElicitRequest['params']) => ElicitResult) | undefined,
  policy: PolicyInput = {},
  noElicitationHint?: string,
): Promise<Served> {
  const runs: Array<Record<string, unknown>> = [];
  const write = entry(
    descriptor('write_note', {
      id: 'mcp:notes/write_note',
      source: 'mcp',
      serverName: 'notes',
      capabilities: capabilities('write'),
    }),
    async (args) => {
      runs.push(args);
      return { content: [{ type: 'text', text: 'written' }] };
    },
  );
  const server = createMcpServer({
    entries: () => [write],
    middleware: [createPolicyMiddleware({ policy: parsePolicy(policy), name: 'actor "t"' })],
    ...(noElicitationHint === undefined ? {} : { approval: { noElicitationHint } }),
  });
  const client = new Client(
    { name: 'ide', version: '1.0.0' },
    answer === undefined ? {} : { capabilities: { elicitation: {} } },
  );
  const asked: ElicitRequest['params'][] = [];
  if (answer !== undefined) {
    client.setRequestHandler(ElicitRequestSchema, (request) => {
      asked.push(request.params);
      return answer(request.params);
    });
  }
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  await server.connect(serverTransport);
  await client.connect(clientTransport);
  cleanups.push(async () => {
    await client.close();
    await server.close();
  });
  return { client, runs, asked };
}

function policyRecord(result: unknown): PolicyRecord | undefined {
  const meta = (result as { _meta?: Record<string, unknown> })._meta;
  return meta?.[ResultMetaKey.Policy] as PolicyRecord | undefined;
}

function text(result: unknown): string {
  const content = (result as { content: Array<{ type: string; text?: string }> }).content;
  return content.map((block) => block.text ?? '').join('');
}

describe('approvals over MCP (policy mode ask)', () => {
  it('asks a client with elicitation and runs the call when it approves', async () => {
    const served = await serve(() => ({ action: 'accept', content: { decision: 'approve' } }));
    const result = await served.client.callTool({
      name: 'write_note',
      arguments: { path: 'notes/a.txt', text: 'hi' },
    });
    expect(result.isError).not.toBe(true);
    expect(text(result)).toBe('written');
    expect(served.runs).toEqual([{ path: 'notes/a.txt', text: 'hi' }]);
    expect(policyRecord(result)).toMatchObject({ outcome: 'approved', decidedBy: 'mcp-client' });

    expect(served.asked).toHaveLength(1);
    const question = served.asked[0]!;
    expect(question.message).toContain('"write_note" (mcp:notes/write_note on server "notes")');
    expect(question.message).toContain('Arguments: {"path":"notes/a.txt","text":"hi"}');
    expect(question.message).toContain('writes=true (override)');
    expect(question.message).toContain('mode ask');
    expect(question).toMatchObject({
      requestedSchema: {
        properties: { decision: { enum: ['approve', 'reject'] } },
        required: ['decision'],
      },
    });
  });

  it('refuses the call, naming the rejection, when the client declines, rejects or dismisses', async () => {
    const answers: ElicitResult[] = [
      { action: 'decline' },
      { action: 'accept', content: { decision: 'reject', reason: 'not this file' } },
      { action: 'cancel' },
    ];
    const served = await serve(() => answers.shift()!);
    const texts: string[] = [];
    for (let index = 0; index < 3; index++) {
      const result = await served.client.callTool({ name: 'write_note', arguments: { n: index } });
      expect(result.isError).toBe(true);
      expect(policyRecord(result)).toMatchObject({ outcome: 'rejected', decidedBy: 'mcp-client' });
      texts.push(text(result));
    }
    expect(texts[0]).toContain(
      'The user rejected this call of "write_note" (mcp:notes/write_note): declined in the MCP client.',
    );
    expect(texts[1]).toContain('rejected in the MCP client: not this file');
    expect(texts[2]).toContain('the approval request was dismissed');
    expect(served.runs).toEqual([]);
  });

  it('refuses with a clear isError when the client has no elicitation support', async () => {
    const served = await serve(undefined, {}, 'serve with --policy auto');
    const result = await served.client.callTool({ name: 'write_note', arguments: {} });
    expect(result.isError).toBe(true);
    expect(text(result)).toBe(
      'Tool "write_note" needs approval (mode ask: write-class tool needs approval in ask mode), ' +
        'and this MCP client ("ide") cannot be asked: it did not declare the elicitation ' +
        'capability. To run it, serve with --policy auto.',
    );
    expect(policyRecord(result)).toMatchObject({ outcome: 'denied', decidedBy: 'mcp-server' });
    expect(served.runs).toEqual([]);
  });

  it('never asks for calls the policy allows', async () => {
    const served = await serve(() => ({ action: 'decline' }), { mode: 'auto' });
    const result = await served.client.callTool({ name: 'write_note', arguments: {} });
    expect(result.isError).not.toBe(true);
    expect(served.asked).toEqual([]);
    expect(policyRecord(result)).toMatchObject({ outcome: 'allowed', decidedBy: 'policy' });
  });
});
