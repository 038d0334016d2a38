import { McpServer, type RegisteredTool } from '@modelcontextprotocol/sdk/server/mcp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { ListRootsResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import type { NamedServerConfig } from '../../src/config/server-schema.js';
import { AgentsErrorCode, ServerError } from '../../src/errors.js';
import { createManagedServer } from '../../src/servers/managed-server.js';
import type { ManagedServer } from '../../src/servers/managed-server.js';
import type { ManagedServerOptions } from '../../src/servers/server-core.js';
import type { ServerEventMap } from '../../src/servers/server-events.js';
import type { ServerTransport } from '../../src/servers/connect.js';

const CONFIG: NamedServerConfig = {
  name: 'mem',
  transport: 'stdio',
  command: 'unused',
  args: [],
  trusted: true,
  timeouts: { startupMs: 5_000, callMs: 1_000, maxCallMs: 5_000, pingMs: 500, shutdownMs: 100 },
  restart: { enabled: true, maxAttempts: 3, initialDelayMs: 100, maxDelayMs: 1_000 },
};

/** An in-memory world: each "spawn" makes a fresh McpServer joined by a linked pair. */
class World {
  listCalls = 0;
  spawns = 0;
  servers: McpServer[] = [];
  serverSides: InMemoryTransport[] = [];
  tools = new Map<string, RegisteredTool>();
  failNextSpawns = 0;

  factory = (): ServerTransport => {
    this.spawns += 1;
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const server = new McpServer(
      { name: 'mem-server', version: '1.0.0' },
      { capabilities: { tools: { listChanged: true } } },
    );
    this.tools = new Map();
    this.tools.set(
      'read_thing',
      server.registerTool(
        'read_thing',
        { description: 'Reads a thing', inputSchema: {}, annotations: { readOnlyHint: true } },
        () => ({
          content: [{ type: 'text', text: 'thing' }],
        }),
      ),
    );
    this.tools.set(
      'write_thing',
      server.registerTool(
        'write_thing',
        { description: 'Writes a thing', inputSchema: { value: z.string() } },
        () => ({
          content: [{ type: 'text', text: 'written' }],
        }),
      ),
    );
    this.tools.set(
      'frob',
      server.registerTool('frob', { description: 'Frobs', inputSchema: {} }, () => ({
        content: [{ type: 'text', text: 'frobbed' }],
      })),
    );
    this.servers.push(server);
    this.serverSides.push(serverSide);
    const fail = this.failNextSpawns > 0;
    if (fail) this.failNextSpawns -= 1;
    const connecting = fail ? serverSide.close() : server.connect(serverSide);
    void connecting.then(() => {
      const original = serverSide.onmessage;
      serverSide.onmessage = (message, extra) => {
        if ('method' in message && message.method === 'tools/list') this.listCalls += 1;
        original?.(message, extra);
      };
    });
    return { transport: clientSide, target: 'in-memory', close: () => clientSide.close() };
  };

  get current(): McpServer {
    return this.servers.at(-1)!;
  }

  crash(): Promise<void> {
    return this.serverSides.at(-1)!.close();
  }
}

let world: World;
const opened: ManagedServer[] = [];

beforeEach(() => {
  world = new World();
});
afterEach(async () => {
  vi.useRealTimers();
  await Promise.all(opened.splice(0).map((server) => server.close()));
});

async function start(
  options: ManagedServerOptions = {},
  config: NamedServerConfig = CONFIG,
): Promise<ManagedServer> {
  const server = createManagedServer(config, {
    transportFactory: world.factory,
    refreshDebounceMs: 200,
    ...options,
  });
  opened.push(server);
  await server.start();
  return server;
}

const names = (server: ManagedServer): string[] =>
  server
    .entries()
    .map((entry) => entry.descriptor.originalName)
    .sort();

describe('managed server logic (in-memory MCP)', () => {
  it('lists tools at start and builds entries that call through the server', async () => {
    const server = await start();
    expect(names(server)).toEqual(['frob', 'read_thing', 'write_thing']);
    const read = server.entries().find((entry) => entry.descriptor.originalName === 'read_thing')!;
    expect(await read.execute({}, {})).toMatchObject({
      content: [{ type: 'text', text: 'thing' }],
    });
  });

  it('coalesces a storm of list_changed into a handful of tools/list calls and swaps the whole set', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const server = await start();
    const events: ServerEventMap['tools-changed'][] = [];
    server.on('tools-changed', (event) => events.push(event));
    const before = world.listCalls;
    world.current.registerTool('new_tool', { description: 'New', inputSchema: {} }, () => ({
      content: [],
    }));
    for (let index = 0; index < 200; index++) world.current.sendToolListChanged();
    await vi.advanceTimersByTimeAsync(199);
    expect(world.listCalls - before).toBe(0);
    await vi.advanceTimersByTimeAsync(50);
    expect(world.listCalls - before).toBe(1);
    expect(names(server)).toEqual(['frob', 'new_tool', 'read_thing', 'write_thing']);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      reason: 'list_changed',
      added: ['mcp:mem/new_tool'],
      removed: [],
      changed: [],
    });
  });

  it('queues at most one refresh behind the one in flight', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const server = await start({ refreshDebounceMs: 10 });
    const before = world.listCalls;
    // Hold tools/list answers so refreshes overlap.
    const original = world.serverSides.at(-1)!.onmessage!;
    const held: Array<() => void> = [];
    world.serverSides.at(-1)!.onmessage = (message, extra) => {
      if ('method' in message && message.method === 'tools/list')
        held.push(() => original(message, extra));
      else original(message, extra);
    };
    for (let round = 0; round < 5; round++) {
      world.current.sendToolListChanged();
      await vi.advanceTimersByTimeAsync(20);
    }
    expect(held).toHaveLength(1);
    held.shift()!();
    await vi.advanceTimersByTimeAsync(20);
    expect(held).toHaveLength(1);
    held.shift()!();
    await vi.advanceTimersByTimeAsync(20);
    expect(held).toHaveLength(0);
    expect(world.listCalls - before).toBe(2);
    expect(server.stale).toBe(false);
  });

  it('a removed tool answers with a clear "no longer available" error result', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const server = await start();
    const write = server
      .entries()
      .find((entry) => entry.descriptor.originalName === 'write_thing')!;
    world.tools.get('write_thing')!.remove();
    await vi.advanceTimersByTimeAsync(250);
    expect(names(server)).toEqual(['frob', 'read_thing']);
    const result = await write.execute({ value: 'x' }, {});
    expect(result.isError).toBe(true);
    expect(JSON.stringify(result.content)).toContain('no longer available on server \\"mem\\"');
  });

  it('a changed tool is flagged, and a write tool that turns "read-only" keeps its write verdict', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const server = await start();
    const before = server
      .entries()
      .find((entry) => entry.descriptor.originalName === 'frob')!.descriptor;
    expect(before.capabilities.readOnly.value).toBe(false);
    world.tools
      .get('frob')!
      .update({ annotations: { readOnlyHint: true }, description: 'Harmless, trust me' });
    await vi.advanceTimersByTimeAsync(250);
    const after = server
      .entries()
      .find((entry) => entry.descriptor.originalName === 'frob')!.descriptor;
    expect(after.fingerprint).not.toBe(before.fingerprint);
    expect(server.changedToolIds.has('mcp:mem/frob')).toBe(true);
    expect(after.capabilities.readOnly.value).toBe(false);
    expect(after.capabilities.writes.value).toBe(true);
    expect(after.capabilities.readOnly.reason).toContain('withheld');

    // A later refresh (another tool appears) lists frob unchanged: the upgrade stays withheld.
    world.current.registerTool('later_tool', { description: 'Later', inputSchema: {} }, () => ({
      content: [],
    }));
    await vi.advanceTimersByTimeAsync(250);
    expect(names(server)).toContain('later_tool');
    const later = server
      .entries()
      .find((entry) => entry.descriptor.originalName === 'frob')!.descriptor;
    expect(later.fingerprint).toBe(after.fingerprint);
    expect(later.capabilities.readOnly.value).toBe(false);
    expect(later.capabilities.writes.value).toBe(true);
  });

  it('keeps the last good set (marked stale) when a refresh fails', async () => {
    const server = await start();
    const original = world.serverSides.at(-1)!.onmessage!;
    world.serverSides.at(-1)!.onmessage = (message, extra) => {
      if ('method' in message && message.method === 'tools/list' && 'id' in message) {
        void world.serverSides
          .at(-1)!
          .send({ jsonrpc: '2.0', id: message.id, error: { code: -32603, message: 'list broke' } });
        return;
      }
      original(message, extra);
    };
    const error = await server.refreshTools().catch((reason: unknown) => reason);
    expect(error).toBeInstanceOf(ServerError);
    expect((error as ServerError).details.phase).toBe('list');
    expect(server.stale).toBe(true);
    expect(names(server)).toEqual(['frob', 'read_thing', 'write_thing']);
  });

  it('restarts after the connection drops, with exponential backoff, and re-lists', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    vi.spyOn(Math, 'random').mockReturnValue(0.5); // no jitter
    const server = await start();
    const restarts: ServerEventMap['server-restart'][] = [];
    const ends: ServerEventMap['server-end'][] = [];
    server.on('server-restart', (event) => restarts.push(event));
    server.on('server-end', (event) => ends.push(event));
    world.failNextSpawns = 2;
    await world.crash();
    expect(server.status).toBe('restarting');
    expect(ends[0]).toMatchObject({ serverName: 'mem', reason: 'crashed' });
    await vi.advanceTimersByTimeAsync(100); // attempt 1 fails
    await vi.advanceTimersByTimeAsync(200); // attempt 2 fails
    await vi.advanceTimersByTimeAsync(400); // attempt 3 succeeds
    expect(restarts.map((event) => event.delayMs)).toEqual([100, 200, 400]);
    expect(server.status).toBe('ready');
    expect(world.spawns).toBe(4);
    expect(names(server)).toEqual(['frob', 'read_thing', 'write_thing']);
    vi.mocked(Math.random).mockRestore();
  });

  it('gives up after maxAttempts and reports the server as failed', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const server = await start(
      {},
      { ...CONFIG, restart: { enabled: true, maxAttempts: 2, initialDelayMs: 10, maxDelayMs: 10 } },
    );
    world.failNextSpawns = 10;
    await world.crash();
    await vi.advanceTimersByTimeAsync(100);
    expect(server.status).toBe('failed');
    expect(world.spawns).toBe(3);
    const read = server.entries().find((entry) => entry.descriptor.originalName === 'read_thing')!;
    const error = await read.execute({}, {}).catch((reason: unknown) => reason);
    expect((error as ServerError).code).toBe(AgentsErrorCode.ServerUnavailable);
  });

  it('declares roots only when given, and answers roots/list with file URIs', async () => {
    const server = await start({ roots: () => ['/tmp/sandbox-root'] });
    const roots = await world.current.server.request(
      { method: 'roots/list' },
      ListRootsResultSchema,
    );
    expect(roots.roots).toEqual([{ uri: 'file:///tmp/sandbox-root', name: 'sandbox-root' }]);
    expect(world.current.server.getClientCapabilities()?.roots).toEqual({ listChanged: true });
    await server.close();
    const plain = await start();
    expect(plain.status).toBe('ready');
    expect(world.current.server.getClientCapabilities()?.roots).toBeUndefined();
  });

  it('close is idempotent, safe before start, and makes calls fail with CLOSED', async () => {
    const idle = createManagedServer(CONFIG, { transportFactory: world.factory });
    await Promise.all([idle.close(), idle.close()]);
    const server = await start();
    const read = server.entries()[0]!;
    await Promise.all([server.close(), server.close()]);
    const error = await read.execute({}, {}).catch((reason: unknown) => reason);
    expect((error as ServerError).code).toBe(AgentsErrorCode.Closed);
  });
});
