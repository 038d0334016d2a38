import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  CallToolResultSchema,
  ErrorCode,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';
import { parseServeArgs } from '../../src/cli/commands/serve.js';
import { errorMessage } from '../../src/errors.js';
import { createClientCaller } from '../../src/mcp/tool-call.js';
import { createMcpServer } from '../../src/serving/mcp-server.js';
import { serveEntries } from '../../src/serving/serve-entries.js';
import { echoEntry } from './helpers.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('agents serve: an empty token is refused, never read as "no authentication"', () => {
  it('refuses --token "" and an empty AGENTS_SERVE_TOKEN with a clear usage error', () => {
    const http = ['--skill', 'files', '--transport', 'http'];
    expect(() => parseServeArgs([...http, '--token', ''])).toThrow(/--token is empty/);
    expect(() => parseServeArgs([...http, '--token', '  '])).toThrow(/--token is empty/);
    expect(() => parseServeArgs(http, { AGENTS_SERVE_TOKEN: '' })).toThrow(
      /AGENTS_SERVE_TOKEN is set but empty/,
    );
    expect(() => parseServeArgs(http, { AGENTS_SERVE_TOKEN: '' })).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENTS' }),
    );
    // An explicit --token wins over an empty variable; no token at all stays allowed.
    expect(parseServeArgs([...http, '--token', 't'], { AGENTS_SERVE_TOKEN: '' }).token).toBe('t');
    expect(parseServeArgs(http, {}).token).toBeUndefined();
  });

  it('parses --max-sessions and --session-idle (seconds) for HTTP and rejects them for stdio', () => {
    expect(
      parseServeArgs([
        '--actor',
        'coder',
        '--transport',
        'http',
        '--max-sessions',
        '8',
        '--session-idle',
        '90',
      ]),
    ).toMatchObject({ maxSessions: 8, sessionIdleMs: 90_000 });
    expect(() => parseServeArgs(['--actor', 'coder', '--max-sessions', '8'])).toThrow(
      /--transport http only/,
    );
    expect(() =>
      parseServeArgs(['--actor', 'coder', '--transport', 'http', '--max-sessions', '0']),
    ).toThrow(/--max-sessions must be a positive integer/);
  });
});

describe('agents serve over stdio: a message over the size cap', () => {
  it('answers a line over the cap with a JSON-RPC error naming the limit and keeps serving', async () => {
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const lines: string[] = [];
    let partial = '';
    stdout.on('data', (chunk: Buffer) => {
      const parts = (partial + chunk.toString()).split('\n');
      partial = parts.pop() ?? '';
      lines.push(...parts);
    });
    const logs: string[] = [];
    const served = serveEntries({
      entries: () => [echoEntry('echo')],
      transport: 'stdio',
      stdio: { stdin, stdout },
      log: (line) => logs.push(line),
    });
    cleanups.push(async () => {
      stdin.end();
      await served;
    });
    const client = new Client({ name: 'host', version: '1.0.0' });
    await client.connect(new StdioServerTransport(stdout, stdin));
    cleanups.push(() => client.close());

    // 11 MiB in one tools/call, written the way the SDK does (id last), in 1 MiB chunks.
    const huge = JSON.stringify({
      method: 'tools/call',
      params: { name: 'echo', arguments: { text: 'x'.repeat(11 * 1024 * 1024) } },
      jsonrpc: '2.0',
      id: 'big-1',
    });
    for (let offset = 0; offset < huge.length; offset += 1024 * 1024) {
      stdin.write(huge.slice(offset, offset + 1024 * 1024));
    }
    stdin.write('\n');
    // id first, as other clients write it.
    stdin.write(
      `${JSON.stringify({ jsonrpc: '2.0', id: 77, method: 'tools/call', params: { name: 'echo', arguments: { text: 'y'.repeat(10 * 1024 * 1024 + 1) } } })}\n`,
    );
    const errors = (): Array<{ id: unknown; error: { code: number; message: string } }> =>
      lines
        .map(
          (line) => JSON.parse(line) as { id?: unknown; error?: { code: number; message: string } },
        )
        .filter((message) => message.error !== undefined) as Array<{
        id: unknown;
        error: { code: number; message: string };
      }>;
    await expect.poll(() => errors().length).toBe(2);
    expect(errors()[0]).toMatchObject({
      id: 'big-1',
      error: { code: -32600, message: expect.stringMatching(/over the limit of 10485760 bytes/) },
    });
    expect(errors()[1]).toMatchObject({ id: 77, error: { code: -32600 } });
    expect(logs.join('\n')).toMatch(/Request too large/);

    // Still up: a normal call right after is answered.
    const result = await client.callTool({ name: 'echo', arguments: { text: 'ok' } });
    expect(result.content).toEqual([{ type: 'text', text: '{"text":"ok"}' }]);
    // A line that is not JSON gets a parse error, and the server is still up.
    stdin.write('not json\n');
    await expect.poll(() => errors().some((message) => message.error.code === -32700)).toBe(true);
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['echo']);
  });

  it('honours a smaller cap (--max-body) for stdio', async () => {
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const served = serveEntries({
      entries: () => [echoEntry('echo')],
      transport: 'stdio',
      stdio: { stdin, stdout },
      maxStdioMessageBytes: 4096,
    });
    cleanups.push(async () => {
      stdin.end();
      await served;
    });
    const client = new Client({ name: 'host', version: '1.0.0' });
    await client.connect(new StdioServerTransport(stdout, stdin));
    cleanups.push(() => client.close());
    const error = await client
      .callTool({ name: 'echo', arguments: { text: 'z'.repeat(8192) } })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(McpError);
    expect((error as McpError).code).toBe(-32600);
    expect((error as McpError).message).toMatch(/over the limit of 4096 bytes/);
    expect((await client.callTool({ name: 'echo', arguments: { text: 'a' } })).content).toEqual([
      { type: 'text', text: '{"text":"a"}' },
    ]);
  });
});

describe('error texts are wrapped once', () => {
  it('says "MCP error -32602:" once for an unknown tool, on the wire and in our client errors', async () => {
    const server = createMcpServer({ entries: () => [echoEntry('echo')] });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: 'c', version: '1.0.0' });
    await client.connect(clientSide);
    cleanups.push(async () => {
      await client.close();
      await server.close();
    });
    const error = await client
      .request(
        { method: 'tools/call', params: { name: 'nope', arguments: {} } },
        CallToolResultSchema,
      )
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(McpError);
    expect((error as McpError).message).toBe(
      'MCP error -32602: Unknown tool "nope". Call tools/list for the tools this server offers now.',
    );
  });

  it('says it once in our client errors when a third-party SDK server put it in its message', async () => {
    // An SDK server that throws McpError sends "MCP error -32602: ..." as the message, and the
    // SDK client's McpError prefixes it again.
    const upstream = new Server(
      { name: 'third-party', version: '1.0.0' },
      { capabilities: { tools: {} } },
    );
    upstream.setRequestHandler(CallToolRequestSchema, (request) => {
      throw new McpError(ErrorCode.InvalidParams, `Tool ${request.params.name} not found`);
    });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await upstream.connect(serverSide);
    const client = new Client({ name: 'c', version: '1.0.0' });
    await client.connect(clientSide);
    cleanups.push(async () => {
      await client.close();
      await upstream.close();
    });
    const caller = createClientCaller(client, 'fs');
    const error = await caller.callTool('bad', {}, {}).catch((caught: unknown) => caught);
    expect(errorMessage(error)).toBe(
      'Tool "bad" on server "fs" failed with MCP error -32602: Tool bad not found',
    );
    expect(errorMessage(new McpError(-32602, 'MCP error -32602: Tool bad not found'))).toBe(
      'MCP error -32602: Tool bad not found',
    );
  });
});
