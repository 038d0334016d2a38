/**
 * Both MCP revisions, chosen per server: a 2026-07-28-only SDK v2 server (`legacy: 'reject'`,
 * over stdio as a real process and over HTTP) and today's 2025-era fixture, through the managed
 * server, with `protocol: auto` and pinned revisions.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as V1StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { NamedServerConfig } from '../../src/config/server-schema.js';
import { AgentsError, AgentsErrorCode } from '../../src/errors.js';
import { createMcpToolAdapter } from '../../src/mcp/tool-adapter.js';
import { createManagedServer, type ManagedServer } from '../../src/servers/managed-server.js';
import {
  fixtureStdioArgs,
  mastraStdioArgs,
  modernStdioArgs,
  startMastraFixtureProcess,
  startModernFixtureProcess,
  type FixtureProcess,
} from '../fixtures/fixture-process.js';
import { ensureMastraPackages, MASTRA_INSTALL_TIMEOUT_MS } from '../fixtures/mastra-packages.js';
import { FAST_TIMEOUTS, resultText, toolEntry, waitFor } from './fixture.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

function stdio(
  name: string,
  args: string[],
  protocol?: NamedServerConfig['protocol'],
): NamedServerConfig {
  return {
    name,
    transport: 'stdio',
    command: process.execPath,
    args,
    trusted: true,
    timeouts: { ...FAST_TIMEOUTS, startupMs: 30_000 },
    ...(protocol === undefined ? {} : { protocol }),
  } as NamedServerConfig;
}

function http(name: string, url: URL, protocol?: NamedServerConfig['protocol']): NamedServerConfig {
  return {
    name,
    transport: 'auto',
    url: url.href,
    trusted: true,
    oauth: false,
    timeouts: { ...FAST_TIMEOUTS, startupMs: 30_000 },
    ...(protocol === undefined ? {} : { protocol }),
  } as NamedServerConfig;
}

async function started(config: NamedServerConfig): Promise<ManagedServer> {
  const server = createManagedServer(config, { runDir: null });
  cleanups.push(() => server.close());
  await server.start();
  return server;
}

async function startFailure(config: NamedServerConfig): Promise<AgentsError> {
  const server = createManagedServer(config, { runDir: null });
  cleanups.push(() => server.close());
  const error = await server.start().then(
    () => undefined,
    (failure: unknown) => failure,
  );
  expect(AgentsError.isInstance(error)).toBe(true);
  return error as AgentsError;
}

async function modernHttp(env: Record<string, string> = {}): Promise<FixtureProcess> {
  const fixture = await startModernFixtureProcess([], env);
  cleanups.push(() => fixture.close());
  return fixture;
}

describe('a 2026-07-28-only server (SDK v2, legacy: reject)', () => {
  it('over stdio, as a real process: protocol auto negotiates 2026-07-28, lists and calls', async () => {
    const server = await started(stdio('modern', modernStdioArgs()));
    expect(server.protocolVersion).toBe('2026-07-28');
    expect(server.client?.getProtocolEra()).toBe('modern');
    expect(resultText(await toolEntry(server, 'echo').execute({ text: 'hi' }, {}))).toBe('hi');
  });

  it('over HTTP: protocol auto (and transport auto) negotiates 2026-07-28, lists and calls', async () => {
    const fixture = await modernHttp();
    const server = await started(http('modern-http', fixture.url));
    expect(server.protocolVersion).toBe('2026-07-28');
    expect(resultText(await toolEntry(server, 'echo').execute({ text: 'hey' }, {}))).toBe('hey');
  });

  it('keeps $schema, $defs and $ref of an input schema verbatim', async () => {
    const server = await started(stdio('refs', modernStdioArgs()));
    const schema = toolEntry(server, 'schema_ref').descriptor.inputSchema as Record<
      string,
      unknown
    >;
    expect(schema['$schema']).toBe('https://json-schema.org/draft/2020-12/schema');
    expect(schema['properties']).toEqual({ item: { $ref: '#/$defs/item' } });
    expect(schema['$defs']).toEqual({ item: { type: 'string', minLength: 1 } });
    expect(resultText(await toolEntry(server, 'schema_ref').execute({ item: 'x' }, {}))).toBe(
      'item x',
    );
  });

  it('pinned to 2025-11-25, fails with a typed error naming what each side speaks', async () => {
    const error = await startFailure(stdio('pinned-old', modernStdioArgs(), '2025-11-25'));
    expect(error.code).toBe(AgentsErrorCode.ServerStartFailed);
    expect(error.message).toContain('Server "pinned-old" speaks MCP 2026-07-28');
    expect(error.message).toContain('this client offered 2025-11-25');
    expect(error.message).toContain('protocol: auto');
    expect(error.details).toMatchObject({
      serverRevisions: ['2026-07-28'],
      clientRevisions: ['2025-11-25'],
    });
  });

  it('over HTTP pinned to 2025-11-25: the same typed error, not an SSE 405', async () => {
    const fixture = await modernHttp();
    const error = await startFailure(http('pinned-old-http', fixture.url, '2025-11-25'));
    expect(error.message).toContain('speaks MCP 2026-07-28');
    expect(error.message).not.toMatch(/SSE|405/);
  });

  it('sees a tool added at run time (subscriptions/listen), over stdio and HTTP', async () => {
    const fixture = await modernHttp();
    for (const config of [stdio('live', modernStdioArgs()), http('live-http', fixture.url)]) {
      const server = await started(config);
      const name = `added_${config.transport === 'stdio' ? 'stdio' : 'http'}`;
      await toolEntry(server, 'add_tool').execute({ name }, {});
      await waitFor(
        () => server.entries().some((entry) => entry.descriptor.originalName === name),
        15_000,
        `${name} in the tool list of ${config.name}`,
      );
      expect(resultText(await toolEntry(server, name).execute({}, {}))).toBe(`${name} ran`);
    }
  });
});

describe('a 2025-era server (the v1 fixture)', () => {
  it('protocol auto falls back to initialize and speaks 2025-11-25', async () => {
    const server = await started(stdio('old', fixtureStdioArgs(['--tools', 'basic'])));
    expect(server.protocolVersion).toBe('2025-11-25');
    expect(server.client?.getProtocolEra()).toBe('legacy');
    expect(resultText(await toolEntry(server, 'echo').execute({ text: 'old' }, {}))).toBe(
      'received 3 characters',
    );
  });

  it('pinned to 2026-07-28, fails with a typed error naming both sides', async () => {
    const error = await startFailure(
      stdio('pinned-new', fixtureStdioArgs(['--tools', 'basic']), '2026-07-28'),
    );
    expect(error.code).toBe(AgentsErrorCode.ServerStartFailed);
    expect(error.message).toContain('Server "pinned-new"');
    expect(error.message).toContain('this client offered 2026-07-28');
    expect(error.details).toMatchObject({ clientRevisions: ['2026-07-28'] });
  });
});

describe("@mastra/mcp 2.0's MCPServer (2026-07-28 only, from npm)", () => {
  // Its packages sit outside the root install (test/fixtures/mastra/, own lock): installed on
  // first use, a no-op once there (.ci/run installs them before the suite).
  beforeAll(ensureMastraPackages, MASTRA_INSTALL_TIMEOUT_MS);

  it('over stdio and HTTP: negotiated, listed and called', async () => {
    const fixture = await startMastraFixtureProcess();
    cleanups.push(() => fixture.close());
    for (const config of [stdio('mastra', mastraStdioArgs()), http('mastra-http', fixture.url)]) {
      const server = await started(config);
      expect(server.protocolVersion).toBe('2026-07-28');
      const result = await toolEntry(server, 'shout').execute({ text: 'quiet' }, {});
      expect(JSON.stringify(result)).toContain('QUIET');
    }
  });
});

describe('createMcpToolAdapter with a caller-made client', () => {
  it('an SDK v2 Client in auto mode on a 2026-only server', async () => {
    const fixture = await modernHttp();
    const client = new Client(
      { name: 'adapter-v2', version: '1.0.0' },
      { versionNegotiation: { mode: 'auto' } },
    );
    await client.connect(new StreamableHTTPClientTransport(fixture.url));
    cleanups.push(() => client.close());
    const adapter = createMcpToolAdapter({ serverName: 'modern', client, trusted: true });
    expect((await adapter.listTools()).map((entry) => entry.descriptor.originalName)).toContain(
      'echo',
    );
    expect(resultText(await adapter.execute('echo', { text: 'v2' }))).toBe('v2');
  });

  it('a v1 Client (@modelcontextprotocol/sdk) on a 2025-era server still works', async () => {
    const client = new V1Client({ name: 'adapter-v1', version: '1.0.0' });
    await client.connect(
      new V1StdioClientTransport({
        command: process.execPath,
        args: fixtureStdioArgs(['--tools', 'basic']),
      }),
    );
    cleanups.push(() => client.close());
    const adapter = createMcpToolAdapter({ serverName: 'old', client, trusted: true });
    expect(resultText(await adapter.execute('echo', { text: 'v1' }))).toBe('received 2 characters');
  });
});

describe('tools/list caching hints (ttlMs, 2026-07-28)', () => {
  it('a managed server lists again when the ttlMs runs out, on a server that announces nothing', async () => {
    const fixture = await modernHttp({
      MODERN_FIXTURE_TTL_MS: '1000',
      MODERN_FIXTURE_LIST_CHANGED: '0',
    });
    const server = await started(http('ttl', fixture.url));
    await toolEntry(server, 'add_tool').execute({ name: 'silent_one' }, {});
    // No notification comes: only the re-listing at the end of the TTL can show it.
    await waitFor(
      () => server.entries().some((entry) => entry.descriptor.originalName === 'silent_one'),
      15_000,
      'silent_one after the TTL',
    );
  });

  it('createMcpToolAdapter reuses a fresh list, and drops it when the client hears list_changed', async () => {
    const fixture = await modernHttp({ MODERN_FIXTURE_TTL_MS: '600000' });
    const client = new Client(
      { name: 'adapter-ttl', version: '1.0.0' },
      { versionNegotiation: { mode: 'auto' } },
    );
    await client.connect(new StreamableHTTPClientTransport(fixture.url));
    cleanups.push(() => client.close());
    const adapter = createMcpToolAdapter({ serverName: 'cached', client, trusted: true });
    const names = async () =>
      (await adapter.listTools()).map((entry) => entry.descriptor.originalName);
    const before = (await names()).length;
    expect(await names()).toContain('echo');
    // Changed behind the client's back (no subscription yet): the fresh list is reused.
    await client.callTool({ name: 'add_tool', arguments: { name: 'unheard' } });
    expect(await names()).not.toContain('unheard');
    // `refresh: true` asks the server: the added tool is there.
    expect((await adapter.listTools({ refresh: true })).length).toBe(before + 1);
    // A list_changed the client hears ends the cached list: the next listing sees the change.
    await client.listen({ toolsListChanged: true });
    await client.callTool({ name: 'add_tool', arguments: { name: 'heard' } });
    await expect.poll(names, { timeout: 10_000 }).toContain('heard');
  });
});
