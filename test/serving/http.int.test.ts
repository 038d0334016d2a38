import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolResultSchema,
  ErrorCode,
  LATEST_PROTOCOL_VERSION,
} from '@modelcontextprotocol/sdk/types.js';
import { serveHttp } from '../../src/serving/http.js';
import type { McpHttpServer, ServeHttpOptions } from '../../src/serving/http-options.js';
import { createMcpServer } from '../../src/serving/mcp-server.js';
import { createServedToolSet } from '../../src/serving/served-tool-set.js';
import { echoEntry } from './helpers.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function start(options: Partial<ServeHttpOptions> = {}): Promise<McpHttpServer> {
  const toolSet = createServedToolSet({ entries: () => [echoEntry('echo')] });
  const http = await serveHttp({ createServer: () => createMcpServer({ toolSet }), ...options });
  cleanups.push(async () => {
    await http.close();
    toolSet.close();
  });
  return http;
}

async function connectClient(
  url: URL,
  token?: string,
): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const transport = new StreamableHTTPClientTransport(url, {
    requestInit: token === undefined ? {} : { headers: { authorization: `Bearer ${token}` } },
  });
  const client = new Client({ name: 'http-test', version: '1.0.0' });
  await client.connect(transport);
  cleanups.push(() => client.close());
  return { client, transport };
}

interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A raw HTTP request, so tests control Host, Origin and framing exactly. */
function raw(
  url: URL,
  options: {
    method?: string;
    headers?: Record<string, string>;
    body?: string | Buffer;
    chunked?: boolean;
  },
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: options.method ?? 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...options.headers,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString(),
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', (error: NodeJS.ErrnoException) => {
      // The server may cut an oversized upload short after answering 413.
      if (error.code === 'EPIPE' || error.code === 'ECONNRESET') return;
      reject(error);
    });
    if (options.body !== undefined) {
      if (options.chunked === true) {
        const body = Buffer.isBuffer(options.body) ? options.body : Buffer.from(options.body);
        for (let offset = 0; offset < body.length; offset += 64 * 1024) {
          req.write(body.subarray(offset, offset + 64 * 1024));
        }
      } else {
        req.setHeader('content-length', Buffer.byteLength(options.body));
        req.write(options.body);
      }
    }
    req.end();
  });
}

const initializeBody = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: {
    protocolVersion: LATEST_PROTOCOL_VERSION,
    capabilities: {},
    clientInfo: { name: 'raw', version: '1.0.0' },
  },
});

describe('serveHttp', () => {
  it('binds 127.0.0.1 by default and serves initialize, tools/list and tools/call', async () => {
    const http = await start();
    expect(http.host).toBe('127.0.0.1');
    expect(http.url.hostname).toBe('127.0.0.1');
    const { client } = await connectClient(http.url);
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['echo']);
    const result = await client.callTool({ name: 'echo', arguments: { text: 'hi' } });
    expect(result.content).toEqual([{ type: 'text', text: '{"text":"hi"}' }]);
    expect(http.sessionCount).toBe(1);
  });

  it('answers an unknown tool with -32602 over HTTP', async () => {
    const http = await start();
    const { client } = await connectClient(http.url);
    const error = await client
      .request(
        { method: 'tools/call', params: { name: 'missing', arguments: {} } },
        CallToolResultSchema,
      )
      .catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: ErrorCode.InvalidParams });
  });

  it('gives each session a random id and ends it on DELETE; the id is then unknown (404)', async () => {
    const http = await start();
    const first = await connectClient(http.url);
    const second = await connectClient(http.url);
    const firstId = first.transport.sessionId!;
    expect(firstId).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    expect(second.transport.sessionId).not.toBe(firstId);
    expect(http.sessionCount).toBe(2);
    await first.transport.terminateSession();
    await expect.poll(() => http.sessionCount).toBe(1);
    const after = await raw(http.url, {
      headers: { 'mcp-session-id': firstId },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
    });
    expect(after.status).toBe(404);
    // The other session is untouched.
    expect((await second.client.listTools()).tools).toHaveLength(1);
  });

  it('answers 404 for a made-up session id and 400 for a non-initialize request without one', async () => {
    const http = await start();
    const unknown = await raw(http.url, {
      headers: { 'mcp-session-id': '00000000-0000-4000-8000-000000000000' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
    });
    expect(unknown.status).toBe(404);
    expect(JSON.parse(unknown.body)).toMatchObject({ error: { code: -32001 } });
    const missing = await raw(http.url, {
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
    });
    expect(missing.status).toBe(400);
    expect(http.sessionCount).toBe(0);
  });

  it('rejects a foreign Origin or Host with 403, accepts no Origin and our own origin', async () => {
    const http = await start();
    const evilOrigin = await raw(http.url, {
      headers: { origin: 'http://evil.example' },
      body: initializeBody,
    });
    expect(evilOrigin.status).toBe(403);
    const nullOrigin = await raw(http.url, { headers: { origin: 'null' }, body: initializeBody });
    expect(nullOrigin.status).toBe(403);
    const evilHost = await raw(http.url, {
      headers: { host: `evil.example:${http.port}` },
      body: initializeBody,
    });
    expect(evilHost.status).toBe(403);
    expect(http.sessionCount).toBe(0);
    const noOrigin = await raw(http.url, { body: initializeBody });
    expect(noOrigin.status).toBe(200);
    const ownOrigin = await raw(http.url, {
      headers: { origin: `http://localhost:${http.port}` },
      body: initializeBody,
    });
    expect(ownOrigin.status).toBe(200);
    for (const response of [evilOrigin, noOrigin, ownOrigin]) {
      expect(response.headers['access-control-allow-origin']).toBeUndefined();
    }
  });

  it('answers 413 to a body over the cap, declared or streamed', async () => {
    const http = await start({ maxBodyBytes: 1024 });
    const big = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { pad: 'x'.repeat(4096) },
    });
    const declared = await raw(http.url, { body: big });
    expect(declared.status).toBe(413);
    const streamed = await raw(http.url, { body: 'x'.repeat(300 * 1024), chunked: true });
    expect(streamed.status).toBe(413);
    expect(http.sessionCount).toBe(0);
    // A body under the cap still works.
    expect((await raw(http.url, { body: initializeBody })).status).toBe(200);
  });

  it('requires the bearer token when one is set (401 without or with a wrong one)', async () => {
    const http = await start({ token: 's3cret' });
    const none = await raw(http.url, { body: initializeBody });
    expect(none.status).toBe(401);
    expect(none.headers['www-authenticate']).toBe('Bearer');
    const wrong = await raw(http.url, {
      headers: { authorization: 'Bearer nope' },
      body: initializeBody,
    });
    expect(wrong.status).toBe(401);
    const { client } = await connectClient(http.url, 's3cret');
    expect((await client.listTools()).tools).toHaveLength(1);
  });

  it('refuses a non-loopback bind without the explicit flag and a token', async () => {
    await expect(
      serveHttp({ createServer: () => createMcpServer({ entries: () => [] }), host: '0.0.0.0' }),
    ).rejects.toThrow(/non-loopback host "0.0.0.0"/);
    await expect(
      serveHttp({
        createServer: () => createMcpServer({ entries: () => [] }),
        host: '0.0.0.0',
        allowNonLoopback: true,
      }),
    ).rejects.toMatchObject({ code: 'CONFIG_INVALID' });
  });

  it('closes cleanly with an open SSE stream and sessions alive', async () => {
    const toolSet = createServedToolSet({ entries: () => [echoEntry('echo')] });
    const http = await serveHttp({ createServer: () => createMcpServer({ toolSet }) });
    const { client } = await connectClient(http.url);
    await client.listTools();
    // The SDK client opens the standalone GET stream after initialize; give it a moment.
    await http.close();
    expect(http.sessionCount).toBe(0);
    await expect(raw(http.url, { body: initializeBody })).rejects.toThrow(/ECONNREFUSED/);
    await http.close();
    toolSet.close();
  });
});
