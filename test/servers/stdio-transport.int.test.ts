import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { describe, expect, it } from 'vitest';
import { createStdioTransport } from '../../src/servers/stdio-transport.js';
import { FAULT_SERVER, groupGone, groupReaped } from './fixture.js';

const run = promisify(execFile);

describe('stdio transport (real processes)', () => {
  it('close() before start, twice, and concurrently never throws; onclose fires once', async () => {
    const idle = createStdioTransport({
      serverName: 'idle',
      command: process.execPath,
      args: [FAULT_SERVER],
    });
    await idle.close();
    await idle.close();

    const transport = createStdioTransport({
      serverName: 't',
      command: process.execPath,
      args: [FAULT_SERVER],
    });
    let closes = 0;
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(transport);
    client.onclose = () => {
      closes += 1;
    };
    expect(transport.protocolVersion).toMatch(/^\d{4}-/);
    const pid = transport.pid;
    await Promise.all([transport.close(), transport.close(), client.close()]);
    await transport.close();
    expect(closes).toBe(1);
    expect(transport.exit).toEqual({ exitCode: 0, signal: null });
    expect(groupGone(pid)).toBe(true);
    await expect(transport.send({ jsonrpc: '2.0', method: 'ping', id: 99 })).rejects.toThrow(
      /not running/,
    );
  });

  it('close() leaves no timer behind when the server exits on stdin EOF', async () => {
    const timers = (): number =>
      process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;
    // A long shutdown wait: a timer left running would hold the process for 30 s.
    const transport = createStdioTransport({
      serverName: 'quick',
      command: process.execPath,
      args: [FAULT_SERVER],
      shutdownMs: 30_000,
    });
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(transport);
    const before = timers();
    await transport.close();
    await client.close();
    expect(transport.exit).toEqual({ exitCode: 0, signal: null });
    expect(timers()).toBeLessThanOrEqual(before);
  });

  it('the redacted target names the command without secret values', () => {
    const transport = createStdioTransport({
      serverName: 'redact',
      command: 'server-bin',
      args: ['--api-key', 'sk-123', '--token=abc', 'plain'],
    });
    expect(transport.target).toBe('server-bin --api-key *** --token=*** plain');
  });

  it('when the host process exits without closing, its server groups are killed', async () => {
    const host = fileURLToPath(new URL('./exit-host.mts', import.meta.url));
    const { stdout } = await run(process.execPath, ['--import', 'tsx', host], { timeout: 30_000 });
    const pid = Number(stdout.trim());
    expect(pid).toBeGreaterThan(0);
    expect(await groupReaped(pid)).toBe(true);
  });
});
