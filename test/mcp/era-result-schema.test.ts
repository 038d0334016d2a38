import { Client } from '@modelcontextprotocol/client';
import { InMemoryTransport, McpServer } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { eraResultSchema } from '../../src/mcp/call-request.js';
import { createMcpToolAdapter } from '../../src/mcp/tool-adapter.js';

/**
 * A 2025-era call over the SDK v2 client validates its result with the era's own codec, as
 * `request()` without a schema does, but without the SDK's per-call probe (a zod parse of
 * `undefined` whose failure is turned into a string).
 */
describe('the 2025-era result schema', () => {
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const close of closers.splice(0)) await close();
  });

  async function connect2025(): Promise<Client> {
    const server = new McpServer(
      { name: 'era', version: '1.0.0' },
      { capabilities: { tools: {} } },
    );
    server.registerTool(
      'echo',
      { description: 'Echoes.', inputSchema: z.object({ text: z.string() }) },
      ({ text }) => ({ content: [{ type: 'text', text }] }),
    );
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const handle = serveStdio(() => server, { legacy: 'serve', transport: serverSide });
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(clientSide);
    closers.push(async () => {
      await client.close();
      await handle.close();
    });
    return client;
  }

  /** Counts the era codec's `validateResult` calls (what `request()` and our schema both reach), split by whether a value was given. */
  function countValidations(client: Client): { probes: number; results: number } {
    const counts = { probes: 0, results: 0 };
    const internals = client as unknown as { _negotiatedWireCodec: () => object };
    const original = internals._negotiatedWireCodec.bind(client);
    internals._negotiatedWireCodec = () => {
      const codec = original() as { validateResult: (m: string, v: unknown) => unknown };
      return {
        ...codec,
        validateResult: (method: string, value: unknown) => {
          if (method === 'tools/call') counts[value === undefined ? 'probes' : 'results'] += 1;
          return codec.validateResult(method, value);
        },
      };
    };
    return counts;
  }

  it('is made once per client, over the era codec', async () => {
    const client = await connect2025();
    expect(client.getProtocolEra()).not.toBe('modern');
    const schema = eraResultSchema(client);
    expect(schema).toBeDefined();
    expect(eraResultSchema(client)).toBe(schema);
    expect(schema?.['~standard'].validate({ content: [] })).toEqual({ value: { content: [] } });
    const refused = schema?.['~standard'].validate({ content: 'not a list' });
    expect(refused).toHaveProperty('issues');
  });

  it('checks each result once and never probes the codec with undefined', async () => {
    const client = await connect2025();
    const counts = countValidations(client);
    // The precondition: the SDK's own schema-less request probes on every call.
    await client.request({
      method: 'tools/call',
      params: { name: 'echo', arguments: { text: 'a' } },
    });
    expect(counts.probes).toBe(1);

    const adapter = createMcpToolAdapter({ serverName: 'era', client });
    const [echo] = await adapter.tools();
    counts.probes = 0;
    counts.results = 0;
    for (let i = 0; i < 5; i += 1) expect(await echo!.invoke({ text: `x${i}` })).toBe(`x${i}`);
    expect(counts).toEqual({ probes: 0, results: 5 });
  });

  it('has none for a client without an era codec: the SDK then validates as before', () => {
    expect(eraResultSchema({})).toBeUndefined();
  });
});
