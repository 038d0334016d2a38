import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { toApprovalPreview } from '../../src/policy/approval.js';
import { decide } from '../../src/policy/decide.js';
import { parsePolicy } from '../../src/config/policy-schema.js';
import { promptForApproval } from '../../src/policy/terminal-approval.js';
import { descriptorFor } from './helpers.js';

const writer = descriptorFor('fs', { name: 'write_file' });
const preview = toApprovalPreview(writer, { path: 'src/a.ts' }, decide(writer, parsePolicy({})), {
  toolCallId: 'c1',
});

async function answer(...lines: string[]) {
  const input = new PassThrough();
  const output = new PassThrough();
  let shown = '';
  output.on('data', (chunk: Buffer) => (shown += chunk.toString()));
  const pending = promptForApproval(preview, { input, output, user: 'bob' });
  for (const line of lines) input.write(`${line}\n`);
  input.end();
  return { response: await pending, shown: () => shown };
}

describe('promptForApproval', () => {
  it('shows the preview and maps approve, edit and reject answers to resume values', async () => {
    const approved = await answer('a');
    expect(approved.response).toEqual({ type: 'approve', by: 'bob' });
    expect(approved.shown()).toContain('mcp:fs/write_file');
    expect(approved.shown()).toContain('writes: true (name-heuristic');
    expect(approved.shown()).toContain('"path": "src/a.ts"');
    expect((await answer('e', 'not json', 'e', '{"path":"b"}')).response).toEqual({
      type: 'edit',
      args: { path: 'b' },
      by: 'bob',
    });
    expect((await answer('huh', 'r', 'wrong file')).response).toEqual({
      type: 'reject',
      message: 'wrong file',
      by: 'bob',
    });
  });

  it('takes the message or the JSON on the same line as r / e, as the help says', async () => {
    expect((await answer('r not now, thanks')).response).toEqual({
      type: 'reject',
      message: 'not now, thanks',
      by: 'bob',
    });
    expect((await answer('e {"path": "c.ts"}')).response).toEqual({
      type: 'edit',
      args: { path: 'c.ts' },
      by: 'bob',
    });
    // A broken one-line edit is re-asked, not taken as a rejection.
    const retried = await answer('e {oops', 'a');
    expect(retried.response).toEqual({ type: 'approve', by: 'bob' });
    expect(retried.shown()).toContain('Not valid JSON');
  });

  it('treats closed input as a rejection', async () => {
    expect((await answer()).response).toMatchObject({ type: 'reject' });
  });
});
