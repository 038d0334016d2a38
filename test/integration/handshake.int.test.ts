import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { createMcpToolAdapter } from '../../src/mcp/tool-adapter.js';
import { FIXTURE_NOOP_COUNT } from '../fixtures/fixture-server.js';
import { fixtureStdioArgs, startFixtureProcess } from '../fixtures/fixture-process.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const negotiated = new WeakMap<Client, string>();

async function connect(transport: Transport): Promise<Client> {
  const client = new Client({ name: 'handshake-test', version: '1.0.0' });
  // The SDK hands the negotiated version to the transport after initialize; record it on the way.
  const original = transport.setProtocolVersion?.bind(transport);
  transport.setProtocolVersion = (version: string) => {
    negotiated.set(client, version);
    original?.(version);
  };
  await client.connect(transport);
  cleanups.push(() => client.close());
  return client;
}

async function clientFor(kind: 'stdio' | 'http' | 'sse'): Promise<Client> {
  if (kind === 'stdio') {
    return connect(
      new StdioClientTransport({
        command: process.execPath,
        args: fixtureStdioArgs(['--page-size', '20']),
        stderr: 'pipe',
      }),
    );
  }
  const fixture = await startFixtureProcess(kind, ['--page-size', '20']);
  cleanups.push(() => fixture.close());
  return connect(
    kind === 'http'
      ? new StreamableHTTPClientTransport(fixture.url)
      : new SSEClientTransport(fixture.url),
  );
}

describe.each(['stdio', 'http', 'sse'] as const)('handshake over %s', (kind) => {
  it('initializes, records protocol version and capabilities, lists every page and calls a tool', async () => {
    const client = await clientFor(kind);
    expect(client.getServerVersion()).toMatchObject({ name: 'fixture', version: '1.0.0' });
    expect(client.getServerCapabilities()).toMatchObject({ tools: { listChanged: true } });
    expect(negotiated.get(client)).toBe(LATEST_PROTOCOL_VERSION);
    if (kind === 'http') {
      const transport = client.transport as StreamableHTTPClientTransport;
      expect(transport.protocolVersion).toBe(LATEST_PROTOCOL_VERSION);
      expect(transport.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    }
    const adapter = createMcpToolAdapter({ serverName: `fixture-${kind}`, client });
    const entries = await adapter.listTools();
    expect(entries.length).toBeGreaterThan(FIXTURE_NOOP_COUNT + 10);
    expect(entries.map((entry) => entry.descriptor.id)).toContain(
      `mcp:fixture-${kind}/noop_${FIXTURE_NOOP_COUNT - 1}`,
    );
    expect(await adapter.execute('add', { a: 20, b: 22 })).toEqual({
      content: [{ type: 'text', text: '42' }],
    });
  });
});

describe('fixture over http', () => {
  it('binds http to 127.0.0.1 only', async () => {
    const fixture = await startFixtureProcess('http', ['--tools', 'basic']);
    cleanups.push(() => fixture.close());
    expect(fixture.url.hostname).toBe('127.0.0.1');
    const client = await connect(new StreamableHTTPClientTransport(fixture.url));
    const entries = await createMcpToolAdapter({ serverName: 'basic', client }).listTools();
    expect(entries.map((entry) => entry.descriptor.originalName).sort()).toEqual([
      'add',
      'delete_file',
      'echo',
      'fail',
      'list_directory',
      'read_file',
      'write_file',
    ]);
  });
});
