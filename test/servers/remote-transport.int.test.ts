import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { afterEach, describe, expect, it } from 'vitest';
import { ServerConfigSchema } from '../../src/config/server-schema.js';
import type { NamedServerConfig } from '../../src/config/server-schema.js';
import { createManagedServer } from '../../src/servers/managed-server.js';
import { FAST_TIMEOUTS, resultText } from './fixture.js';

/** A legacy MCP server that speaks only the old HTTP+SSE transport (GET /sse, POST /messages). */
async function startSseOnlyServer(): Promise<{
  url: URL;
  posts: () => number;
  close(): Promise<void>;
}> {
  const transports = new Map<string, SSEServerTransport>();
  let streamablePosts = 0;
  const http: Server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      if (req.method === 'GET' && url.pathname === '/sse') {
        const transport = new SSEServerTransport('/messages', res);
        transports.set(transport.sessionId, transport);
        const server = new McpServer({ name: 'legacy-sse', version: '1.0.0' });
        server.registerTool('ping_legacy', { description: 'Answers pong' }, () => ({
          content: [{ type: 'text', text: 'pong' }],
        }));
        await server.connect(transport);
        return;
      }
      if (req.method === 'POST' && url.pathname === '/messages') {
        const transport = transports.get(url.searchParams.get('sessionId') ?? '');
        if (!transport) {
          res.writeHead(404).end();
          return;
        }
        await transport.handlePostMessage(req, res);
        return;
      }
      // What a pre-2025-03-26 server answers a streamable-HTTP POST to its SSE URL.
      if (req.method === 'POST') streamablePosts += 1;
      res.writeHead(405).end();
    })().catch((error: unknown) => res.writeHead(500).end(String(error)));
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', () => resolve()));
  const port = (http.address() as AddressInfo).port;
  return {
    url: new URL(`http://127.0.0.1:${port}/sse`),
    posts: () => streamablePosts,
    close: () =>
      new Promise<void>((resolve) => {
        for (const transport of transports.values()) void transport.close();
        http.close(() => resolve());
        http.closeAllConnections();
      }),
  };
}

describe('a url without a type (transport auto)', () => {
  let legacy: Awaited<ReturnType<typeof startSseOnlyServer>> | undefined;
  afterEach(async () => {
    await legacy?.close();
    legacy = undefined;
  });

  it('tries streamable HTTP, then falls back to SSE for a legacy server', async () => {
    legacy = await startSseOnlyServer();
    // The shape of a Cursor / Claude Desktop entry: just a url.
    const config = {
      ...ServerConfigSchema.parse({ url: legacy.url.href, timeouts: FAST_TIMEOUTS }),
      name: 'legacy',
    } as NamedServerConfig;
    expect(config.transport).toBe('auto');
    await using server = createManagedServer(config, { runDir: null });
    await server.start();
    expect(server.entries().map((entry) => entry.descriptor.originalName)).toEqual(['ping_legacy']);
    expect(resultText(await server.callTool('ping_legacy', {}, {}))).toBe('pong');
    // The server/discover probe (405: a 2025-era server), one streamable-HTTP initialize (405),
    // then SSE for good.
    expect(legacy.posts()).toBe(2);
  });
});
