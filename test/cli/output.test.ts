import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { closeSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { printError, sameDestination } from '../../src/cli/output.js';
import { AgentsError, AgentsErrorCode } from '../../src/errors.js';

function printed(error: unknown): string {
  const stream = new PassThrough();
  const chunks: string[] = [];
  stream.on('data', (chunk: Buffer) => chunks.push(chunk.toString()));
  printError(stream, error);
  return chunks.join('');
}

const STDERR =
  'node:internal/modules/cjs/loader:1210\nError: Cannot find module ./x.js\n\nNode.js v20\n';

describe('printError', () => {
  it('prints server stderr once when the message already quotes its last lines', () => {
    const error = new AgentsError(
      AgentsErrorCode.ServerStartFailed,
      `Server "fs" exited with code 1 during initialize (command: node ./x.js). Last stderr lines:\n${STDERR}`,
      { details: { stderrTail: STDERR } },
    );
    const text = printed(error);
    expect(text.split('Cannot find module').length - 1).toBe(1);
    expect(text).not.toContain('--- server stderr');
  });

  it('adds the stderr under a header when the message does not carry it', () => {
    const error = new AgentsError(AgentsErrorCode.Timeout, 'Server "fs" did not answer in 30 s.', {
      details: { stderrTail: STDERR },
    });
    const text = printed(error);
    expect(text).toBe(
      `agents: Server "fs" did not answer in 30 s.\n--- server stderr (last lines) ---\n${STDERR.trimEnd()}\n`,
    );
  });
});

describe('sameDestination', () => {
  it('is true for two descriptors of one file (2>&1), false for two files or buffers', () => {
    const dir = mkdtempSync(join(tmpdir(), 'agents-output-'));
    const log = openSync(join(dir, 'log'), 'w');
    const again = openSync(join(dir, 'log'), 'a');
    const other = openSync(join(dir, 'other'), 'w');
    try {
      const stream = (fd: number) => Object.assign(new PassThrough(), { fd });
      expect(sameDestination(stream(log), stream(again))).toBe(true);
      expect(sameDestination(stream(log), stream(other))).toBe(false);
      expect(sameDestination(new PassThrough(), new PassThrough())).toBe(false);
    } finally {
      for (const fd of [log, again, other]) closeSync(fd);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
