import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  PingRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { NamedServerConfig } from '../../src/config/server-schema.js';
import { AgentsErrorCode, ServerError } from '../../src/errors.js';
import { createManagedServer, type ManagedServer } from '../../src/servers/managed-server.js';
import type { ServerEventMap } from '../../src/servers/server-events.js';
import type { ServerTransport } from '../../src/servers/connect.js';
import { resultText } from './fixture.js';

const CONFIG: NamedServerConfig = {
  name: 'health',
  transport: 'stdio',
  command: 'unused',
  args: [],
  trusted: true,
  timeouts: { startupMs: 5_000, callMs: 1_000, maxCallMs: 5_000, pingMs: 500, shutdownMs: 100 },
  restart: { enabled: true, maxAttempts: 3, initialDelayMs: 100, maxDelayMs: 1_000 },
};

/**
 * Each "spawn" is a low-level SDK Server on a linked in-memory pair. `wedged(n)` decides whether
 * spawn n answers pings; its `slow` tool never answers (a slow call, not a wedged server).
 */
class PingWorld {
  spawns = 0;
  pings: number[] = [];

  constructor(private readonly wedged: (spawn: number) => boolean) {}

  factory = (): ServerTransport => {
    const spawn = ++this.spawns;
    this.pings[spawn] = 0;
    const server = new Server(
      { name: 'ping-world', version: '1.0.0' },
      { capabilities: { tools: {} } },
    );
    server.setRequestHandler(ListToolsRequestSchema, () => ({
      tools: [
        {
          name: 'echo',
          inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
          annotations: { readOnlyHint: true },
        },
        { name: 'slow', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } },
      ],
    }));
    server.setRequestHandler(CallToolRequestSchema, (request) =>
      request.params.name === 'slow'
        ? new Promise<never>(() => {})
        : {
            content: [
              { type: 'text', text: `${spawn}:${String(request.params.arguments?.['text'])}` },
            ],
          },
    );
    // Replaces the SDK's built-in ping answer: a wedged server reads requests but never replies.
    server.setRequestHandler(PingRequestSchema, () => {
      this.pings[spawn] = (this.pings[spawn] ?? 0) + 1;
      return this.wedged(spawn) ? new Promise<never>(() => {}) : {};
    });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    void server.connect(serverSide);
    return { transport: clientSide, target: 'in-memory', close: () => clientSide.close() };
  };
}

let server: ManagedServer | undefined;
afterEach(async () => {
  vi.useRealTimers();
  await server?.close();
  server = undefined;
});

function fakeTimers(): void {
  vi.useFakeTimers({
    toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'],
  });
}

describe('timer-based health check', () => {
  it('restarts a server whose ping never answers, and calls go to the new one', async () => {
    fakeTimers();
    const world = new PingWorld((spawn) => spawn === 1);
    server = createManagedServer(CONFIG, {
      transportFactory: world.factory,
      healthCheckIntervalMs: 1_000,
    });
    const restarts: ServerEventMap['server-restart'][] = [];
    const ends: ServerEventMap['server-end'][] = [];
    server.on('server-restart', (event) => restarts.push(event));
    server.on('server-end', (event) => ends.push(event));
    await server.start();
    expect(world.spawns).toBe(1);

    await vi.advanceTimersByTimeAsync(999);
    expect(world.pings[1]).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(world.pings[1]).toBe(1);
    // Not yet past the ping timeout: still the first server.
    await vi.advanceTimersByTimeAsync(499);
    expect(restarts).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(ends.map((event) => event.reason)).toEqual(['unresponsive']);
    expect(restarts).toHaveLength(1);
    expect(restarts[0]!.cause).toBeInstanceOf(ServerError);
    expect(server.status).toBe('restarting');

    // Backoff is 100 ms ±20 %.
    await vi.advanceTimersByTimeAsync(150);
    expect(world.spawns).toBe(2);
    expect(server.status).toBe('ready');
    const echo = server.entries().find((entry) => entry.descriptor.originalName === 'echo')!;
    expect(resultText(await echo.execute({ text: 'hi' }, {}))).toBe('2:hi');

    // The new server answers its pings: no further restart.
    await vi.advanceTimersByTimeAsync(3_000);
    expect(world.pings[2]).toBeGreaterThanOrEqual(3);
    expect(world.spawns).toBe(2);
    expect(restarts).toHaveLength(1);
  });

  it("takes the ping interval from the server config's timeouts when no option is given", async () => {
    fakeTimers();
    const world = new PingWorld(() => false);
    server = createManagedServer(
      { ...CONFIG, timeouts: { ...CONFIG.timeouts!, healthCheckIntervalMs: 1_000 } },
      { transportFactory: world.factory },
    );
    await server.start();
    await vi.advanceTimersByTimeAsync(2_000);
    expect(world.pings[1]).toBe(2);
    // Without it (the default, 0) nothing pings.
    const quiet = new PingWorld(() => false);
    const other = createManagedServer(CONFIG, { transportFactory: quiet.factory });
    await other.start();
    await vi.advanceTimersByTimeAsync(5_000);
    expect(quiet.pings[1] ?? 0).toBe(0);
    await other.close();
  });

  it('a single slow call times out but does not restart a server that answers pings', async () => {
    fakeTimers();
    const world = new PingWorld(() => false);
    server = createManagedServer(CONFIG, {
      transportFactory: world.factory,
      healthCheckIntervalMs: 1_000,
    });
    const restarts: ServerEventMap['server-restart'][] = [];
    server.on('server-restart', (event) => restarts.push(event));
    await server.start();
    const slow = server.entries().find((entry) => entry.descriptor.originalName === 'slow')!;
    const outcome = slow.execute({}, {}).then(
      () => undefined,
      (error: unknown) => error,
    );
    await vi.advanceTimersByTimeAsync(1_000);
    const error = await outcome;
    expect(error).toBeInstanceOf(ServerError);
    expect((error as ServerError).code).toBe(AgentsErrorCode.Timeout);

    await vi.advanceTimersByTimeAsync(5_000);
    // The timeout triggered an extra ping besides the timer's; every one was answered.
    expect(world.pings[1]).toBeGreaterThanOrEqual(6);
    expect(world.spawns).toBe(1);
    expect(restarts).toHaveLength(0);
    expect(server.status).toBe('ready');
    const echo = server.entries().find((entry) => entry.descriptor.originalName === 'echo')!;
    expect(resultText(await echo.execute({ text: 'still' }, {}))).toBe('1:still');
  });
});
