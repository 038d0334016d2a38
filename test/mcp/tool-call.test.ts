import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import type { NamedServerConfig } from '../../src/config/server-schema.js';
import { AgentsError } from '../../src/errors.js';
import { createMcpToolAdapter } from '../../src/mcp/tool-adapter.js';
import { createManagedServer } from '../../src/servers/managed-server.js';
import type { ServerTransport } from '../../src/servers/connect.js';

const CONFIG: NamedServerConfig = {
  name: 'upstream',
  transport: 'stdio',
  command: 'unused',
  args: [],
  trusted: false,
  timeouts: { startupMs: 5_000, callMs: 5_000, maxCallMs: 10_000, pingMs: 500, shutdownMs: 100 },
  restart: { enabled: false, maxAttempts: 0, initialDelayMs: 0, maxDelayMs: 0 },
};

/**
 * A third-party-style SDK server whose tools misbehave in set ways: `strict` throws an
 * `McpError` (invalid params, as a server's own argument check does), `stuck` never answers.
 * (`garbled` is answered on the wire by {@link linkedPair}: an SDK server checks its own results.)
 */
function misbehavingServer(onStuck: () => void): Server {
  const server = new Server(
    { name: 'upstream', version: '1.0.0' },
    { capabilities: { tools: {} } },
  );
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: [
      ...['strict', 'garbled', 'stuck'].map((name) => ({
        name,
        inputSchema: { type: 'object' as const },
        annotations: { readOnlyHint: true },
      })),
      {
        name: 'shaped',
        inputSchema: { type: 'object' as const },
        outputSchema: {
          type: 'object' as const,
          properties: { count: { type: 'number' } },
          required: ['count'],
        },
      },
    ],
  }));
  server.setRequestHandler(CallToolRequestSchema, (request, extra) => {
    const name = request.params.name;
    if (name === 'strict') {
      throw new McpError(ErrorCode.InvalidParams, 'argument "path" must be a relative path');
    }
    if (name === 'shaped') {
      return { content: [{ type: 'text', text: 'many' }], structuredContent: { count: 'many' } };
    }
    onStuck();
    return new Promise((_, reject) => {
      extra.signal.addEventListener('abort', () => reject(new Error('cancelled')));
    });
  });
  return server;
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Aborted when a call reaches `stuck`, so a cancellation always races a call in flight. */
let stuckCall = new AbortController();

async function linkedPair(): Promise<InMemoryTransport> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const server = misbehavingServer(() => stuckCall.abort());
  await server.connect(serverSide);
  cleanups.push(() => server.close());
  // A server that is not built on the SDK may answer anything: `garbled` gets a result whose
  // content is not a list of blocks.
  const deliver = serverSide.onmessage!;
  serverSide.onmessage = (message, extra) => {
    const params = 'params' in message ? message.params : undefined;
    if ('id' in message && 'method' in message && params?.['name'] === 'garbled') {
      void serverSide.send({
        jsonrpc: '2.0',
        id: message.id,
        result: { content: 'not a list of blocks' },
      });
      return;
    }
    deliver(message, extra);
  };
  return clientSide;
}

/** Calls `tool` through a plain adapter over an SDK client. */
async function viaAdapter(tool: string, signal?: AbortSignal): Promise<unknown> {
  const clientSide = await linkedPair();
  const client = new Client({ name: 'c', version: '1.0.0' });
  await client.connect(clientSide);
  cleanups.push(() => client.close());
  const adapter = createMcpToolAdapter({ serverName: 'upstream', client });
  return adapter
    .execute(tool, {}, signal === undefined ? {} : { signal })
    .catch((error: unknown) => error);
}

/** Calls `tool` through the entries of a supervised ManagedServer. */
async function viaManagedServer(tool: string, signal?: AbortSignal): Promise<unknown> {
  const clientSide = await linkedPair();
  const server = createManagedServer(CONFIG, {
    transportFactory: (): ServerTransport => ({
      transport: clientSide,
      target: 'in-memory',
      close: () => clientSide.close(),
    }),
  });
  cleanups.push(() => server.close());
  await server.start();
  const entry = server.entries().find((candidate) => candidate.descriptor.originalName === tool)!;
  return entry.execute({}, signal === undefined ? {} : { signal }).catch((error: unknown) => error);
}

function codeAndMessage(error: unknown): { code: string; message: string } {
  expect(AgentsError.isInstance(error)).toBe(true);
  const agentsError = error as AgentsError;
  return { code: agentsError.code, message: agentsError.message };
}

describe('one tools/call path', () => {
  it('maps a JSON-RPC error from the server to the same TOOL_CALL_FAILED, prefix said once, on both paths', async () => {
    const plain = codeAndMessage(await viaAdapter('strict'));
    const managed = codeAndMessage(await viaManagedServer('strict'));
    expect(plain).toEqual({
      code: 'TOOL_CALL_FAILED',
      message:
        'Tool "strict" on server "upstream" failed with MCP error -32602: argument "path" must be a relative path',
    });
    expect(managed).toEqual(plain);
    expect(plain.message.match(/MCP error/g)).toHaveLength(1);
  });

  it('keeps the JSON-RPC code in the details', async () => {
    const error = (await viaManagedServer('strict')) as AgentsError;
    expect(error.details).toMatchObject({
      serverName: 'upstream',
      phase: 'call',
      toolName: 'strict',
      mcpErrorCode: -32602,
    });
  });

  it('maps a result that is not a CallToolResult to the same PROTOCOL_ERROR on both paths', async () => {
    const plain = codeAndMessage(await viaAdapter('garbled'));
    const managed = codeAndMessage(await viaManagedServer('garbled'));
    expect(plain.code).toBe('PROTOCOL_ERROR');
    expect(plain.message).toMatch(
      /^Tool "garbled" on server "upstream" answered with a result that is not a valid MCP CallToolResult/,
    );
    expect(managed).toEqual(plain);
  });

  it('maps a cancelled call to the same ABORTED on both paths', async () => {
    stuckCall = new AbortController();
    const plain = codeAndMessage(await viaAdapter('stuck', stuckCall.signal));
    stuckCall = new AbortController();
    const managed = codeAndMessage(await viaManagedServer('stuck', stuckCall.signal));
    expect(plain).toEqual({
      code: 'ABORTED',
      message: 'Tool "stuck" on server "upstream" was cancelled; notifications/cancelled was sent.',
    });
    expect(managed).toEqual(plain);
  });

  it('refuses structuredContent that does not match the declared outputSchema the same way on both paths', async () => {
    const plain = codeAndMessage(await viaAdapter('shaped'));
    const managed = codeAndMessage(await viaManagedServer('shaped'));
    expect(plain.code).toBe('PROTOCOL_ERROR');
    expect(plain.message).toMatch(
      /^Tool "shaped" on server "upstream" returned structuredContent that does not match its outputSchema: .*count/,
    );
    expect(managed).toEqual(plain);
  });
});
