import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probeBubblewrap } from '../../src/confinement/bubblewrap.js';
import { agents, agentsWithStdin, makeProjectRepo } from './helpers.js';

const NOTES_SERVER = join(import.meta.dirname, '..', 'fixtures', 'workspace', 'notes-server.mjs');

/**
 * Issue 35, item 8: `agents tool call` from a linked worktree (`git worktree add`), whose `.git`
 * is a file naming a folder inside the main repository's `.git/worktrees/`.
 */
describe('agents tool call in a linked git worktree', () => {
  let main: string;
  let linked: string;
  beforeAll(async () => {
    main = await makeProjectRepo('agents-tool-call-wt-');
    linked = `${main}-linked`;
    execFileSync('git', ['worktree', 'add', '-q', '-b', 'side', linked], { cwd: main });
    const added = await agents(
      linked,
      'server',
      'add',
      'notes',
      '--no-validate',
      '--',
      process.execPath,
      NOTES_SERVER,
    );
    expect(added.code, added.stderr).toBe(0);
  });
  afterAll(async () => {
    await rm(main, { recursive: true, force: true });
    await rm(linked, { recursive: true, force: true });
  });

  it('reads and writes from the linked worktree, confined where bubblewrap is', async () => {
    // Precondition: the worktree's .git is a gitfile into the main repo.
    expect(await readFile(join(linked, '.git'), 'utf8')).toMatch(/^gitdir: .*\.git\/worktrees\//);
    const gitfile = await readFile(join(linked, '.git'), 'utf8');
    const write = await agentsWithStdin(
      linked,
      '',
      'tool',
      'call',
      'notes/write_note',
      '--policy',
      'auto',
      '--args',
      JSON.stringify({ path: 'a.md', text: 'hi' }),
    );
    expect(write.code, write.stdout + write.stderr).toBe(0);
    expect(await readFile(join(linked, 'a.md'), 'utf8')).toBe('hi');
    const read = await agentsWithStdin(
      linked,
      '',
      'tool',
      'call',
      'notes/read_note',
      '--args',
      '{"path":"a.md"}',
    );
    expect(read.code, read.stderr).toBe(0);
    expect(read.stdout).toBe('hi\n');
    expect(await readFile(join(linked, '.git'), 'utf8')).toBe(gitfile);
    expect(existsSync(join(dirname(linked), 'a.md'))).toBe(false);
    if (probeBubblewrap().available) {
      // Confined: the server still cannot write the worktree's git folder in the main repo.
      const gitDir = join(main, '.git', 'worktrees', linked.split('/').pop()!);
      const head = await readFile(join(gitDir, 'HEAD'), 'utf8');
      const evil = await agentsWithStdin(
        linked,
        '',
        'tool',
        'call',
        'notes/write_note',
        '--policy',
        'auto',
        '--args',
        JSON.stringify({ path: '.git', text: 'gitdir: /tmp\n' }),
      );
      expect(evil.code, evil.stdout + evil.stderr).not.toBe(0);
      expect(await readFile(join(linked, '.git'), 'utf8')).toBe(gitfile);
      expect(await readFile(join(gitDir, 'HEAD'), 'utf8')).toBe(head);
    }
  });
});
