import {
  existsSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  unlinkSync,
  mkdirSync,
  renameSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AgentsError } from '../../src/errors.js';
import {
  createSandbox,
  pruneSandboxes,
  type LocalSandbox,
} from '../../src/sandbox/local-sandbox.js';
import { git, hashTree, makeRepo, writeFiles } from './helpers.js';

let scratch: string;
let repo: string;
let baseDir: string;
const open: LocalSandbox[] = [];

beforeEach(() => {
  scratch = mkdtempSync(join(tmpdir(), 'sandbox-int-'));
  repo = join(scratch, 'repo');
  baseDir = join(scratch, 'sandboxes');
  mkdirSync(repo);
  mkdirSync(baseDir);
  makeRepo(repo, {
    'README.md': '# demo\n',
    'src/main.py': 'print("hi")\n',
    'src/util.py': 'x = 1\n',
    '.gitignore': '*.log\n',
  });
});

afterEach(async () => {
  for (const sandbox of open.splice(0)) await sandbox.close();
  rmSync(scratch, { recursive: true, force: true });
});

async function make(
  options: Partial<Parameters<typeof createSandbox>[0]> = {},
): Promise<LocalSandbox> {
  const sandbox = await createSandbox({ source: repo, baseDir, ...options });
  open.push(sandbox);
  return sandbox;
}

/** Everything about the user's repo that the sandbox must never change. */
function userRepoState(): Record<string, string> {
  return {
    head: git(repo, 'rev-parse', 'HEAD'),
    symbolicHead: git(repo, 'symbolic-ref', 'HEAD'),
    branches: git(
      repo,
      'for-each-ref',
      '--format=%(refname) %(objectname)',
      'refs/heads',
      'refs/tags',
    ),
    status: git(repo, 'status', '--porcelain=v1', '--untracked-files=all', '--ignored'),
    index: hashTree(join(repo, '.git'), [
      'objects',
      'refs',
      'worktrees',
      'logs',
      'config',
      'hooks',
      'info',
      'HEAD',
      'description',
      'packed-refs',
      'COMMIT_EDITMSG',
      'ORIG_HEAD',
    ]),
    config: readFileSync(join(repo, '.git', 'config'), 'utf8'),
    hooks: hashTree(join(repo, '.git', 'hooks')),
    info: hashTree(join(repo, '.git', 'info')),
    workingTree: hashTree(repo, ['.git']),
  };
}

describe('createSandbox (git repo)', () => {
  it('makes a detached worktree at the revision, outside the user repo, with the base pinned under refs/agents', async () => {
    const base = git(repo, 'rev-parse', 'HEAD').trim();
    const sandbox = await make({ id: 'run-1' });
    expect(sandbox.kind).toBe('worktree');
    expect(sandbox.base).toBe(base);
    expect(sandbox.head).toBe(base);
    expect(sandbox.root.startsWith(baseDir)).toBe(true);
    expect(readFileSync(join(sandbox.root, 'src/main.py'), 'utf8')).toBe('print("hi")\n');
    expect(statSync(join(sandbox.root, '.git')).isFile()).toBe(true);
    expect(git(sandbox.root, 'rev-parse', 'HEAD').trim()).toBe(base);
    expect(git(repo, 'for-each-ref', '--format=%(refname)', 'refs/agents/run-1/').trim()).toBe(
      `refs/agents/run-1/${base}`,
    );
    expect(sandbox.paths.root).toBe(sandbox.root);
    expect(sandbox.paths.aliases).toContain(repo);
  });

  it('checks out an older revision when asked', async () => {
    const first = git(repo, 'rev-parse', 'HEAD').trim();
    writeFiles(repo, { 'later.txt': 'later\n' });
    git(repo, 'add', 'later.txt');
    git(repo, 'commit', '-q', '-m', 'later');
    const sandbox = await make({ revision: first });
    expect(sandbox.base).toBe(first);
    expect(existsSync(join(sandbox.root, 'later.txt'))).toBe(false);
  });

  it('snapshots exactly what changed, returns the previous head when nothing did, and diffs between snapshots', async () => {
    const sandbox = await make();
    const same = await sandbox.snapshot('no-op');
    expect(same).toEqual({ sha: sandbox.base, parent: sandbox.base, changed: [] });

    writeFiles(sandbox.root, {
      'notes/new.md': 'new\n',
      'README.md': '# changed\n',
      'debug.log': 'ignored\n',
    });
    unlinkSync(join(sandbox.root, 'src/util.py'));
    const first = await sandbox.snapshot('call-1');
    expect(first.parent).toBe(sandbox.base);
    expect(first.sha).not.toBe(sandbox.base);
    expect(sandbox.head).toBe(first.sha);
    expect(first.changed).toEqual([
      { status: 'M', path: 'README.md' },
      { status: 'A', path: 'notes/new.md' },
      { status: 'D', path: 'src/util.py' },
    ]);
    expect(git(repo, 'show', `${first.sha}:README.md`)).toBe('# changed\n');
    expect(git(repo, 'log', '-1', '--format=%an <%ae>|%s', first.sha).trim()).toBe(
      'agents-sandbox <agents-sandbox@localhost>|call-1',
    );

    writeFiles(sandbox.root, { 'src/main.py': 'print("bye")\n' });
    const second = await sandbox.snapshot('call-2');
    expect(second.parent).toBe(first.sha);
    expect(second.changed).toEqual([{ status: 'M', path: 'src/main.py' }]);
    expect(await sandbox.diff(sandbox.base, second.sha)).toEqual([
      { status: 'M', path: 'README.md' },
      { status: 'A', path: 'notes/new.md' },
      { status: 'M', path: 'src/main.py' },
      { status: 'D', path: 'src/util.py' },
    ]);
    expect(
      git(repo, 'for-each-ref', '--format=%(refname)', 'refs/agents/').trim().split('\n').sort(),
    ).toEqual(
      [sandbox.base, first.sha, second.sha].map((sha) => `refs/agents/${sandbox.id}/${sha}`).sort(),
    );
  });

  it('serializes concurrent snapshots so each one has the previous as parent', async () => {
    const sandbox = await make();
    writeFiles(sandbox.root, { 'a.txt': 'a\n' });
    const [one, two] = await Promise.all([
      sandbox.snapshot('one'),
      (async () => {
        return sandbox.snapshot('two');
      })(),
    ]);
    expect(one.parent).toBe(sandbox.base);
    expect(two.parent).toBe(one.sha);
    expect(two.sha).toBe(one.sha);
  });

  it('restores a snapshot exactly, keeps ignored files, takes a safety snapshot that undoes the restore', async () => {
    const sandbox = await make();
    writeFiles(sandbox.root, { 'a.txt': 'a1\n', 'README.md': '# one\n' });
    const s1 = await sandbox.snapshot('s1');
    writeFiles(sandbox.root, { 'a.txt': 'a2\n', 'b/c.txt': 'c\n', 'build.log': 'keep me\n' });
    unlinkSync(join(sandbox.root, 'src/main.py'));
    const s2 = await sandbox.snapshot('s2');
    // Made after the last snapshot: the safety snapshot captures it, so the restore removes it
    // and the undo brings it back.
    writeFiles(sandbox.root, { 'late.txt': 'late\n' });

    const { safety, changed } = await sandbox.restore(s1.sha);
    expect(safety.parent).toBe(s2.sha);
    expect(safety.changed).toEqual([{ status: 'A', path: 'late.txt' }]);
    expect(changed).toEqual([
      { status: 'M', path: 'a.txt' },
      { status: 'D', path: 'b/c.txt' },
      { status: 'D', path: 'late.txt' },
      { status: 'A', path: 'src/main.py' },
    ]);
    expect(sandbox.head).toBe(s1.sha);
    expect(readFileSync(join(sandbox.root, 'a.txt'), 'utf8')).toBe('a1\n');
    expect(readFileSync(join(sandbox.root, 'src/main.py'), 'utf8')).toBe('print("hi")\n');
    expect(existsSync(join(sandbox.root, 'b'))).toBe(false);
    expect(existsSync(join(sandbox.root, 'late.txt'))).toBe(false);
    expect(readFileSync(join(sandbox.root, 'build.log'), 'utf8')).toBe('keep me\n');
    // The tree on disk is exactly s1's tree: a fresh snapshot finds nothing new.
    expect((await sandbox.snapshot('after-restore')).sha).toBe(s1.sha);

    const undo = await sandbox.restore(safety.sha);
    expect(undo.safety.sha).toBe(s1.sha);
    expect(readFileSync(join(sandbox.root, 'a.txt'), 'utf8')).toBe('a2\n');
    expect(readFileSync(join(sandbox.root, 'late.txt'), 'utf8')).toBe('late\n');
    expect(existsSync(join(sandbox.root, 'src/main.py'))).toBe(false);
    expect(sandbox.head).toBe(safety.sha);
  });

  it('refuses to restore an unknown snapshot with CHECKPOINT_NOT_FOUND', async () => {
    const sandbox = await make();
    await expect(sandbox.restore('0123456789abcdef0123456789abcdef01234567')).rejects.toMatchObject(
      {
        code: 'CHECKPOINT_NOT_FOUND',
      },
    );
    await expect(sandbox.restore('--hard')).rejects.toMatchObject({ code: 'CHECKPOINT_NOT_FOUND' });
  });

  it("never touches the user's branches, HEAD, index, status, config, hooks or working tree", async () => {
    // A dirty user repo: a staged change, an unstaged change and an untracked file.
    writeFiles(repo, { 'src/main.py': 'print("staged")\n' });
    git(repo, 'add', 'src/main.py');
    writeFiles(repo, { 'README.md': '# unstaged\n', 'scratch.txt': 'untracked\n' });
    const before = userRepoState();
    const dotGitBefore = hashTree(join(repo, '.git'), ['objects']);

    const sandbox = await make();
    writeFiles(sandbox.root, { 'a.txt': 'a\n', 'src/main.py': 'print("sandbox")\n' });
    const snap = await sandbox.snapshot('write');
    await sandbox.restore(sandbox.base);
    await sandbox.restore(snap.sha);
    expect(userRepoState()).toEqual(before);

    await sandbox.close();
    expect(userRepoState()).toEqual(before);
    expect(hashTree(join(repo, '.git'), ['objects'])).toBe(dotGitBefore);
  });

  it('close removes the refs and the worktree, is idempotent, and later calls fail with CLOSED', async () => {
    const sandbox = await make({ id: 'closing' });
    writeFiles(sandbox.root, { 'a.txt': 'a\n' });
    await sandbox.snapshot('one');
    await Promise.all([sandbox.close(), sandbox.close()]);
    await sandbox.close();
    expect(existsSync(sandbox.root)).toBe(false);
    expect(existsSync(sandbox.runDir)).toBe(false);
    expect(git(repo, 'for-each-ref', 'refs/agents/').trim()).toBe('');
    expect(git(repo, 'worktree', 'list', '--porcelain')).not.toContain(sandbox.root);
    expect(existsSync(join(repo, '.git', 'worktrees'))).toBe(false);
    expect(() => sandbox.snapshot('late')).toThrow(AgentsError);
    await expect(sandbox.diff(sandbox.base, sandbox.base)).rejects.toMatchObject({
      code: 'CLOSED',
    });
  });

  it('keeps sandboxes apart: two runs on one repo have their own refs and trees', async () => {
    const one = await make({ id: 'run-1' });
    const ten = await make({ id: 'run-10' });
    writeFiles(one.root, { 'one.txt': '1\n' });
    writeFiles(ten.root, { 'ten.txt': '10\n' });
    const a = await one.snapshot('a');
    const b = await ten.snapshot('b');
    expect(a.changed).toEqual([{ status: 'A', path: 'one.txt' }]);
    expect(b.changed).toEqual([{ status: 'A', path: 'ten.txt' }]);
    await one.close();
    expect(
      git(repo, 'for-each-ref', '--format=%(refname)', 'refs/agents/').trim().split('\n').sort(),
    ).toEqual([`refs/agents/run-10/${ten.base}`, `refs/agents/run-10/${b.sha}`].sort());
  });

  it('fails with SANDBOX_FAILED for a missing source or revision and leaves nothing behind', async () => {
    await expect(
      createSandbox({ source: join(scratch, 'missing'), baseDir }),
    ).rejects.toMatchObject({ code: 'SANDBOX_FAILED' });
    await expect(
      createSandbox({ source: repo, baseDir, revision: 'no-such-branch' }),
    ).rejects.toMatchObject({
      code: 'SANDBOX_FAILED',
    });
    await expect(createSandbox({ source: repo, baseDir, id: '../evil' })).rejects.toMatchObject({
      code: 'SANDBOX_FAILED',
    });
    expect(git(repo, 'worktree', 'list').trim().split('\n')).toHaveLength(1);
    expect(hashTree(baseDir)).toBe(hashTree(mkdtempSync(join(scratch, 'empty-'))));
  });

  it('honours an already aborted signal', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(
      createSandbox({ source: repo, baseDir, signal: controller.signal }),
    ).rejects.toThrow();
    const sandbox = await make();
    await expect(sandbox.snapshot('x', { signal: controller.signal })).rejects.toThrow();
  });
});

describe('createSandbox (plain folder)', () => {
  it('copies the folder into a private repo; the user folder gets no .git and never changes', async () => {
    const folder = join(scratch, 'folder');
    writeFiles(folder, { 'a.txt': 'a\n', 'sub/b.txt': 'b\n' });
    const before = hashTree(folder);
    const sandbox = await createSandbox({ source: folder, baseDir, id: 'plain' });
    open.push(sandbox);
    expect(sandbox.kind).toBe('folder');
    expect(readFileSync(join(sandbox.root, 'sub/b.txt'), 'utf8')).toBe('b\n');

    writeFiles(sandbox.root, { 'a.txt': 'changed\n', 'c.txt': 'c\n' });
    const snap = await sandbox.snapshot('one');
    expect(snap.changed).toEqual([
      { status: 'M', path: 'a.txt' },
      { status: 'A', path: 'c.txt' },
    ]);
    await sandbox.restore(sandbox.base);
    expect(readFileSync(join(sandbox.root, 'a.txt'), 'utf8')).toBe('a\n');
    expect(existsSync(join(sandbox.root, 'c.txt'))).toBe(false);
    expect(hashTree(folder)).toBe(before);
    expect(existsSync(join(folder, '.git'))).toBe(false);
    await sandbox.close();
    expect(existsSync(sandbox.root)).toBe(false);
    expect(hashTree(folder)).toBe(before);
  });
});

describe('pruneSandboxes', () => {
  it('removes idle sandboxes and orphaned refs, keeps recent and kept ones', async () => {
    const idle = await createSandbox({ source: repo, baseDir, id: 'idle' });
    const kept = await createSandbox({ source: repo, baseDir, id: 'kept' });
    const folder = join(scratch, 'folder');
    writeFiles(folder, { 'a.txt': 'a\n' });
    const plain = await createSandbox({ source: folder, baseDir, id: 'plain' });
    open.push(kept);
    // An orphan: refs whose worktree vanished without close().
    git(repo, 'update-ref', `refs/agents/ghost/${idle.base}`, idle.base);

    const none = await pruneSandboxes({ source: repo, baseDir, olderThanMs: 60_000 });
    expect(none.removed).toEqual([]);

    const later = Date.now() + 3_600_000;
    const { removed } = await pruneSandboxes({
      source: repo,
      baseDir,
      olderThanMs: 60_000,
      now: later,
      keep: ['kept'],
    });
    expect(removed.sort()).toEqual(['ghost', 'idle', 'plain']);
    expect(existsSync(idle.root)).toBe(false);
    expect(existsSync(plain.root)).toBe(false);
    expect(existsSync(kept.root)).toBe(true);
    expect(git(repo, 'for-each-ref', '--format=%(refname)', 'refs/agents/').trim()).toBe(
      `refs/agents/kept/${kept.base}`,
    );
    await idle.close();
    await plain.close();
  });

  it("drops only our vanished sandboxes' worktree records, never the user's own", async () => {
    // The user's worktree on a disk that is unmounted for now: its record is "prunable".
    const userTree = join(scratch, 'user-tree');
    git(repo, 'worktree', 'add', '-q', '--detach', userTree);
    const away = join(scratch, 'user-tree-away');
    renameSync(userTree, away);
    // One of our sandboxes whose folder vanished without close() (tmp cleaned on reboot).
    const lost = await createSandbox({ source: repo, baseDir, id: 'lost' });
    rmSync(dirname(lost.root), { recursive: true, force: true });
    const records = () =>
      git(repo, 'worktree', 'list', '--porcelain')
        .split('\n')
        .filter((line) => line.startsWith('worktree '))
        .map((line) => line.slice('worktree '.length));
    expect(records()).toEqual(expect.arrayContaining([userTree, lost.root]));

    await pruneSandboxes({ source: repo, baseDir, olderThanMs: 0, now: Date.now() + 60_000 });
    expect(records()).toContain(userTree);
    expect(records()).not.toContain(lost.root);

    // Closing a sandbox removes its own record only, too.
    const done = await createSandbox({ source: repo, baseDir, id: 'done' });
    await done.close();
    expect(records()).toContain(userTree);
    expect(records()).not.toContain(done.root);
    // The user's worktree comes back once the disk is there again.
    renameSync(away, userTree);
    expect(git(userTree, 'status', '--porcelain')).toBe('');
  });
});
