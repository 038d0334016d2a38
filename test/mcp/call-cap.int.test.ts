import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as V1StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, describe, expect, it } from 'vitest';
import { AgentsErrorCode, ServerError } from '../../src/errors.js';
import type { McpClient } from '../../src/mcp/mcp-client.js';
import { createClientCaller, type McpToolCaller } from '../../src/mcp/tool-call.js';
import { FAULT_SERVER } from '../servers/fixture.js';

/**
 * The time caps of a call (issue 37). By default `callMs` is one hard timeout, progress or not,
 * kept by the SDK's own request timer. With `resetTimeoutOnProgress` progress restarts it and
 * the progress handler keeps `maxCallMs`, expiring the request through the SDK's own timeout
 * path (no abort signal of ours per call). Either way the server is told (`notifications/
 * cancelled`). Against the real fault server over stdio, with both SDK majors, because the cap
 * reads the SDK's protocol state.
 */

interface Saw {
  calls: Array<{ tool: string; requestId: number | string }>;
  cancelled: Array<{ requestId: number | string; reason?: string }>;
  aborted: Array<number | string>;
}

const clients: McpClient[] = [];

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
});

async function connect(major: 'v1' | 'v2'): Promise<McpClient> {
  const params = {
    command: process.execPath,
    args: [FAULT_SERVER, 'normal'],
    stderr: 'ignore' as const,
  };
  const client =
    major === 'v1'
      ? new V1Client({ name: 'cap-test', version: '1.0.0' })
      : new Client({ name: 'cap-test', version: '1.0.0' });
  if (client instanceof V1Client) await client.connect(new V1StdioClientTransport(params));
  else await client.connect(new StdioClientTransport(params));
  clients.push(client);
  return client;
}

function text(result: { content: unknown[] }): string {
  const first = result.content[0] as { type?: string; text?: string } | undefined;
  return first?.type === 'text' ? (first.text ?? '') : '';
}

async function serverSaw(caller: McpToolCaller): Promise<Saw> {
  return JSON.parse(text(await caller.callTool('cancellations', {}, {}))) as Saw;
}

/** Polls the server until it saw `notifications/cancelled` for the first call of `tool`. */
async function cancelledOnServer(caller: McpToolCaller, tool: string): Promise<Saw> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const saw = await serverSaw(caller);
    const call = saw.calls.find((each) => each.tool === tool);
    if (call !== undefined && saw.cancelled.some((each) => each.requestId === call.requestId)) {
      return saw;
    }
    if (Date.now() > deadline)
      throw new Error(`no cancellation of ${tool}: ${JSON.stringify(saw)}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe.each(['v1', 'v2'] as const)('the time cap of a call with progress (SDK %s)', (major) => {
  it('by default ends a call at callMs even while progress arrives and is listened to', async () => {
    const client = await connect(major);
    const caller = createClientCaller(client, 'fault', { callTimeoutMs: 600, maxCallMs: 20_000 });
    const progress: number[] = [];
    const started = Date.now();
    const error = await caller
      .callTool(
        'progress_forever',
        {},
        {},
        { onProgress: (update) => progress.push(update.progress) },
      )
      .then(
        () => undefined,
        (failure: unknown) => failure,
      );
    const took = Date.now() - started;
    expect(error).toBeInstanceOf(ServerError);
    expect((error as ServerError).code).toBe(AgentsErrorCode.Timeout);
    expect((error as ServerError).message).toContain('no answer within 600 ms');
    expect((error as ServerError).message).toContain('timeouts.resetOnProgress');
    // Progress did arrive (every 20 ms), so it is the setting, not silence, that ended the call.
    expect(progress.length).toBeGreaterThan(3);
    expect(took).toBeGreaterThanOrEqual(550);
    expect(took).toBeLessThan(20_000);
    const saw = await cancelledOnServer(caller, 'progress_forever');
    const call = saw.calls.find((each) => each.tool === 'progress_forever')!;
    expect(saw.aborted).toContain(call.requestId);
  });

  it('ends a call whose progress never stops at the cap, and cancels it on the server', async () => {
    const client = await connect(major);
    // Progress every 20 ms keeps restarting the 600 ms timeout; only the cap can end the call.
    const caller = createClientCaller(client, 'fault', {
      callTimeoutMs: 600,
      maxCallMs: 1_200,
      resetTimeoutOnProgress: true,
    });
    const started = Date.now();
    const error = await caller.callTool('progress_forever', {}, {}).then(
      () => undefined,
      (failure: unknown) => failure,
    );
    expect(error).toBeInstanceOf(ServerError);
    expect((error as ServerError).code).toBe(AgentsErrorCode.Timeout);
    expect((error as ServerError).message).toContain('maximum of 1200 ms');
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_150);
    const saw = await cancelledOnServer(caller, 'progress_forever');
    const call = saw.calls.find((each) => each.tool === 'progress_forever')!;
    // The server's handler was aborted: its progress loop ended.
    expect(saw.aborted).toContain(call.requestId);
  });

  it('lets progress restart the no-answer timeout', async () => {
    const client = await connect(major);
    // `slow` answers after 2,400 ms with progress at 0 and 1,200 ms: without the restart the
    // 1,500 ms timeout would end it; with it the timeout runs to 2,700 ms.
    const caller = createClientCaller(client, 'fault', {
      callTimeoutMs: 1_500,
      maxCallMs: 20_000,
      resetTimeoutOnProgress: true,
    });
    const progress: number[] = [];
    const result = await caller.callTool(
      'slow',
      { ms: 2_400 },
      {},
      { onProgress: (update) => progress.push(update.progress) },
    );
    expect(text(result)).toBe('slept 2400');
    expect(progress).toEqual([0, 1_200]);
  });

  it('restarts the timeout with nobody listening to progress too', async () => {
    const client = await connect(major);
    const caller = createClientCaller(client, 'fault', {
      callTimeoutMs: 1_500,
      maxCallMs: 20_000,
      resetTimeoutOnProgress: true,
    });
    expect(text(await caller.callTool('slow', { ms: 2_400 }, {}))).toBe('slept 2400');
  });
});
