/**
 * The reference beside `agents serve` in scripts/conformance-serve.sh: a one-tool MCP server on
 * the SDK v2 `createMcpHandler` (both revisions: 2026-07-28, and 2025-era traffic through its
 * stateless fallback), on 127.0.0.1 behind the SDK's own localhost Host/Origin checks. Prints
 * `MCP endpoint: URL` on stdout once listening.
 *
 *   tsx scripts/conformance-reference-server.ts [port]
 */
import { createServer } from 'node:http';
import {
  createMcpHandler,
  hostHeaderValidationResponse,
  localhostAllowedHostnames,
  localhostAllowedOrigins,
  McpServer,
  originValidationResponse,
} from '@modelcontextprotocol/server';
import { z } from 'zod';

const handler = createMcpHandler(() => {
  const server = new McpServer({ name: 'sdk-v2-reference', version: '1.0.0' });
  server.registerTool(
    'echo',
    { description: 'Echoes its text.', inputSchema: z.object({ text: z.string() }) },
    ({ text }) => ({ content: [{ type: 'text', text }] }),
  );
  return server;
});

const http = createServer((req, res) => {
  void (async () => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
    }
    const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
    const request = new Request(`http://${req.headers.host}${req.url}`, {
      method: req.method ?? 'GET',
      headers,
      ...(body === undefined || req.method === 'GET' ? {} : { body: new Uint8Array(body) }),
    });
    const response =
      hostHeaderValidationResponse(request, localhostAllowedHostnames()) ??
      originValidationResponse(request, localhostAllowedOrigins()) ??
      (await handler.fetch(request));
    const out: Record<string, string> = {};
    response.headers.forEach((value, name) => {
      out[name] = value;
    });
    res.writeHead(response.status, out);
    if (response.body !== null) {
      const reader = response.body.getReader();
      res.once('close', () => void reader.cancel().catch(() => undefined));
      for (;;) {
        const { done, value } = await reader.read().catch(() => ({ done: true, value: undefined }));
        if (done) break;
        res.write(value);
      }
    }
    res.end();
  })().catch(() => {
    if (!res.headersSent) res.writeHead(500);
    res.end();
  });
});

http.listen(Number(process.argv[2] ?? 0), '127.0.0.1', () => {
  const address = http.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  process.stdout.write(`MCP endpoint: http://127.0.0.1:${port}/mcp\n`);
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    http.closeAllConnections();
    http.close(() => process.exit(0));
  });
}
