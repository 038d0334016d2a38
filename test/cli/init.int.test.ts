import { existsSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { agents, agentsWithStdin, makeProjectRepo } from './helpers.js';

describe('agents init', () => {
  let dir: string;
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it(
    'writes a workspace whose offline actor runs, asks before its write, and refuses a second init',
    { timeout: 60_000 },
    async () => {
      dir = await makeProjectRepo('agents-init-');
      const init = await agents(dir, 'init');
      expect(init.stderr).toBe('');
      expect(init.code).toBe(0);
      expect(init.stdout).toContain('actor "coder" (model: scripted, offline');
      const next = init.stdout.split('\n').filter((line) => line.startsWith('  agents '));
      expect(next).toHaveLength(3);
      // A conversation first: the quick start's path (init, chat, review, apply, undo).
      expect(next[0]).toContain('agents chat coder --thread t1');
      // The server works on the sandbox root only: "." is its one allowed folder.
      const server = await readFile(join(dir, '.agents', 'servers', 'fs.yaml'), 'utf8');
      expect(server).toMatch(/- \.\n/);
      expect(existsSync(join(dir, '.agents', 'actors', 'coder.script.yaml'))).toBe(true);

      const again = await agents(dir, 'init');
      expect(again.code).toBe(3);
      expect(again.stderr).toContain('never overwrites one');

      // The first next command, as printed, with the turn and the approval typed in.
      const run = await agentsWithStdin(
        dir,
        'Write hello.txt\na\n',
        ...['chat', 'coder', '--thread', 't1'],
      );
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toContain('changed: A hello.txt');
      expect(existsSync(join(dir, 'hello.txt'))).toBe(false);
      const diff = await agents(dir, 'sandbox', 'diff', '--thread', 't1');
      expect(diff.stdout).toBe('A hello.txt\n');
      const apply = await agents(dir, 'sandbox', 'apply', '--thread', 't1');
      expect(apply.code, apply.stderr).toBe(0);
      expect(await readFile(join(dir, 'hello.txt'), 'utf8')).toBe('hello from the agent\n');
    },
  );
});
