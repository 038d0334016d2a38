import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { printError } from '../../src/cli/output.js';
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
