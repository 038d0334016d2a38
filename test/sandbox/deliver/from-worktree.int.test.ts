import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, onTestFinished } from 'vitest';
import { createActor } from '../../../src/actors/actor.js';
import { threadSandboxDir } from '../../../src/actors/thread-sandbox.js';
import type { SandboxWarning } from '../../../src/sandbox/base-origin.js';
import { addFixtureFilesSkill, agents, makeProjectRepo } from '../../cli/helpers.js';
import { userGit, worktreeTree } from './helpers.js';

/**
 * `sandbox.from`: a run starts from the user's files as they are (the default), from the last
 * commit, or from a revision; the user's repository is only read. Real repos, real git, through
 * the CLI and createActor.
 */

const sha256 = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex');

/** What must not change in the user's repo when a sandbox is made from it. */
async function repoFingerprint(dir: string): Promise<Record<string, string>> {
  return {
    index: sha256(await readFile(join(dir, '.git', 'index'))),
    config: sha256(await readFile(join(dir, '.git', 'config'))),
    head: await readFile(join(dir, '.git', 'HEAD'), 'utf8'),
    refs: userGit(dir, 'for-each-ref', '--format=%(refname) %(objectname)'),
    objects: userGit(dir, 'count-objects', '-v'),
    stash: userGit(dir, 'stash', 'list'),
    worktrees: userGit(dir, 'worktree', 'list', '--porcelain'),
  };
}

/** Every path under `dir` (folders end in `/`), for before/after listings of the state folder. */
async function listAll(dir: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (folder: string): Promise<void> => {
    let entries;
    try {
      entries = await readdir(folder, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const path = join(folder, entry.name);
      out.push(relative(dir, path) + (entry.isDirectory() ? '/' : ''));
      if (entry.isDirectory()) await walk(path);
    }
  };
  await walk(dir);
  return out.sort();
}

/** The thread sandbox's marker (its tree folder, base and head, what it was made from). */
async function threadMarker(
  workspace: string,
  threadId: string,
): Promise<{ root: string; base: string; head: string; from?: string; uncommitted?: number }> {
  const record = JSON.parse(
    await readFile(join(threadSandboxDir(workspace, 'bot', threadId), 'thread.json'), 'utf8'),
  ) as { sandboxDir: string };
  return JSON.parse(
    await readFile(join(record.sandboxDir, 'run', 'sandbox.json'), 'utf8'),
  ) as Awaited<ReturnType<typeof threadMarker>>;
}

const count = (text: string, needle: string) => text.split(needle).length - 1;

describe('sandbox.from through the CLI (fixture file server, scripted model)', () => {
  let dir: string;
  let workspace: string;
  const run = (...argv: string[]) => agents(dir, ...argv);

  beforeEach(async () => {
    dir = await makeProjectRepo('agents-from-');
    workspace = join(dir, '.agents');
    await writeFile(join(dir, '.gitignore'), '.agents/\n*.log\nscript*.yaml\n');
    await mkdir(join(dir, 'src'));
    await writeFile(join(dir, 'src', 'app.txt'), 'one\ntwo\n');
    userGit(dir, 'add', '-A');
    userGit(dir, 'commit', '-q', '-m', 'project');
    await addFixtureFilesSkill(dir, { tools: 'basic' });
    await writeFile(
      join(dir, 'script.yaml'),
      [
        '- tool_calls: [{ name: read_file, args: { path: notes/todo.txt } }]',
        '- tool_calls: [{ name: read_file, args: { path: secret.log } }]',
        '- tool_calls: [{ name: write_file, args: { path: out/result.txt, content: "done\\n" } }]',
        '- content: finished',
        '',
      ].join('\n'),
    );
    await mkdir(join(workspace, 'actors'), { recursive: true });
    await writeFile(
      join(workspace, 'actors', 'bot.yaml'),
      'skills: [files]\nmodel: scripted:script.yaml\npolicy:\n  mode: auto\n',
    );
    // The user's uncommitted work: a staged edit, an unstaged edit, an untracked file, and an
    // ignored file that must stay out.
    await writeFile(join(dir, 'README.md'), 'hello\nstaged line\n');
    userGit(dir, 'add', 'README.md');
    await writeFile(join(dir, 'README.md'), 'hello\nstaged line\nunstaged line\n');
    await mkdir(join(dir, 'notes'));
    await writeFile(join(dir, 'notes', 'todo.txt'), 'untracked todo\n');
    await writeFile(join(dir, 'secret.log'), 'ignored secret\n');
  });

  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it(
    'a run from worktree (the default) sees uncommitted and untracked files, not ignored ones; the repo stays byte-identical; apply gives exactly the sandbox`s files',
    { timeout: 180_000 },
    async () => {
      const before = await repoFingerprint(dir);
      const statusBefore = userGit(dir, 'status', '--porcelain', '--untracked-files=all');

      const result = await run(
        'actor',
        'run',
        'bot',
        '--input',
        'do it',
        '--thread',
        'w1',
        '--json',
      );
      expect(result.code, result.stderr).toBe(0);
      const events = result.stdout
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      const ends = events.filter((event) => event['type'] === 'tool-call-end');
      // The untracked file is there for the tools; the ignored one is not.
      expect(ends[0]).toMatchObject({ name: 'read_file', isError: false });
      expect(JSON.stringify(ends[0])).toContain('untracked todo');
      expect(ends[1]).toMatchObject({ name: 'read_file', isError: true });
      expect(JSON.stringify(ends[1])).not.toContain('ignored secret');
      expect(result.stderr).not.toContain('uncommitted');

      const marker = await threadMarker(workspace, 'w1');
      expect(marker).toMatchObject({ from: 'worktree', uncommitted: 2 });
      expect(await readFile(join(marker.root, 'README.md'), 'utf8')).toBe(
        'hello\nstaged line\nunstaged line\n',
      );
      expect(existsSync(join(marker.root, 'secret.log'))).toBe(false);

      // The user's repo: index bytes, refs, object count, config, HEAD, status: all as before.
      expect(await repoFingerprint(dir)).toEqual(before);
      expect(userGit(dir, 'status', '--porcelain', '--untracked-files=all')).toBe(statusBefore);

      // Review: the diff is the run's work only (the user's edits are in the base).
      const stat = await run('sandbox', 'diff', '--thread', 'w1', '--stat');
      expect(stat.code, stat.stderr).toBe(0);
      expect(stat.stdout).toContain('out/result.txt');
      expect(stat.stdout).not.toContain('README.md');
      expect(stat.stdout).not.toContain('todo.txt');

      // Apply onto the unchanged tree: the user's files become exactly the sandbox's.
      const applied = await run('sandbox', 'apply', '--thread', 'w1');
      expect(applied.code, applied.stderr).toBe(0);
      expect(applied.stdout).toContain('Applied 1 file(s)');
      expect(await readFile(join(dir, 'out', 'result.txt'), 'utf8')).toBe('done\n');
      expect(await readFile(join(dir, 'README.md'), 'utf8')).toBe(
        'hello\nstaged line\nunstaged line\n',
      );
      const sandboxTree = userGit(
        dir,
        '--git-dir',
        join(marker.root, '..', 'run', 'git'),
        'rev-parse',
        `${(await threadMarker(workspace, 'w1')).head}^{tree}`,
      ).trim();
      expect(await worktreeTree(dir)).toBe(sandboxTree);
      // Or a branch: with --with-base-edits the user's uncommitted changes in a commit of their
      // own, then the work.
      const headBefore = userGit(dir, 'rev-parse', 'HEAD').trim();
      const branched = await run(
        'sandbox',
        'commit',
        '--thread',
        'w1',
        '--branch',
        'agents/w1',
        '--with-base-edits',
      );
      expect(branched.code, branched.stderr).toBe(0);
      const commits = userGit(dir, 'rev-list', '--reverse', `${headBefore}..agents/w1`)
        .trim()
        .split('\n');
      expect(commits).toHaveLength(2);
      expect(userGit(dir, 'rev-parse', `${commits[0]}^`).trim()).toBe(headBefore);
      expect(
        userGit(dir, 'diff-tree', '-r', '--name-status', '--no-commit-id', commits[0]!)
          .trim()
          .split('\n')
          .sort(),
      ).toEqual(['A\tnotes/todo.txt', 'M\tREADME.md']);
      expect(
        userGit(dir, 'diff-tree', '-r', '--name-status', '--no-commit-id', commits[1]!).trim(),
      ).toBe('A\tout/result.txt');
      expect(userGit(dir, 'rev-parse', 'agents/w1^{tree}').trim()).toBe(sandboxTree);
      expect(userGit(dir, 'rev-parse', 'HEAD').trim()).toBe(headBefore);
      // Apply and commit wrote the working tree and one branch only: the index is the user's.
      expect(sha256(await readFile(join(dir, '.git', 'index')))).toBe(before.index);
    },
  );

  it(
    'resuming a thread keeps the base of its first run: later edits of the user are not taken in',
    { timeout: 180_000 },
    async () => {
      const first = await run('actor', 'run', 'bot', '--input', 'go', '--thread', 'r1');
      expect(first.code, first.stderr).toBe(0);
      const marker = await threadMarker(workspace, 'r1');
      await writeFile(join(dir, 'later.txt'), 'made after the first run\n');
      await writeFile(join(dir, 'README.md'), 'rewritten after the first run\n');
      await writeFile(join(dir, 'script.yaml'), '- content: nothing to do\n');
      const second = await run('actor', 'run', 'bot', '--input', 'again', '--thread', 'r1');
      expect(second.code, second.stderr).toBe(0);
      const again = await threadMarker(workspace, 'r1');
      expect(again.base).toBe(marker.base);
      expect(existsSync(join(again.root, 'later.txt'))).toBe(false);
      expect(await readFile(join(again.root, 'README.md'), 'utf8')).toBe(
        'hello\nstaged line\nunstaged line\n',
      );
    },
  );

  it(
    '--from head with uncommitted changes warns once, and the sandbox has the commit`s files',
    { timeout: 180_000 },
    async () => {
      const before = await repoFingerprint(dir);
      const result = await run(
        'actor',
        'run',
        'bot',
        '--input',
        'go',
        '--thread',
        'h1',
        '--from',
        'head',
      );
      expect(result.code, result.stderr).toBe(0);
      expect(count(result.stderr, 'uncommitted changes')).toBe(1);
      expect(result.stderr).toMatch(/warning: .*from: head.*README\.md, notes\/todo\.txt/);
      const marker = await threadMarker(workspace, 'h1');
      expect(marker.from).toBe('head');
      expect(await readFile(join(marker.root, 'README.md'), 'utf8')).toBe('hello\n');
      expect(existsSync(join(marker.root, 'notes'))).toBe(false);
      expect(await repoFingerprint(dir)).toEqual(before);
      // The thread's later runs reopen its sandbox: no new base, no second warning.
      const again = await run('actor', 'run', 'bot', '--input', 'go', '--thread', 'h1');
      expect(again.code, again.stderr).toBe(0);
      expect(again.stderr).not.toContain('uncommitted changes');
    },
  );

  it(
    '--from with a revision that names no commit fails with a typed error naming it and leaves no sandbox',
    { timeout: 120_000 },
    async () => {
      // A state folder of this test's own, so other test files running meanwhile cannot
      // change the listing.
      const shared = process.env['AGENTS_STATE_DIR'];
      const state = await realpath(await mkdtemp(join(tmpdir(), 'agents-from-state-')));
      process.env['AGENTS_STATE_DIR'] = state;
      onTestFinished(async () => {
        process.env['AGENTS_STATE_DIR'] = shared;
        await rm(state, { recursive: true, force: true });
      });
      const warm = await run('actor', 'run', 'bot', '--input', 'go', '--thread', 'warm');
      expect(warm.code, warm.stderr).toBe(0);
      const stateBefore = await listAll(state);
      expect(stateBefore.length).toBeGreaterThan(0);
      const before = await repoFingerprint(dir);
      const result = await run(
        'actor',
        'run',
        'bot',
        '--input',
        'go',
        '--thread',
        'bad1',
        '--from',
        'no-such-branch',
        '--json',
      );
      expect(result.code).toBe(4);
      expect(result.stderr).toContain('no-such-branch');
      expect(result.stderr).toContain('REVISION_NOT_FOUND');
      expect(await listAll(state)).toEqual(stateBefore);
      expect(await repoFingerprint(dir)).toEqual(before);
      // A revision that exists works, and the sandbox holds that commit's files.
      const first = userGit(dir, 'rev-list', '--max-parents=0', 'HEAD').trim();
      const ok = await run(
        'actor',
        'run',
        'bot',
        '--input',
        'go',
        '--thread',
        'rev1',
        '--from',
        first,
      );
      expect(ok.code, ok.stderr).toBe(0);
      const marker = await threadMarker(workspace, 'rev1');
      expect(marker.from).toBe('revision');
      expect(existsSync(join(marker.root, 'src', 'app.txt'))).toBe(false);
    },
  );
});

describe('sandbox.from through createActor (built-in tools, no server)', () => {
  let dir: string;

  beforeEach(async () => {
    dir = await makeProjectRepo('agents-from-api-');
    await writeFile(join(dir, '.gitignore'), 'ws/\n');
    userGit(dir, 'add', '.gitignore');
    userGit(dir, 'commit', '-q', '-m', 'ignore');
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function activate(
    options: { from?: string; sandboxFrom?: string; source?: string } = {},
  ): Promise<{
    warnings: SandboxWarning[];
    messages: string[];
    actor: Awaited<ReturnType<typeof createActor>>;
  }> {
    const warnings: SandboxWarning[] = [];
    const messages: string[] = [];
    const workspace = join(dir, 'ws', '.agents');
    await mkdir(join(workspace, 'skills'), { recursive: true });
    await writeFile(
      join(workspace, 'skills', 'files.yaml'),
      `tools: [read_file, list_directory]\n`,
    );
    const actor = await createActor({
      config: {
        name: 'reader',
        skills: ['files'],
        checkpointer: { type: 'memory' },
        sandbox: {
          source: options.source ?? dir,
          ...(options.from === undefined ? {} : { from: options.from }),
        },
      },
      workspace,
      ...(options.sandboxFrom === undefined ? {} : { sandboxFrom: options.sandboxFrom }),
      onSandboxWarning: (warning) => warnings.push(warning),
      onWarning: (message) => messages.push(message),
    });
    await actor.activate();
    return { warnings, messages, actor };
  }

  it('from head with a dirty tree: one structured warning (code, paths) and one message', async () => {
    await writeFile(join(dir, 'README.md'), 'edited\n');
    await writeFile(join(dir, 'new.txt'), 'new\n');
    const { warnings, messages, actor } = await activate({ from: 'head' });
    try {
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatchObject({
        code: 'uncommitted-changes-left-out',
        source: await realpath(dir),
        paths: ['README.md', 'new.txt'],
        count: 2,
      });
      expect(messages.filter((message) => message.includes('uncommitted'))).toHaveLength(1);
      expect(actor.sandbox!.baseOrigin).toMatchObject({ from: 'head' });
      expect(actor.sandbox!.baseWarnings).toEqual(warnings);
    } finally {
      await actor.deactivate();
    }
    // A clean tree: nothing to say.
    userGit(dir, 'add', '-A');
    userGit(dir, 'commit', '-q', '-m', 'clean');
    const clean = await activate({ from: 'head' });
    expect(clean.warnings).toEqual([]);
    await clean.actor.deactivate();
  });

  it('the createActor option wins over the config; worktree sees untracked files', async () => {
    await writeFile(join(dir, 'untracked.txt'), 'mine\n');
    const { actor, warnings } = await activate({ from: 'head', sandboxFrom: 'worktree' });
    try {
      expect(warnings).toEqual([]);
      expect(actor.sandbox!.baseOrigin).toMatchObject({ from: 'worktree', uncommitted: 1 });
      expect(await readFile(join(actor.sandbox!.root, 'untracked.txt'), 'utf8')).toBe('mine\n');
    } finally {
      await actor.deactivate();
    }
  });

  it('a repository with no commits: worktree starts from its files, head is a clear error', async () => {
    const empty = join(dir, 'ws', 'fresh');
    await mkdir(empty, { recursive: true });
    userGit(empty, 'init', '-q');
    await writeFile(join(empty, 'first.txt'), 'first\n');
    const made = await activate({ source: empty });
    try {
      expect(made.actor.sandbox!.baseOrigin).toEqual({ from: 'worktree', uncommitted: 0 });
      expect(await readFile(join(made.actor.sandbox!.root, 'first.txt'), 'utf8')).toBe('first\n');
    } finally {
      await made.actor.deactivate();
    }
    await expect(activate({ source: empty, from: 'head' })).rejects.toMatchObject({
      code: 'REVISION_NOT_FOUND',
      message: expect.stringContaining('no commits yet') as unknown,
    });
  });

  it('a plain folder is copied as before; head there is a config error', async () => {
    // Outside any repository: the OS temp folder.
    const folder = await realpath(await mkdtemp(join(tmpdir(), 'agents-from-plain-')));
    try {
      await writeFile(join(folder, 'plain.txt'), 'plain\n');
      const made = await activate({ source: folder });
      try {
        expect(made.actor.sandbox!.baseOrigin).toEqual({ from: 'folder' });
        expect(await readFile(join(made.actor.sandbox!.root, 'plain.txt'), 'utf8')).toBe('plain\n');
      } finally {
        await made.actor.deactivate();
      }
      await expect(activate({ source: folder, from: 'head' })).rejects.toMatchObject({
        code: 'CONFIG_INVALID',
      });
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });
});
