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
import { AgentsError } from '../../src/errors.js';
import { createFileSpill } from '../../src/policy/output-budget.js';
import { createSandbox, type LocalSandbox } from '../../src/sandbox/local-sandbox.js';
import { openSandbox } from '../../src/sandbox/local-sandbox.js';
import { git, hashTree, makeRepo, writeFiles } from './helpers.js';

let scratch: string;
let repo: string;
let baseDir: string;
const open: LocalSandbox[] = [];
const quarantines: string[] = [];

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
  for (const dir of quarantines.splice(0)) rmSync(dir, { recursive: true, force: true });
  rmSync(scratch, { recursive: true, force: true });
});

async function make(
  options: Partial<Parameters<typeof createSandbox>[0]> = {},
): Promise<LocalSandbox> {
  const sandbox = await createSandbox({ source: repo, baseDir, ...options });
  open.push(sandbox);
  return sandbox;
}

/** Files under a tree at a snapshot, from git itself. */
function treeFiles(sha: string, cwd = repo): string[] {
  return git(cwd, 'ls-tree', '-r', '--name-only', sha).trim().split('\n');
}

/** Runs `work`, expects it to reject with an AgentsError, and returns that error. */
async function rejection(work: Promise<unknown>): Promise<AgentsError> {
  const error: unknown = await work.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!AgentsError.isInstance(error))
    throw new Error(`expected an AgentsError, got ${String(error)}`);
  const quarantine = error.details['quarantine'];
  if (typeof quarantine === 'string') quarantines.push(quarantine);
  return error;
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
    expect(treeFiles(second.sha).some((path) => path.startsWith('.agents-output'))).toBe(false);
    expect(treeFiles(second.sha).some((path) => path.startsWith('scratch-cache'))).toBe(false);

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
    expect(treeFiles(sandbox.base, sandbox.root)).toEqual(['a.txt']);
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
    expect(treeFiles(safety.sha)).not.toContain('build.log');
    expect(existsSync(join(sandbox.root, 'b.txt'))).toBe(false);
    expect(readFileSync(join(sandbox.root, 'build.log'), 'utf8')).toBe('precious log\n');
    expect(existsSync(join(sandbox.root, 'node_modules/pkg/index.js'))).toBe(true);

    // And undoing the restore leaves them alone too.
    await sandbox.restore(safety.sha);
    expect(readFileSync(join(sandbox.root, 'b.txt'), 'utf8')).toBe('two\n');
    expect(readFileSync(join(sandbox.root, 'build.log'), 'utf8')).toBe('precious log\n');
  });
});

describe("the user's .git is not changed by a run (T15)", () => {
  it('detects a hook planted in the shared hooks dir and a config change, reverts both, and saves what it found', async () => {
    const configBefore = readFileSync(join(repo, '.git', 'config'), 'utf8');
    const hooksBefore = hashTree(join(repo, '.git', 'hooks'));
    const sandbox = await make({ id: 'escape' });
    await expect(sandbox.verifyRepoIntegrity()).resolves.toBeUndefined();

    // A git-capable "tool" escaping through the worktree's shared common dir.
    const hook = join(repo, '.git', 'hooks', 'post-checkout');
    writeFileSync(hook, '#!/bin/sh\necho pwned > /tmp/pwned\n');
    chmodSync(hook, 0o755);
    writeFileSync(join(repo, '.git', 'config'), `${configBefore}[core]\n\thooksPath = /tmp/evil\n`);

    const error = await rejection(sandbox.verifyRepoIntegrity());
    expect(error.code).toBe('SANDBOX_FAILED');
    expect(error.message).toContain('.git/hooks/post-checkout');
    expect(error.details['changes']).toEqual([
      { path: '.git/config', change: 'modified', reverted: true },
      { path: '.git/hooks/post-checkout', change: 'added', reverted: true },
    ]);
    expect(existsSync(hook)).toBe(false);
    expect(readFileSync(join(repo, '.git', 'config'), 'utf8')).toBe(configBefore);
    expect(hashTree(join(repo, '.git', 'hooks'))).toBe(hooksBefore);
    const quarantine = String(error.details['quarantine']);
    expect(readFileSync(join(quarantine, '.git', 'hooks', 'post-checkout'), 'utf8')).toContain(
      'pwned',
    );
    expect(readFileSync(join(quarantine, '.git', 'config'), 'utf8')).toContain('/tmp/evil');
    // Reverted: the next check is clean.
    await expect(sandbox.verifyRepoIntegrity()).resolves.toBeUndefined();
  });

  it("leaves git's own writes alone: a repack in the user's repo (info/refs) is no escape, info/attributes is", async () => {
    const sandbox = await make({ id: 'repack' });
    // What the background `gc --auto` after a big commit does: repack → update-server-info.
    git(repo, 'repack', '-q', '-a', '-d');
    expect(existsSync(join(repo, '.git', 'info', 'refs'))).toBe(true);
    await expect(sandbox.verifyRepoIntegrity()).resolves.toBeUndefined();
    await expect(sandbox.snapshot('after repack')).resolves.toMatchObject({ changed: [] });
    // A filter planted through info/attributes would run code in our add -A: still caught.
    writeFileSync(join(repo, '.git', 'info', 'attributes'), '* filter=evil\n');
    const error = await rejection(sandbox.verifyRepoIntegrity());
    expect(error.details['changes']).toEqual([
      { path: '.git/info/attributes', change: 'added', reverted: true },
    ]);
  });

  it('checks before every snapshot, so a planted fsmonitor never runs in our add -A', async () => {
    const marker = join(scratch, 'fsmonitor-ran');
    const script = join(scratch, 'fsmonitor.sh');
    writeFileSync(script, `#!/bin/sh\necho ran > '${marker}'\n`);
    chmodSync(script, 0o755);
    const sandbox = await make();
    const configBefore = readFileSync(join(repo, '.git', 'config'), 'utf8');
    writeFileSync(join(repo, '.git', 'config'), `${configBefore}[core]\n\tfsmonitor = ${script}\n`);
    writeFiles(sandbox.root, { 'a.txt': 'a\n' });

    const error = await rejection(sandbox.snapshot('after tool'));
    expect(error.code).toBe('SANDBOX_FAILED');
    expect(error.message).toContain('.git/config');
    expect(readFileSync(join(repo, '.git', 'config'), 'utf8')).toBe(configBefore);
    expect(existsSync(marker)).toBe(false);
    // The tool's writes are captured by the next snapshot.
    expect((await sandbox.snapshot('retry')).changed).toEqual([{ status: 'A', path: 'a.txt' }]);
    expect(existsSync(marker)).toBe(false);
  });

  it('reports a moved worktree HEAD without reverting it, and close() fails after removing the sandbox', async () => {
    const sandbox = await make({ id: 'headmove' });
    const adminDir = join(repo, '.git', 'worktrees', 'headmove');
    expect(statSync(adminDir).isDirectory()).toBe(true);
    writeFileSync(join(adminDir, 'HEAD'), 'ref: refs/heads/main\n');
    const hook = join(repo, '.git', 'hooks', 'pre-commit');
    writeFileSync(hook, '#!/bin/sh\nexit 0\n');

    const error = await rejection(sandbox.close());
    expect(error.code).toBe('SANDBOX_FAILED');
    expect(error.details['changes']).toEqual([
      { path: '.git/hooks/pre-commit', change: 'added', reverted: true },
      { path: '.git/worktrees/headmove/HEAD', change: 'modified', reverted: false },
    ]);
    expect(existsSync(hook)).toBe(false);
    expect(existsSync(sandbox.root)).toBe(false);
    expect(git(repo, 'for-each-ref', 'refs/agents/')).toBe('');
  });

  it("guards a plain-folder sandbox's private repo the same way", async () => {
    const folder = join(scratch, 'folder');
    writeFiles(folder, { 'a.txt': 'a\n' });
    const sandbox = await createSandbox({ source: folder, baseDir, id: 'plain' });
    open.push(sandbox);
    const marker = join(scratch, 'fsmonitor-ran');
    const script = join(scratch, 'fsmonitor.sh');
    writeFileSync(script, `#!/bin/sh\necho ran > '${marker}'\n`);
    chmodSync(script, 0o755);
    const config = join(sandbox.root, '.git', 'config');
    const before = readFileSync(config, 'utf8');
    writeFileSync(config, `${before}[core]\n\tfsmonitor = ${script}\n`);

    const error = await rejection(sandbox.snapshot('x'));
    expect(error.message).toContain('.git/config');
    expect(readFileSync(config, 'utf8')).toBe(before);
    expect(existsSync(marker)).toBe(false);
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
    const sandbox = await make();
    expect(sandbox.nestedRepos()).toEqual([{ path: 'deps/sub', kind: 'repository' }]);
    writeFiles(sandbox.root, { 'c.txt': 'c\n' });
    expect((await sandbox.snapshot('w')).warnings?.[0]).toContain('"deps/sub"');
  });
});
