/**
 * Record a 2026-07-28 server through the managed server (the library's own connection: revision
 * negotiation, an `input_required` round answered by the caller, a task followed with polls),
 * then replay the same calls with a command that does not exist: every answer comes from the
 * cassette, the round and the polls included.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NamedServerConfig } from '../../src/config/server-schema.js';
import type { InputRequestRound } from '../../src/core/input-requests.js';
import { createServerTransport } from '../../src/servers/connect.js';
import { createManagedServer, type ManagedServer } from '../../src/servers/managed-server.js';
import {
  createCassetteRecorder,
  createRecordingTransport,
  createReplayTransport,
  formatCassette,
  parseCassette,
  type Cassette,
  type McpExchangeEntry,
} from '../../src/testing/index.js';
import { modernStdioArgs } from '../fixtures/fixture-process.js';
import { FAST_TIMEOUTS, resultText } from '../servers/fixture.js';

let dir: string;
let counter: string;
let cassette: Cassette;

function config(command: string): NamedServerConfig {
  return {
    name: 'modern',
    transport: 'stdio',
    command,
    args: modernStdioArgs(),
    env: {
      MODERN_FIXTURE_TASKS: '1',
      MODERN_FIXTURE_POLL_MS: '20',
      MODERN_FIXTURE_COUNTER: counter,
    },
    trusted: true,
    timeouts: { ...FAST_TIMEOUTS, startupMs: 30_000 },
  } as NamedServerConfig;
}

/** The calls of the test run: one elicitation round, then a task polled to its end. */
async function exercise(server: ManagedServer): Promise<{ texts: string[]; rounds: number }> {
  let rounds = 0;
  const answer = (round: InputRequestRound) => {
    rounds++;
    return {
      responses: { confirm: { action: 'accept' as const, content: { confirm: true } } },
      ...(round.requestState === undefined ? {} : { requestState: round.requestState }),
    };
  };
  const confirmed = await server.callTool(
    'confirm_write',
    { path: 'x.txt' },
    {},
    { inputRequests: answer },
  );
  const counted = await server.callTool('slow_count', { text: 'sheep' }, {});
  return { texts: [resultText(confirmed), resultText(counted)], rounds };
}

async function executions(): Promise<string[]> {
  return (await readFile(counter, 'utf8').catch(() => '')).split('\n').filter(Boolean);
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'replay-modern-'));
  counter = join(dir, 'executions');
  const recorder = createCassetteRecorder();
  const server = createManagedServer(config(process.execPath), {
    runDir: null,
    transportFactory: (serverConfig) => {
      const live = createServerTransport(serverConfig);
      return {
        ...live,
        transport: createRecordingTransport(live.transport, { recorder, server: 'modern' }),
      };
    },
  });
  await server.start();
  try {
    const run = await exercise(server);
    expect(run).toEqual({ texts: ['wrote x.txt', 'counted sheep'], rounds: 1 });
  } finally {
    await server.close();
  }
  cassette = recorder.cassette();
}, 60_000);

afterAll(async () => {
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

describe('replaying a 2026-07-28 server with an input round and a task', () => {
  it('recorded the round, the retry with its answer and the task polls', () => {
    const calls = cassette.entries.filter(
      (entry): entry is McpExchangeEntry => entry.kind === 'mcp' && entry.method === 'tools/call',
    );
    expect(calls.map((call) => (call.params as { name: string }).name)).toEqual([
      'confirm_write',
      'confirm_write',
      'slow_count',
    ]);
    expect(JSON.stringify(calls[0]!.result)).toContain('input_required');
    expect(
      cassette.entries.some((entry) => entry.kind === 'mcp' && entry.method === 'tasks/get'),
    ).toBe(true);
  });

  it('answers the same calls from the cassette with no process started', async () => {
    const before = await executions();
    expect(before.length, 'the recording ran the tools for real').toBeGreaterThan(0);
    const text = JSON.stringify(cassette);
    // Through the text form, as a cassette file would come back.
    const replayed = parseCassette(formatCassette(cassette));
    expect(replayed.entries).toHaveLength(cassette.entries.length);
    const transport = createReplayTransport({ cassette: replayed, server: 'modern' });
    const server = createManagedServer(config('/nonexistent/modern-server'), {
      runDir: null,
      transportFactory: () => ({
        transport: transport as never,
        target: 'replay',
        close: () => transport.close(),
      }),
    });
    await server.start();
    try {
      expect(await exercise(server)).toEqual({
        texts: ['wrote x.txt', 'counted sheep'],
        rounds: 1,
      });
    } finally {
      await server.close();
    }
    expect(transport.divergence).toBeUndefined();
    expect(await executions(), 'no tool ran again').toEqual(before);
    expect(text).not.toContain(dir);
  });
});
