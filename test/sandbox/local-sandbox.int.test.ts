import {
  existsSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  unlinkSync,
  mkdirSync,
  readdirSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AgentsError } from '../../src/errors.js';
import { createSandbox, type LocalSandbox } from '../../src/sandbox/git/local-sandbox.js';
import { pruneSandboxes } from '../../src/sandbox/prune-sandboxes.js';
import { git, hashTree, makeRepo, repoFingerprint, storeGit, writeFiles } from './helpers.js';

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

describe('createSandbox (git repo)', () => {
  it('makes a repository of its own at the revision, outside the user repo, with a private snapshot store', async () => {
    const commit = git(repo, 'rev-parse', 'HEAD').trim();
    git(repo, 'branch', 'feature');
    git(repo, 'tag', 'v1');
    const before = repoFingerprint(repo);
    const sandbox = await make({ id: 'run-1' });
    expect(sandbox.kind).toBe('repository');
    expect(sandbox.sourceCommit).toBe(commit);
    expect(sandbox.head).toBe(sandbox.base);
    expect(sandbox.root.startsWith(baseDir)).toBe(true);
    expect(readFileSync(join(sandbox.root, 'src/main.py'), 'utf8')).toBe('print("hi")\n');
    // The base snapshot is the user's tree, in the sandbox's own store (no history).
    expect(storeGit(sandbox, 'rev-parse', `${sandbox.base}^{tree}`)).toBe(
      git(repo, 'rev-parse', 'HEAD^{tree}'),
    );
    expect(storeGit(sandbox, 'rev-list', '--count', sandbox.base).trim()).toBe('1');
    // The tool repo: a real directory, the user's branch and tags, a clean status.
    expect(statSync(join(sandbox.root, '.git')).isDirectory()).toBe(true);
    expect(git(sandbox.root, 'rev-parse', 'HEAD').trim()).toBe(commit);
    expect(git(sandbox.root, 'branch', '--show-current').trim()).toBe('main');
    expect(git(sandbox.root, 'for-each-ref', '--format=%(refname)').trim().split('\n')).toEqual([
      'refs/heads/feature',
      'refs/heads/main',
      'refs/tags/v1',
    ]);
    expect(git(sandbox.root, 'status', '--porcelain')).toBe('');
    expect(git(sandbox.root, 'remote')).toBe('');
    expect(sandbox.paths.root).toBe(sandbox.root);
    expect(sandbox.paths.aliases).toContain(repo);
    expect(repoFingerprint(repo)).toEqual(before);
  });

  it('checks out an older revision when asked', async () => {
    const first = git(repo, 'rev-parse', 'HEAD').trim();
    writeFiles(repo, { 'later.txt': 'later\n' });
    git(repo, 'add', 'later.txt');
    git(repo, 'commit', '-q', '-m', 'later');
    const sandbox = await make({ revision: first });
    expect(sandbox.sourceCommit).toBe(first);
    expect(git(sandbox.root, 'rev-parse', 'HEAD').trim()).toBe(first);
    expect(existsSync(join(sandbox.root, 'later.txt'))).toBe(false);
  });

  it('snapshots exactly what changed, returns the previous head when nothing did, and diffs between snapshots', async () => {
    const sandbox = await make();
    const same = await sandbox.snapshot('no-op');
    // The first snapshot of a sandbox in a process scans the whole tree (nothing watched yet).
    expect(same).toEqual({
      sha: sandbox.base,
      parent: sandbox.base,
      changed: [],
      scan: 'full',
      scanReason: expect.any(String),
    });

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
    expect(storeGit(sandbox, 'show', `${first.sha}:README.md`)).toBe('# changed\n');
    expect(() => git(repo, 'cat-file', '-e', first.sha)).toThrow();
    expect(storeGit(sandbox, 'log', '-1', '--format=%an <%ae>|%s', first.sha).trim()).toBe(
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
      storeGit(sandbox, 'for-each-ref', '--format=%(refname)').trim().split('\n').sort(),
    ).toEqual([sandbox.base, first.sha, second.sha].map((sha) => `refs/snapshots/${sha}`).sort());
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
    const before = repoFingerprint(repo);

    const sandbox = await make();
    writeFiles(sandbox.root, { 'a.txt': 'a\n', 'src/main.py': 'print("sandbox")\n' });
    const snap = await sandbox.snapshot('write');
    await sandbox.restore(sandbox.base);
    await sandbox.restore(snap.sha);
    expect(repoFingerprint(repo)).toEqual(before);

    await sandbox.close();
    expect(repoFingerprint(repo)).toEqual(before);
  });

  it('close removes its folder and nothing else, is idempotent, and later calls fail with CLOSED', async () => {
    const before = repoFingerprint(repo);
    const sandbox = await make({ id: 'closing' });
    writeFiles(sandbox.root, { 'a.txt': 'a\n' });
    await sandbox.snapshot('one');
    await Promise.all([sandbox.close(), sandbox.close()]);
    await sandbox.close();
    expect(existsSync(sandbox.root)).toBe(false);
    expect(existsSync(sandbox.runDir)).toBe(false);
    expect(readdirSync(baseDir)).toEqual([]);
    expect(repoFingerprint(repo)).toEqual(before);
    expect(() => sandbox.snapshot('late')).toThrow(AgentsError);
    await expect(sandbox.diff(sandbox.base, sandbox.base)).rejects.toMatchObject({
      code: 'CLOSED',
    });
  });

  it('keeps sandboxes apart: two runs on one repo have their own stores and trees', async () => {
    const one = await make({ id: 'run-1' });
    const ten = await make({ id: 'run-10' });
    writeFiles(one.root, { 'one.txt': '1\n' });
    writeFiles(ten.root, { 'ten.txt': '10\n' });
    const a = await one.snapshot('a');
    const b = await ten.snapshot('b');
    expect(a.changed).toEqual([{ status: 'A', path: 'one.txt' }]);
    expect(b.changed).toEqual([{ status: 'A', path: 'ten.txt' }]);
    expect(() => storeGit(one, 'cat-file', '-e', b.sha)).toThrow();
    await one.close();
    expect(storeGit(ten, 'for-each-ref', '--format=%(refname)').trim().split('\n').sort()).toEqual(
      [`refs/snapshots/${ten.base}`, `refs/snapshots/${b.sha}`].sort(),
    );
  });

  it('fails with SANDBOX_FAILED for a missing source, REVISION_NOT_FOUND for a missing revision, and leaves nothing behind', async () => {
    await expect(
      createSandbox({ source: join(scratch, 'missing'), baseDir }),
    ).rejects.toMatchObject({ code: 'SANDBOX_FAILED' });
    await expect(
      createSandbox({ source: repo, baseDir, revision: 'no-such-branch' }),
    ).rejects.toMatchObject({
      code: 'REVISION_NOT_FOUND',
      details: { revision: 'no-such-branch' },
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
  it('copies the folder; the user folder gets no .git and never changes; the copy has a repository of its own', async () => {
    const folder = join(scratch, 'folder');
    writeFiles(folder, { 'a.txt': 'a\n', 'sub/b.txt': 'b\n' });
    const before = hashTree(folder);
    const sandbox = await createSandbox({ source: folder, baseDir, id: 'plain' });
    open.push(sandbox);
    expect(sandbox.kind).toBe('folder');
    expect(sandbox.sourceCommit).toBeUndefined();
    expect(readFileSync(join(sandbox.root, 'sub/b.txt'), 'utf8')).toBe('b\n');
    expect(git(sandbox.root, 'rev-parse', '--show-toplevel').trim()).toBe(sandbox.root);

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
  it('removes idle sandboxes from a base dir and from the project state folder, keeps recent and kept ones', async () => {
    const stateDir = join(scratch, 'state');
    const before = repoFingerprint(repo);
    const idle = await createSandbox({ source: repo, baseDir, id: 'idle' });
    const kept = await createSandbox({ source: repo, baseDir, id: 'kept' });
    const folder = join(scratch, 'folder');
    writeFiles(folder, { 'a.txt': 'a\n' });
    const plain = await createSandbox({ source: folder, baseDir, id: 'plain' });
    // Made in the default place: the project's folder in the per-user state folder.
    const stated = await createSandbox({ source: join(repo, 'src'), stateDir, id: 'stated' });
    expect(stated.root.startsWith(join(stateDir, 'projects'))).toBe(true);
    expect(stated.source).toBe(repo);
    // Closed but kept on disk: an open sandbox holds its run lock, and prune never takes one.
    await kept.close({ remove: false });
    await idle.close({ remove: false });
    await plain.close({ remove: false });
    await stated.close({ remove: false });

    const none = await pruneSandboxes({ source: repo, stateDir, baseDir, olderThanMs: 60_000 });
    expect(none.removed).toEqual([]);
    // A dry run names what a prune would remove and removes nothing.
    const held = await pruneSandboxes({
      source: repo,
      stateDir,
      baseDir,
      olderThanMs: 60_000,
      now: Date.now() + 3_600_000,
      dryRun: true,
    });
    expect(held.removed.sort()).toEqual(['idle', 'kept', 'plain', 'stated']);
    expect(existsSync(idle.root)).toBe(true);

    const { removed } = await pruneSandboxes({
      source: repo,
      stateDir,
      baseDir,
      olderThanMs: 60_000,
      now: Date.now() + 3_600_000,
      keep: ['kept'],
    });
    expect(removed.sort()).toEqual(['idle', 'plain', 'stated']);
    expect(existsSync(idle.root)).toBe(false);
    expect(existsSync(plain.root)).toBe(false);
    expect(existsSync(stated.root)).toBe(false);
    expect(existsSync(kept.root)).toBe(true);
    expect(repoFingerprint(repo)).toEqual(before);
  });
});
