import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cli, editThread, makeProject, removeProject, userGit, type Project } from './helpers.js';

const T = 'pr1';
const LINES = Array.from({ length: 10 }, (_, index) => `line ${index + 1}`);
const text = (lines: readonly string[]) => `${lines.join('\n')}\n`;

describe('agents sandbox commit --branch: a PR-ready branch (#26)', () => {
  let project: Project | undefined;
  afterEach(async () => {
    await removeProject(project);
    project = undefined;
  });

  it(
    'goes on the user`s current HEAD (committed meanwhile) and merges back without conflicts',
    { timeout: 240_000 },
    async () => {
      const p = (project = await makeProject('agents-onto-', { 'app.txt': text(LINES) }));
      await editThread(p, T, {
        'app.txt': text(LINES.map((line) => (line === 'line 2' ? 'line 2 (agent)' : line))),
        'agent.txt': 'new\n',
      });
      const started = userGit(p.dir, 'rev-parse', 'HEAD').trim();
      // The user goes on working: edits another part of app.txt and commits.
      await writeFile(
        join(p.dir, 'app.txt'),
        text(LINES.map((line) => (line === 'line 9' ? 'line 9 (user)' : line))),
      );
      await writeFile(join(p.dir, 'user.txt'), 'mine\n');
      userGit(p.dir, 'add', '-A');
      userGit(p.dir, 'commit', '-q', '-m', 'user work');
      const head = userGit(p.dir, 'rev-parse', 'HEAD').trim();

      const made = await cli(p, 'sandbox', 'commit', '--thread', T, '--branch', 'agent/work');
      expect(made.code, made.stderr).toBe(0);
      expect(made.stdout).toContain(`1 commit(s) on ${head.slice(0, 12)})`);
      expect(userGit(p.dir, 'rev-parse', 'agent/work^').trim()).toBe(head);
      const merged = userGit(p.dir, 'show', 'agent/work:app.txt');
      expect(merged).toContain('line 2 (agent)');
      expect(merged).toContain('line 9 (user)');
      expect(userGit(p.dir, 'show', 'agent/work:user.txt')).toBe('mine\n');
      // merge-tree of the user's branch and the agent's: no conflicts (exit 0).
      const branch = userGit(p.dir, 'branch', '--show-current').trim();
      userGit(p.dir, 'merge-tree', '--write-tree', branch, 'agent/work');
      // The message: thread id and base commit, a trailer naming the actor, no internal id.
      const message = userGit(p.dir, 'log', '-1', '--format=%B', 'agent/work');
      expect(message).toContain(`Agents thread: ${T}`);
      expect(message).toContain(`Sandbox base commit: ${started}`);
      expect(message).toMatch(/^Co-authored-by: agents actor bot </m);
      expect(message).not.toMatch(/sandbox t-/i);

      // --onto the commit it started from: the old shape (no user work on the branch).
      const old = await cli(
        p,
        'sandbox',
        'commit',
        '--thread',
        T,
        '--branch',
        'agent/old',
        '--onto',
        started,
      );
      expect(old.code, old.stderr).toBe(0);
      expect(userGit(p.dir, 'rev-parse', 'agent/old^').trim()).toBe(started);
      const bad = await cli(
        p,
        'sandbox',
        'commit',
        '--thread',
        T,
        '--branch',
        'x',
        '--onto',
        'nope',
      );
      expect(bad.code).toBe(4);
      expect(bad.stderr).toContain('--onto "nope" names no commit');
    },
  );

  it(
    'a conflict with the user`s commit writes no branch and says what to do',
    { timeout: 240_000 },
    async () => {
      // Three conflicting files: the message names every one, not the first.
      const names = ['app.txt', 'b.txt', 'c.txt'];
      const p = (project = await makeProject(
        'agents-onto-conflict-',
        Object.fromEntries(names.map((name) => [name, text(LINES)])),
      ));
      const edited = (who: string) =>
        text(LINES.map((line) => (line === 'line 5' ? `line 5 (${who})` : line)));
      await editThread(p, T, Object.fromEntries(names.map((name) => [name, edited('agent')])));
      for (const name of names) await writeFile(join(p.dir, name), edited('user'));
      userGit(p.dir, 'commit', '-q', '-am', 'user work');
      const made = await cli(p, 'sandbox', 'commit', '--thread', T, '--branch', 'agent/work');
      expect(made.code).toBe(7);
      expect(made.stderr).toContain(
        'conflicts with the commit it would go on (3 path(s): app.txt, b.txt, c.txt)',
      );
      expect(made.stderr).toContain('agents sandbox apply');
      expect(userGit(p.dir, 'branch', '--list', 'agent/work')).toBe('');
    },
  );

  it(
    'leaves the user`s uncommitted base edits out unless --with-base-edits, and lists them',
    { timeout: 240_000 },
    async () => {
      const p = (project = await makeProject('agents-onto-base-', { 'app.txt': text(LINES) }));
      await writeFile(join(p.dir, 'draft.txt'), 'my uncommitted draft\n');
      await editThread(p, T, { 'agent.txt': 'new\n' }, { fromWorktree: true });
      const plain = await cli(p, 'sandbox', 'commit', '--thread', T, '--branch', 'only-agent');
      expect(plain.code, plain.stderr).toBe(0);
      expect(plain.stdout).toContain('Left out: your uncommitted edits');
      expect(plain.stdout).toContain('A draft.txt');
      const files = userGit(p.dir, 'ls-tree', '-r', '--name-only', 'only-agent');
      expect(files).toContain('agent.txt');
      expect(files).not.toContain('draft.txt');

      const withEdits = await cli(
        p,
        'sandbox',
        'commit',
        '--thread',
        T,
        '--branch',
        'with-edits',
        '--with-base-edits',
      );
      expect(withEdits.code, withEdits.stderr).toBe(0);
      expect(withEdits.stdout).toContain('Committed first');
      expect(userGit(p.dir, 'show', 'with-edits^:draft.txt')).toBe('my uncommitted draft\n');
      expect(userGit(p.dir, 'ls-tree', '--name-only', 'with-edits^')).not.toContain('agent.txt');
      expect(userGit(p.dir, 'show', 'with-edits:agent.txt')).toBe('new\n');
    },
  );
});
