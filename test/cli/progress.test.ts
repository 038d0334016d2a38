import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createProgress } from '../../src/cli/progress.js';
import { describeServerStart } from '../../src/servers/server-start-line.js';

function stream(tty: boolean) {
  const out = new PassThrough() as PassThrough & { isTTY?: boolean };
  if (tty) out.isTTY = true;
  let text = '';
  out.on('data', (chunk: Buffer) => (text += chunk.toString()));
  return { out, text: () => text };
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('progress lines', () => {
  it('spins on a terminal and ends the line with ✓, or ✗ when the step fails', async () => {
    const { out, text } = stream(true);
    const progress = createProgress(out, { env: {} });
    expect(await progress.step('starting fs (npx fs)', async () => 42)).toBe(42);
    await expect(
      progress.step('listing tools', () => Promise.reject(new Error('boom'))),
    ).rejects.toThrow('boom');
    await pause(10);
    expect(text()).toContain('starting fs (npx fs)…');
    expect(text()).toContain('\r\x1b[2K✓ starting fs (npx fs)\n');
    expect(text()).toContain('\r\x1b[2K✗ listing tools\n');
  });

  it('stays silent off a terminal for a quick step, and prints plain lines for a slow one', async () => {
    const quiet = stream(false);
    await createProgress(quiet.out, { env: {} }).step('quick', async () => undefined);
    const ci = stream(true);
    await createProgress(ci.out, { env: { CI: 'true' } }).step('quick', async () => undefined);
    const slow = stream(false);
    await createProgress(slow.out, { env: {}, plainDelayMs: 1 }).step('starting notes', () =>
      pause(50),
    );
    await pause(10);
    expect(quiet.text()).toBe('');
    expect(ci.text()).toBe('');
    expect(slow.text()).toBe('starting notes… (still running)\nstarting notes: done\n');
  });

  it('describes how a server starts, clipped to one line', () => {
    expect(
      describeServerStart({ name: 'fs', command: 'npx', args: ['-y', 'server-fs', '.'] }),
    ).toBe('fs (npx -y server-fs .)');
    expect(describeServerStart({ name: 'remote', url: 'https://example.com/mcp' })).toBe(
      'remote (https://example.com/mcp)',
    );
    expect(describeServerStart({ name: 'x', command: 'a'.repeat(100) })).toHaveLength(74);
  });
});
