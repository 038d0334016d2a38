import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createFileSpill } from '../../src/policy/output-budget.js';
import { createSandbox, type LocalSandbox } from '../../src/sandbox/git/local-sandbox.js';
import { openSandbox } from '../../src/sandbox/git/open-sandbox.js';
import { git, makeRepo, repoFingerprint, storeGit, writeFiles } from './helpers.js';

let scratch: string;
let repo: string;
let baseDir: string;
const open: LocalSandbox[] = [];

beforeEach(() => {
  scratch = mkdtempSync(join(tmpdir(), 'sandbox-safety-'));
  repo = join(scratch, 'repo');
  baseDir = join(scratch, 'sandboxes');
  mkdirSync(repo);
  mkdirSync(baseDir);
  makeRepo(repo, {
    'README.md': '# demo\n',
    'src/main.py': 'print("hi")\n',
    '.gitignore': '*.log\nnode_modules/\n',
  });
});

afterEach(async () => {
  for (const sandbox of open.splice(0)) await sandbox.close().catch(() => undefined);
  rmSync(scratch, { recursive: true, force: true });
});

async function make(
  options: Partial<Parameters<typeof createSandbox>[0]> = {},
): Promise<LocalSandbox> {
  const sandbox = await createSandbox({ source: repo, baseDir, ...options });
  open.push(sandbox);
  return sandbox;
}

/** Files under a tree at a snapshot, from the sandbox's own store. */
function treeFiles(sha: string, sandbox: LocalSandbox): string[] {
  return storeGit(sandbox, 'ls-tree', '-r', '--name-only', sha).trim().split('\n');
}

describe('private excludes', () => {
  it('keeps the output spill folder and caller excludes out of every change record; normal files are in', async () => {
    const infoExcludeBefore = readFileSync(join(repo, '.git', 'info', 'exclude'), 'utf8');
    const sandbox = await make({ exclude: ['scratch-cache/'] });
    const spill = createFileSpill(sandbox.root);
    const spilled = await spill('a very long tool output', {
      toolId: 'mcp:fs/read',
      toolCallId: 'call-1',
      kind: 'text',
      extension: 'txt',
    });
    expect(spilled.startsWith('.agents-output/')).toBe(true);
    writeFiles(sandbox.root, { 'notes.md': 'work\n', 'scratch-cache/x.bin': 'cache\n' });

    const first = await sandbox.snapshot('write 1');
    expect(first.changed).toEqual([{ status: 'A', path: 'notes.md' }]);
    // A second spill and a second write: still only the write shows up.
    await spill('more', {
      toolId: 'mcp:fs/read',
      toolCallId: 'call-2',
      kind: 'text',
      extension: 'txt',
    });
    writeFiles(sandbox.root, { 'notes.md': 'more work\n' });
    const second = await sandbox.snapshot('write 2');
    expect(second.changed).toEqual([{ status: 'M', path: 'notes.md' }]);
    expect(treeFiles(second.sha, sandbox).some((path) => path.startsWith('.agents-output'))).toBe(
      false,
    );
    expect(treeFiles(second.sha, sandbox).some((path) => path.startsWith('scratch-cache'))).toBe(
      false,
    );

    // Excluded files are never removed by a restore either.
    await sandbox.restore(sandbox.base);
    expect(existsSync(join(sandbox.root, 'notes.md'))).toBe(false);
    expect(readdirSync(join(sandbox.root, '.agents-output'))).toHaveLength(2);
    expect(existsSync(join(sandbox.root, 'scratch-cache/x.bin'))).toBe(true);

    // The exclude file is private to the run dir; the user's info/exclude is untouched.
    expect(sandbox.excludeFile.startsWith(sandbox.runDir)).toBe(true);
    expect(readFileSync(sandbox.excludeFile, 'utf8')).toContain('.agents-output/');
    expect(readFileSync(join(repo, '.git', 'info', 'exclude'), 'utf8')).toBe(infoExcludeBefore);
  });

  it('applies to plain-folder sandboxes from the first (base) snapshot, and survives a reopen', async () => {
    const folder = join(scratch, 'folder');
    writeFiles(folder, { 'a.txt': 'a\n', '.agents-output/old.txt': 'old spill\n' });
    const dir = join(scratch, 'kept');
    const sandbox = await openSandbox({ source: folder, dir, id: 'plain' });
    expect(treeFiles(sandbox.base, sandbox)).toEqual(['a.txt']);
    await sandbox.close({ remove: false });

    const again = await openSandbox({ dir });
    open.push(again);
    writeFiles(again.root, { '.agents-output/new.txt': 'spill\n', 'b.txt': 'b\n' });
    expect((await again.snapshot('w')).changed).toEqual([{ status: 'A', path: 'b.txt' }]);
  });

  it('refuses exclude patterns with line breaks', async () => {
    await expect(make({ exclude: ['ok/', 'bad\n!keep'] })).rejects.toMatchObject({
      code: 'CONFIG_INVALID',
    });
    expect(readdirSync(baseDir)).toEqual([]);
  });
});

describe('restore and ignored files', () => {
  it('neither captures nor deletes an ignored file created after a checkpoint', async () => {
    const sandbox = await make();
    writeFiles(sandbox.root, { 'a.txt': 'one\n' });
    const checkpoint = await sandbox.snapshot('checkpoint');
    writeFiles(sandbox.root, {
      'build.log': 'precious log\n',
      'node_modules/pkg/index.js': 'module.exports = 1;\n',
      'b.txt': 'two\n',
    });

    const { safety, changed } = await sandbox.restore(checkpoint.sha);
    expect(safety.changed).toEqual([{ status: 'A', path: 'b.txt' }]);
    expect(changed).toEqual([{ status: 'D', path: 'b.txt' }]);
    expect(treeFiles(safety.sha, sandbox)).not.toContain('build.log');
    expect(existsSync(join(sandbox.root, 'b.txt'))).toBe(false);
    expect(readFileSync(join(sandbox.root, 'build.log'), 'utf8')).toBe('precious log\n');
    expect(existsSync(join(sandbox.root, 'node_modules/pkg/index.js'))).toBe(true);

    // And undoing the restore leaves them alone too.
    await sandbox.restore(safety.sha);
    expect(readFileSync(join(sandbox.root, 'b.txt'), 'utf8')).toBe('two\n');
    expect(readFileSync(join(sandbox.root, 'build.log'), 'utf8')).toBe('precious log\n');
  });
});

describe("a tool's git commands stay in the sandbox (issue: sandbox isolation)", () => {
  it('commit, branch -D, tag -f, stash, reset and gc in the tree change only the sandbox; snapshots keep working', async () => {
    git(repo, 'branch', 'feature');
    git(repo, 'tag', 'v1');
    writeFiles(repo, { 'README.md': '# stashed work\n' });
    git(repo, 'stash');
    writeFiles(repo, { 'README.md': '# uncommitted\n' });
    const before = repoFingerprint(repo);
    // From the commit: the tool's `reset --hard` would otherwise undo the uncommitted README
    // the sandbox starts with (a change of its own, not the point here).
    const sandbox = await make({ from: 'head' });
    const tool = (...args: string[]) => git(sandbox.root, ...args);

    writeFiles(sandbox.root, { 'a.txt': 'a\n' });
    tool('add', 'a.txt');
    tool('commit', '-q', '-m', 'tool commit');
    tool('branch', '-D', 'feature');
    tool('tag', '-f', 'v1', 'HEAD');
    writeFiles(sandbox.root, { 'README.md': '# tool stash\n' });
    tool('stash');
    tool('stash', 'drop');
    tool('reset', '-q', '--hard', 'HEAD~1');
    tool('gc', '-q', '--prune=now');
    writeFiles(sandbox.root, { 'b.txt': 'b\n' });

    const first = await sandbox.snapshot('after git');
    expect(first.changed).toEqual([{ status: 'A', path: 'b.txt' }]);
    expect(first.warnings).toBeUndefined();
    tool('checkout', '-q', '-b', 'tool-branch');
    writeFiles(sandbox.root, { 'c.txt': 'c\n' });
    tool('add', '-A');
    tool('commit', '-q', '-m', 'again');
    const second = await sandbox.snapshot('after commit');
    expect(second.changed).toEqual([{ status: 'A', path: 'c.txt' }]);
    await sandbox.restore(sandbox.base);
    expect(existsSync(join(sandbox.root, 'b.txt'))).toBe(false);
    expect(repoFingerprint(repo)).toEqual(before);
    await sandbox.close();
    expect(repoFingerprint(repo)).toEqual(before);
  });

  it("keeps snapshotting when a tool removes or replaces the tree's .git, and never captures it", async () => {
    const sandbox = await make();
    rmSync(join(sandbox.root, '.git'), { recursive: true, force: true });
    writeFiles(sandbox.root, { 'a.txt': 'a\n' });
    expect((await sandbox.snapshot('no .git')).changed).toEqual([{ status: 'A', path: 'a.txt' }]);
    git(sandbox.root, 'init', '-q');
    writeFiles(sandbox.root, { '.git/config': '[core]\n\tfsmonitor = /bin/false\n' });
    writeFiles(sandbox.root, { 'b.txt': 'b\n' });
    const snap = await sandbox.snapshot('fresh .git');
    expect(snap.changed).toEqual([{ status: 'A', path: 'b.txt' }]);
    expect(treeFiles(snap.sha, sandbox).some((path) => path.split('/')[0] === '.git')).toBe(false);
  });

  it("keeps the user's own git config, remote and hook edits made while the sandbox is open", async () => {
    const sandbox = await make();
    git(repo, 'config', 'user.name', 'Someone Else');
    git(repo, 'remote', 'add', 'origin', 'https://example.com/repo.git');
    const hook = join(repo, '.git', 'hooks', 'pre-commit');
    writeFileSync(hook, '#!/bin/sh\nexit 0\n');
    chmodSync(hook, 0o755);
    const edited = repoFingerprint(repo);
    writeFiles(sandbox.root, { 'a.txt': 'a\n' });
    await sandbox.snapshot('one');
    await sandbox.restore(sandbox.base);
    await sandbox.close();
    expect(repoFingerprint(repo)).toEqual(edited);
    expect(readFileSync(hook, 'utf8')).toContain('exit 0');
  });

  it("does not depend on the user's objects: history rewritten and pruned in the user repo, snapshots still restore", async () => {
    const sandbox = await make();
    writeFiles(sandbox.root, { 'a.txt': 'a\n' });
    const snap = await sandbox.snapshot('one');
    // The user replaces their only commit and prunes everything unreachable.
    git(repo, 'checkout', '-q', '--orphan', 'fresh');
    git(repo, 'rm', '-q', '-r', '--cached', '.');
    writeFiles(repo, { 'other.txt': 'other\n' });
    git(repo, 'add', 'other.txt');
    git(repo, 'commit', '-q', '-m', 'fresh start');
    git(repo, 'branch', '-D', 'main');
    git(repo, 'reflog', 'expire', '--expire=now', '--all');
    git(repo, 'gc', '-q', '--prune=now');
    await sandbox.restore(sandbox.base);
    expect(readFileSync(join(sandbox.root, 'src/main.py'), 'utf8')).toBe('print("hi")\n');
    await sandbox.restore(snap.sha);
    expect(readFileSync(join(sandbox.root, 'a.txt'), 'utf8')).toBe('a\n');
    expect(storeGit(sandbox, 'fsck', '--no-dangling', '--connectivity-only')).toBe('');
  });

  it('records exact bytes whatever .gitattributes says (no end-of-line conversion or filter)', async () => {
    const sandbox = await make();
    writeFiles(sandbox.root, {
      '.gitattributes': '* text eol=crlf\n*.bin filter=evil\n',
      'crlf.txt': 'one\r\ntwo\r\n',
      'lf.txt': 'one\ntwo\n',
      'x.bin': 'raw\n',
    });
    const snap = await sandbox.snapshot('bytes');
    expect(storeGit(sandbox, 'cat-file', 'blob', `${snap.sha}:crlf.txt`)).toBe('one\r\ntwo\r\n');
    expect(storeGit(sandbox, 'cat-file', 'blob', `${snap.sha}:lf.txt`)).toBe('one\ntwo\n');
    await sandbox.restore(sandbox.base);
    await sandbox.restore(snap.sha);
    expect(readFileSync(join(sandbox.root, 'lf.txt'), 'utf8')).toBe('one\ntwo\n');
    expect(readFileSync(join(sandbox.root, 'crlf.txt'), 'utf8')).toBe('one\r\ntwo\r\n');
  });

  it('leaves out names git treats as .git on some platform, with a warning, and records everything else', async () => {
    const sandbox = await make();
    writeFiles(sandbox.root, {
      '.git.': 'dot\n',
      '.git ': 'space\n',
      'GIT~1': 'short name\n',
      'sub/.GIT ': 'nested odd\n',
      'fine.txt': 'fine\n',
    });
    const snap = await sandbox.snapshot('odd names');
    expect(snap.changed).toEqual([{ status: 'A', path: 'fine.txt' }]);
    expect(snap.warnings?.join('\n')).toContain('".git "');
    expect(snap.warnings?.join('\n')).toContain('"GIT~1"');
    // Later snapshots keep working and keep the files out; a restore leaves them alone.
    writeFiles(sandbox.root, { 'more.txt': 'more\n' });
    expect((await sandbox.snapshot('later')).changed).toEqual([{ status: 'A', path: 'more.txt' }]);
    await sandbox.restore(sandbox.base);
    expect(readFileSync(join(sandbox.root, '.git '), 'utf8')).toBe('space\n');
    for (const name of ['.git.', '.git ', 'GIT~1', 'sub/.GIT ']) rmSync(join(sandbox.root, name));
    writeFiles(sandbox.root, { 'last.txt': 'last\n' });
    const last = await sandbox.snapshot('gone');
    expect(last.changed).toEqual([{ status: 'A', path: 'last.txt' }]);
    expect(last.warnings).toBeUndefined();
  });

  it('keeps snapshotting after `git init nested` (no commit yet), with a warning, then records it as a gitlink', async () => {
    const sandbox = await make();
    git(sandbox.root, 'init', '-q', 'nested');
    writeFiles(sandbox.root, { 'nested/n.txt': 'n\n', 'a.txt': 'a\n' });
    const snap = await sandbox.snapshot('nested');
    expect(snap.changed).toEqual([{ status: 'A', path: 'a.txt' }]);
    expect(snap.warnings?.join('\n')).toContain(
      '"nested" is a nested git repository with no commit',
    );
    rmSync(join(sandbox.root, 'nested'), { recursive: true });
    const lib = join(sandbox.root, 'lib');
    mkdirSync(lib);
    makeRepo(lib, { 'lib.c': 'int x;\n' });
    const linked = await sandbox.snapshot('with commit');
    expect(linked.changed).toEqual([{ status: 'A', path: 'lib' }]);
    await sandbox.restore(sandbox.base);
    expect(existsSync(join(sandbox.root, 'a.txt'))).toBe(false);
  });
});

describe('nested repositories', () => {
  it('reports nested repos and stray .git entries as warnings, skips ignored folders, renames nothing', async () => {
    const sandbox = await make();
    expect(sandbox.nestedRepos()).toEqual([]);
    const lib = join(sandbox.root, 'vendor', 'lib');
    mkdirSync(lib, { recursive: true });
    makeRepo(lib, { 'lib.c': 'int x;\n' });
    writeFiles(sandbox.root, {
      'odd/.git': 'gitdir: /nowhere\n',
      'odd/x.txt': 'x\n',
      'node_modules/pkg/index.js': '1\n',
    });
    mkdirSync(join(sandbox.root, 'node_modules', 'pkg', '.git'));

    const snap = await sandbox.snapshot('write');
    expect(snap.changed).toEqual([
      { status: 'A', path: 'odd/x.txt' },
      { status: 'A', path: 'vendor/lib' },
    ]);
    expect(sandbox.nestedRepos()).toEqual([
      { path: 'odd', kind: 'git-file' },
      { path: 'vendor/lib', kind: 'repository' },
    ]);
    expect(snap.warnings).toHaveLength(2);
    expect(snap.warnings?.[0]).toContain('"odd/.git"');
    expect(snap.warnings?.[1]).toContain('"vendor/lib" is a nested git repository');
    // Nothing was renamed or moved.
    expect(statSync(join(lib, '.git')).isDirectory()).toBe(true);
    expect(readFileSync(join(sandbox.root, 'odd/.git'), 'utf8')).toBe('gitdir: /nowhere\n');
    expect(statSync(join(sandbox.root, 'node_modules/pkg/.git')).isDirectory()).toBe(true);
    // A no-op snapshot still carries the warnings; removing the stray drops its warning.
    expect((await sandbox.snapshot('noop')).warnings).toHaveLength(2);
    rmSync(join(sandbox.root, 'odd/.git'));
    writeFiles(sandbox.root, { 'odd/y.txt': 'y\n' });
    expect((await sandbox.snapshot('later')).warnings).toEqual([snap.warnings?.[1]]);
    // Restoring the base (no nested repos) rescans.
    await sandbox.restore(sandbox.base);
    expect(sandbox.nestedRepos()).toEqual([]);
  });

  it('finds a submodule gitlink already in the base commit once, at creation', async () => {
    const sha = git(repo, 'rev-parse', 'HEAD').trim();
    git(repo, 'update-index', '--add', '--cacheinfo', `160000,${sha},deps/sub`);
    git(repo, 'commit', '-q', '-m', 'add gitlink');
    // An uninitialised submodule is an empty folder in the working tree.
    mkdirSync(join(repo, 'deps/sub'), { recursive: true });
    const sandbox = await make();
    expect(sandbox.nestedRepos()).toEqual([{ path: 'deps/sub', kind: 'repository' }]);
    writeFiles(sandbox.root, { 'c.txt': 'c\n' });
    expect((await sandbox.snapshot('w')).warnings?.[0]).toContain('"deps/sub"');
  });
});
