import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createManagedServer, type ManagedServer } from '../../src/servers/managed-server.js';
import type { ServerEventMap } from '../../src/servers/server-events.js';
import { FAST_TIMEOUTS, resultText } from './fixture.js';

/** A stateful streamable-HTTP MCP server on 127.0.0.1 that can forget its sessions. */
async function startHttpServer() {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const stats = { initializes: 0, deletes: 0 };
  const http: Server = createServer((req, res) => {
    void (async () => {
      const sessionId = req.headers['mcp-session-id'];
      if (req.method === 'DELETE') stats.deletes += 1;
      if (typeof sessionId === 'string') {
        const transport = sessions.get(sessionId);
        if (!transport) {
          res.writeHead(404, { 'content-type': 'application/json' });
          res.end(
            JSON.stringify({
              jsonrpc: '2.0',
              error: { code: -32001, message: 'Session not found' },
              id: null,
            }),
          );
          return;
        }
        await transport.handleRequest(req, res);
        return;
      }
      stats.initializes += 1;
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          sessions.set(id, transport);
        },
      });
      const server = new McpServer({ name: 'http-fixture', version: '1.0.0' });
      server.registerTool(
        'echo',
        {
          description: 'Echo',
          inputSchema: { text: z.string() },
          annotations: { readOnlyHint: true },
        },
        ({ text }) => ({
          content: [{ type: 'text', text }],
        }),
      );
      await server.connect(transport);
      await transport.handleRequest(req, res);
    })().catch((error: unknown) => {
      res.writeHead(500).end(String(error));
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    sessions,
    stats,
    close: () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('managed server over streamable HTTP', () => {
  it('re-initializes on a 404 session, repeats the call, and ends the session with DELETE on close', async () => {
    const http = await startHttpServer();
    cleanups.push(http.close);
    const server: ManagedServer = createManagedServer({
      name: 'remote',
      transport: 'streamable-http',
      url: `${http.url}?token=secret-value`,
      trusted: true,
      timeouts: FAST_TIMEOUTS,
    });
    cleanups.push(() => server.close());
    await server.start();
    const starts: ServerEventMap['server-start'][] = [];
    server.on('server-start', (event) => starts.push(event));
    const echo = () => server.entries().find((entry) => entry.descriptor.originalName === 'echo')!;
    expect(resultText(await echo().execute({ text: 'one' }, {}))).toBe('one');
    // Session-less requests: the server/discover probe (a 2025 server answers 400), then initialize.
    expect(http.stats.initializes).toBe(2);

    http.sessions.clear(); // the server forgets the session: next request gets 404
    expect(resultText(await echo().execute({ text: 'two' }, {}))).toBe('two');
    // The restart remembers the server is 2025-era: initialize again, no second probe.
    expect(http.stats.initializes).toBe(3);
    expect(starts).toHaveLength(1);
    expect(starts[0]!.restart).toBe(true);

    const deletesBefore = http.stats.deletes;
    const sessionId = [...http.sessions.keys()][0];
    await server.close();
    expect(http.stats.deletes).toBe(deletesBefore + 1);
    expect(sessionId).toBeDefined();
  });

  it('an unreachable URL fails to start with a typed error whose target hides query secrets', async () => {
    const server = createManagedServer({
      name: 'nowhere',
      transport: 'streamable-http',
      url: 'http://127.0.0.1:9/mcp?token=secret-value',
      trusted: false,
      timeouts: { ...FAST_TIMEOUTS, startupMs: 3_000 },
    });
    cleanups.push(() => server.close());
    const error = (await server.start().catch((reason: unknown) => reason)) as {
      details: Record<string, unknown>;
      message: string;
    };
    expect(error.details.serverName).toBe('nowhere');
    expect(String(error.details.target)).not.toContain('secret-value');
    expect(error.message).not.toContain('secret-value');
  });
});
