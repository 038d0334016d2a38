import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readAuditLog } from '../../src/policy/audit-log.js';

const run = promisify(execFile);
const script = fileURLToPath(new URL('./fixtures/approval-graph.ts', import.meta.url));

interface StepOutput {
  interrupt: { kind?: string; toolId?: string; args?: Record<string, unknown> } | null;
  messages: Array<{ type: string; content: unknown; status?: string }>;
}

async function step(dir: string, ...args: string[]): Promise<Record<string, StepOutput>> {
  // A fresh Node process each time: nothing survives but the SQLite, pin and audit files.
  const { stdout } = await run(process.execPath, ['--import', 'tsx', script, dir, ...args], {
    cwd: process.cwd(),
    timeout: 60_000,
  });
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as Record<string, StepOutput>;
}

const exists = (path: string) =>
  stat(path).then(
    () => true,
    () => false,
  );

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'approval-restart-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('approvals across a process restart with the SQLite checkpointer', () => {
  it(
    'pauses in one process and resumes approve, edit and reject in a new process',
    { timeout: 180_000 },
    async () => {
      const started = await step(dir, 'start', 'approve', 'edit', 'reject');
      for (const thread of ['approve', 'edit', 'reject']) {
        expect(started[thread]?.interrupt).toMatchObject({
          kind: 'agents/tool-approval',
          toolId: 'mcp:fs/write_file',
          args: { path: `${thread}.txt` },
        });
      }
      expect(await exists(join(dir, 'out'))).toBe(false);

      // A new process: only the SQLite, pin and audit files carry the paused runs over.
      const resumed = await step(
        dir,
        'resume',
        `approve=${JSON.stringify({ type: 'approve', by: 'alice' })}`,
        `edit=${JSON.stringify({ type: 'edit', args: { path: 'edited.txt', content: 'from the human' } })}`,
        `reject=${JSON.stringify({ type: 'reject', message: 'wrong file' })}`,
      );
      expect(resumed['approve']?.interrupt).toBeNull();
      expect(await readFile(join(dir, 'out', 'approve.txt'), 'utf8')).toBe('from the model');
      expect(resumed['approve']?.messages.at(-1)?.content).toBe('done');

      expect(resumed['edit']?.interrupt).toBeNull();
      expect(await readFile(join(dir, 'out', 'edited.txt'), 'utf8')).toBe('from the human');
      expect(await exists(join(dir, 'out', 'edit.txt'))).toBe(false);

      expect(await exists(join(dir, 'out', 'reject.txt'))).toBe(false);
      const toolMessage = resumed['reject']?.messages.find((message) => message.type === 'tool');
      expect(toolMessage?.status).toBe('error');
      expect(String(toolMessage?.content)).toContain('wrong file');

      const { entries } = await readAuditLog(join(dir, 'audit.jsonl'));
      const outcomes = entries
        .filter((entry) => entry.event === 'tool-call')
        .map((entry) => [entry.thread, entry.policy?.outcome, entry.policy?.decidedBy]);
      expect(outcomes).toEqual([
        ['approve', 'approved', 'alice'],
        ['edit', 'edited', 'user'],
        ['reject', 'rejected', 'user'],
      ]);
      expect(entries.filter((entry) => entry.event === 'approval-requested')).toHaveLength(3);
      const pins = JSON.parse(await readFile(join(dir, 'pins.json'), 'utf8')) as {
        pins: Record<string, { approvedBy: string }>;
      };
      expect(pins.pins['mcp:fs/write_file']?.approvedBy).toBe('alice');
    },
  );
});
