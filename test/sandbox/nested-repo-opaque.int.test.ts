/**
 * Nested repositories are opaque to the host's git (issue 23): a snapshot records a nested repo
 * as a gitlink from its HEAD, and never runs git inside it, whatever its `.git/config` names
 * (fsmonitor, filter driver, hooks) or wherever its `.git` file points (the user's own repo).
 */
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { LocalSandbox } from '../../src/sandbox/git/local-sandbox.js';
import { openSandbox } from '../../src/sandbox/git/open-sandbox.js';
import { git, makeRepo, repoFingerprint, storeGit, writeFiles } from './helpers.js';

let scratch: string;
let repo: string;
let baseDir: string;
let marker: string;
const open: LocalSandbox[] = [];

/** A script that records that it ran (and with what), at a path only the host could write. */
function tattle(path: string): string {
  writeFileSync(path, `#!/bin/sh\necho "$0 $* in $PWD" >> '${marker}'\ncat\n`);
  chmodSync(path, 0o755);
  return path;
}

beforeEach(() => {
  scratch = mkdtempSync(join(tmpdir(), 'nested-opaque-'));
  repo = join(scratch, 'repo');
  baseDir = join(scratch, 'sandboxes');
  marker = join(scratch, 'ran.txt');
  mkdirSync(repo);
  mkdirSync(baseDir);
  makeRepo(repo, { 'README.md': '# demo\n' });
  git(repo, 'branch', 'feature');
  // The user's own fsmonitor tattles only when a git runs in the user's git dir from another
  // folder: what git does for a `.git` file in the sandbox pointing here.
  const userMonitor = join(scratch, 'user-monitor.sh');
  writeFileSync(
    userMonitor,
    `#!/bin/sh\n[ "$PWD" = '${repo}' ] || echo "user fsmonitor in $PWD" >> '${marker}'\n`,
  );
  chmodSync(userMonitor, 0o755);
  git(repo, 'config', 'core.fsmonitor', userMonitor);
});

afterEach(async () => {
  for (const sandbox of open.splice(0)) await sandbox.close().catch(() => undefined);
  rmSync(scratch, { recursive: true, force: true });
});

/** Makes (or reopens) the sandbox kept in `<baseDir>/s1`. */
async function make(): Promise<LocalSandbox> {
  const sandbox = await openSandbox({ dir: join(baseDir, 's1'), source: repo });
  open.push(sandbox);
  return sandbox;
}

/** A hostile nested repo at `dir`: committed, dirty, every program-naming key set. */
function hostileNestedRepo(dir: string): void {
  mkdirSync(dir, { recursive: true });
  makeRepo(dir, { 'n.txt': 'n\n', '.gitattributes': '* filter=evil diff=evil merge=evil\n' });
  const script = tattle(join(dir, '.git', 'p.sh'));
  const hooks = join(dir, '.git', 'evil-hooks');
  mkdirSync(hooks);
  for (const hook of ['pre-commit', 'post-checkout', 'post-index-change', 'reference-transaction'])
    tattle(join(hooks, hook));
  for (const [key, value] of [
    ['core.fsmonitor', script],
    ['core.hooksPath', hooks],
    ['core.sshCommand', script],
    ['core.pager', script],
    ['diff.external', script],
    ['filter.evil.clean', script],
    ['filter.evil.smudge', script],
    ['filter.evil.process', script],
    ['filter.evil.required', 'true'],
    ['diff.evil.textconv', script],
    ['diff.evil.command', script],
    ['merge.evil.driver', script],
    ['credential.helper', script],
  ])
    git(dir, 'config', key!, value!);
  writeFileSync(join(dir, 'n.txt'), 'n\ndirty\n');
}

describe('nested repos are opaque to the host', () => {
  it('records nested repos as gitlinks from their HEAD and never runs anything of theirs, across snapshots, restore and reopen', async () => {
    const before = repoFingerprint(repo);
    const sandbox = await make();
    hostileNestedRepo(join(sandbox.root, 'nested'));
    // A `.git` file pointing at the user's own repository.
    writeFiles(sandbox.root, { 'pointer/.git': `gitdir: ${join(repo, '.git')}\n`, 'a.txt': 'a\n' });

    const first = await sandbox.snapshot('one');
    expect(first.changed).toEqual([
      { status: 'A', path: 'a.txt' },
      { status: 'A', path: 'nested' },
      { status: 'A', path: 'pointer' },
    ]);
    expect(sandbox.nestedRepos()).toEqual([
      { path: 'nested', kind: 'repository' },
      { path: 'pointer', kind: 'repository' },
    ]);
    expect((sandbox.skippedPaths?.() ?? []).map((item) => `${item.reason} ${item.path}`)).toEqual([
      'nested-repo nested',
      'nested-repo pointer',
    ]);

    // The gitlinks are in the index now: the next snapshots meet them there, dirty.
    writeFileSync(join(sandbox.root, 'nested', 'n.txt'), 'dirtier\n');
    writeFiles(sandbox.root, { 'b.txt': 'b\n' });
    const second = await sandbox.snapshot('two');
    expect(second.changed).toEqual([{ status: 'A', path: 'b.txt' }]);
    // A new commit in the nested repo moves its gitlink (read from HEAD, not from status).
    // (The tool's own git, neutered here because the test runs it on the host.)
    git(
      join(sandbox.root, 'nested'),
      ...['core.fsmonitor=false', 'core.hooksPath=/dev/null', 'filter.evil.process=']
        .concat(['filter.evil.clean=cat', 'filter.evil.required=false'])
        .flatMap((setting) => ['-c', setting]),
      'commit',
      '-qam',
      'two',
    );
    const third = await sandbox.snapshot('three');
    expect(third.changed).toEqual([{ status: 'M', path: 'nested' }]);

    await sandbox.restore(first.sha);
    await sandbox.snapshot('after restore');
    await sandbox.close({ remove: false });

    const reopened = await make();
    writeFiles(reopened.root, { 'c.txt': 'c\n' });
    const fourth = await reopened.snapshot('reopened');
    expect(fourth.changed).toEqual([{ status: 'A', path: 'c.txt' }]);
    // Deleting a nested repo records its gitlink's deletion.
    rmSync(join(reopened.root, 'pointer'), { recursive: true });
    expect((await reopened.snapshot('gone')).changed).toEqual([{ status: 'D', path: 'pointer' }]);

    expect(existsSync(marker) ? 'ran' : 'never ran').toBe('never ran');
    expect(repoFingerprint(repo)).toEqual(before);
    // The snapshot holds the nested repo as a gitlink only, none of its files.
    expect(storeGit(reopened, 'ls-tree', '-r', fourth.sha).split('\n')).toContainEqual(
      expect.stringMatching(/^160000 commit [0-9a-f]{40}\tnested$/),
    );
  });

  it('keeps an uninitialised submodule (an empty folder) as it was, and still never enters it when a .git appears', async () => {
    const sha = git(repo, 'rev-parse', 'HEAD').trim();
    git(repo, 'update-index', '--add', '--cacheinfo', `160000,${sha},deps/sub`);
    git(repo, 'commit', '-q', '-m', 'add gitlink');
    mkdirSync(join(repo, 'deps', 'sub'), { recursive: true });
    const sandbox = await make();
    writeFiles(sandbox.root, { 'a.txt': 'a\n' });
    expect((await sandbox.snapshot('one')).changed).toEqual([{ status: 'A', path: 'a.txt' }]);
    // The tool fills the empty folder with a hostile repo: recorded from its HEAD.
    hostileNestedRepo(join(sandbox.root, 'deps', 'sub'));
    expect((await sandbox.snapshot('two')).changed).toEqual([{ status: 'M', path: 'deps/sub' }]);
    writeFiles(sandbox.root, { 'b.txt': 'b\n' });
    expect((await sandbox.snapshot('three')).changed).toEqual([{ status: 'A', path: 'b.txt' }]);
    expect(existsSync(marker) ? 'ran' : 'never ran').toBe('never ran');
  });
});
