import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { NamedServerConfig } from '../../src/config/server-schema.js';
import { ServerConfigSchema } from '../../src/config/server-schema.js';
import { argumentBytesOverLimit } from '../../src/servers/argument-size.js';
import { DEFAULT_MAX_ARGUMENT_BYTES } from '../../src/config/server-schema.js';
import { createManagedServer, type ManagedServer } from '../../src/servers/managed-server.js';
import { resultText } from './fixture.js';

let server: ManagedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A managed server over an in-memory McpServer that counts the tools/call requests it gets. */
async function startCounting(config: Partial<NamedServerConfig> = {}) {
  const seen = { calls: 0 };
  const mcp = new McpServer({ name: 'sizes', version: '1.0.0' });
  mcp.registerTool(
    'store',
    { description: 'Store text', inputSchema: { text: z.string() } },
    ({ text }) => {
      seen.calls += 1;
      return { content: [{ type: 'text', text: `stored ${text.length}` }] };
    },
  );
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await mcp.connect(serverSide);
  server = createManagedServer(
    {
      name: 'sizes',
      transport: 'stdio',
      command: 'unused',
      args: [],
      trusted: false,
      ...config,
    } as NamedServerConfig,
    {
      transportFactory: () => ({
        transport: clientSide,
        target: 'in-memory',
        close: () => clientSide.close(),
      }),
    },
  );
  await server.start();
  return seen;
}

describe('argument size cap (L13)', () => {
  it('a call over maxArgumentBytes gets an error result naming the limit and is never sent', async () => {
    const seen = await startCounting({ maxArgumentBytes: 1_000 });
    const args = { text: 'x'.repeat(2_000) };
    const over = await server!.callTool('store', args, {});
    expect(over.isError).toBe(true);
    expect(resultText(over)).toContain(
      `${JSON.stringify(args).length} bytes of JSON, over the limit of 1000 bytes (maxArgumentBytes)`,
    );
    expect(resultText(over)).toContain('not sent');
    expect(seen.calls).toBe(0);

    const under = await server!.callTool('store', { text: 'x'.repeat(900) }, {});
    expect(under.isError).toBeFalsy();
    expect(resultText(under)).toBe('stored 900');
    expect(seen.calls).toBe(1);
  });

  it('the default cap is 8 MB', async () => {
    const seen = await startCounting();
    const over = await server!.callTool(
      'store',
      { text: 'y'.repeat(DEFAULT_MAX_ARGUMENT_BYTES) },
      {},
    );
    expect(over.isError).toBe(true);
    expect(resultText(over)).toContain(`limit of ${DEFAULT_MAX_ARGUMENT_BYTES} bytes`);
    expect(seen.calls).toBe(0);
  });

  it('measures the JSON size exactly near the limit, including escapes and multi-byte text', () => {
    const args = { text: '\u0001'.repeat(100), other: ['é', 1, true, null, { nested: '"' }] };
    const exact = Buffer.byteLength(JSON.stringify(args), 'utf8');
    expect(argumentBytesOverLimit(args, exact)).toBeUndefined();
    expect(argumentBytesOverLimit(args, exact - 1)).toBe(exact);
    // Small calls are answered by the walk alone.
    expect(argumentBytesOverLimit({ path: 'a.txt' }, 1_000)).toBeUndefined();
    // Many small values are summed, not just long strings.
    const many = { items: Array.from({ length: 20_000 }, (_, index) => index) };
    expect(argumentBytesOverLimit(many, 1_000)).toBe(Buffer.byteLength(JSON.stringify(many)));
  });

  it('the server config schema accepts maxArgumentBytes and rejects a non-positive one', () => {
    const base = { transport: 'stdio', command: 'srv' };
    expect(ServerConfigSchema.parse({ ...base, maxArgumentBytes: 1024 })).toMatchObject({
      maxArgumentBytes: 1024,
    });
    expect(ServerConfigSchema.safeParse({ ...base, maxArgumentBytes: 0 }).success).toBe(false);
  });
});
