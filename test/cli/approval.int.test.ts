import { readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  addScriptedActors,
  agentsWithStdin as agents,
  agentsProcess,
  makeProjectRepo,
  putFixtureFilesSkill,
} from './helpers.js';
import { main } from '../../src/cli/main.js';
import type { AuditEntry } from '../../src/policy/audit-entry.js';

async function audit(cwd: string, thread: string): Promise<AuditEntry[]> {
  const result = await agents(cwd, '', 'audit', '--thread', thread, '--json');
  expect(result.code).toBe(0);
  return result.stdout
    .trim()
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as AuditEntry);
}

const exists = (path: string) =>
  stat(path).then(
    () => true,
    () => false,
  );

describe('agents actor run / resume with approvals (ask mode by default)', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await makeProjectRepo('agents-approval-');
    await putFixtureFilesSkill(dir);
    // No policy block: the default policy (mode ask) applies.
    await addScriptedActors(
      dir,
      [
        '- tool_calls: [{ name: write_file, args: { path: a.txt, content: first } }]',
        '- tool_calls: [{ name: write_file, args: { path: b.txt, content: second } }]',
        '- content: done',
      ],
      { names: ['careful'] },
    );
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it(
    'asks on stdin for each write, applies reject and edit answers, and audits them',
    { timeout: 120_000 },
    async () => {
      const run = await agents(
        dir,
        'r\nnot now\ne\n{"path": "c.txt", "content": "edited"}\n',
        'actor',
        'run',
        'careful',
        '--input',
        'write two files',
        '--thread',
        't1',
        '--by',
        'alice',
        '--keep-sandbox',
      );
      expect(run.stderr).not.toMatch(/error/i);
      expect(run.code).toBe(0);
      expect(run.stdout).toContain('Approval needed: mcp:fs/write_file (server "fs")');
      expect(run.stdout).toContain('"path": "a.txt"');
      expect(run.stdout).toContain('"path": "b.txt"');
      expect(run.stdout).toMatch(/✗ write_file: .*not now/);
      expect(run.stdout.trim().split('\n').at(-1)).toBe('done');
      const sandbox = /sandbox: (.+)$/m.exec(run.stderr)?.[1];
      expect(sandbox).toBeDefined();
      expect(await exists(join(sandbox!, 'a.txt'))).toBe(false);
      expect(await exists(join(sandbox!, 'b.txt'))).toBe(false);
      expect(await readFile(join(sandbox!, 'c.txt'), 'utf8')).toBe('edited');

      const entries = await audit(dir, 't1');
      const calls = entries.filter((entry) => entry.event === 'tool-call');
      expect(
        calls.map((entry) => [
          entry.toolId,
          entry.policy?.outcome,
          entry.policy?.decidedBy,
          entry.policy?.message,
        ]),
      ).toEqual([
        ['mcp:fs/write_file', 'rejected', 'alice', 'not now'],
        ['mcp:fs/write_file', 'edited', 'alice', undefined],
      ]);
      expect(calls[1]?.snapshot).toMatch(/^[0-9a-f]{40}$/);
      expect(entries.filter((entry) => entry.event === 'approval-requested')).toHaveLength(2);

      const text = await agents(dir, '', 'audit', '--thread', 't1');
      expect(text.stdout).toMatch(/mcp:fs\/write_file {2}ask→rejected by alice \(mode ask\)/);
    },
  );

  it(
    'stops with exit code 8 and resume instructions when nobody can answer, then resumes from the command line',
    { timeout: 180_000 },
    async () => {
      const paused = await agentsProcess(dir, [
        'actor',
        'run',
        'careful',
        '--input',
        'write two files',
        '--thread',
        't2',
      ]);
      expect(paused.code).toBe(8);
      expect(paused.stderr).toContain('Paused on thread t2: mcp:fs/write_file waits for approval.');
      expect(paused.stderr).toContain('agents actor resume careful --thread t2 --approve');
      expect(paused.stderr).toContain(
        `agents actor resume careful --thread t2 --edit '{"path":"a.txt","content":"first"}'`,
      );

      // Approve the first write; the second one pauses again (no answers on stdin).
      const first = await agents(
        dir,
        '',
        'actor',
        'resume',
        'careful',
        '--thread',
        't2',
        '--approve',
        '--by',
        'bob',
      );
      expect(first.code).toBe(8);
      expect(first.stdout).toContain('answer: approve (by bob)');
      expect(first.stdout).toMatch(/← write_file: wrote /);
      expect(first.stderr).toContain('--thread t2 --edit \'{"path":"b.txt","content":"second"}\'');

      const second = await agents(
        dir,
        '',
        'actor',
        'resume',
        'careful',
        '--thread',
        't2',
        '--reject',
        'enough',
        '--by',
        'bob',
        '--keep-sandbox',
      );
      expect(second.code).toBe(0);
      expect(second.stdout.trim().split('\n').at(-1)).toBe('done');
      const sandbox = /sandbox: (.+)$/m.exec(second.stderr)?.[1];
      // The thread's sandbox carries the first, approved write across the three processes.
      expect(await readFile(join(sandbox!, 'a.txt'), 'utf8')).toBe('first');
      expect(await exists(join(sandbox!, 'b.txt'))).toBe(false);

      const nothing = await agents(
        dir,
        '',
        'actor',
        'resume',
        'careful',
        '--thread',
        't2',
        '--approve',
      );
      expect(nothing.code).toBe(4);
      expect(nothing.stderr).toContain('is not waiting for an approval');

      const calls = (await audit(dir, 't2')).filter((entry) => entry.event === 'tool-call');
      expect(calls.map((entry) => [entry.policy?.outcome, entry.policy?.decidedBy])).toEqual([
        ['approved', 'bob'],
        ['rejected', 'bob'],
      ]);
    },
  );
  it(
    'Ctrl-C while waiting on an open pipe for an answer ends with 130 and says how to resume',
    { timeout: 120_000 },
    async () => {
      const controller = new AbortController();
      let stdout = '';
      let stderr = '';
      const sink = (append: (text: string) => void) =>
        new Writable({
          write(chunk: Buffer, _encoding, done) {
            append(chunk.toString());
            done();
          },
        });
      // A pipe that stays open and never sends a line: only the signal can end the wait.
      const stdin = new PassThrough();
      const code = main(
        ['actor', 'run', 'careful', '--input', 'write two files', '--thread', 't3'],
        {
          cwd: dir,
          stdin,
          signal: controller.signal,
          stdout: sink((text) => (stdout += text)),
          stderr: sink((text) => {
            stderr += text;
            if (text.includes('Waiting for approval answers'))
              controller.abort(new Error('SIGINT'));
          }),
        },
      );
      expect(await code).toBe(130);
      expect(stdout).toContain('Paused: 1 call needs approval.');
      expect(stderr).toContain('agents actor resume careful --thread t3 --approve');
      expect(stderr).toMatch(/interrupted/);
      stdin.end();
      expect(await exists(join(dir, 'a.txt'))).toBe(false);
    },
  );
});
