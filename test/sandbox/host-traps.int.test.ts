/**
 * Traps a server can plant for the host's git (issue 35, item 6): a fifo where git reads a file
 * (a nested repo's `.git/HEAD`, a `.gitignore`) once held the host's snapshot until its timeout,
 * and the killed git left `run/index.lock`, failing every later snapshot. Each test first shows
 * the trap holds a plain git, then that the sandbox's snapshot does not hang on it.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { LocalSandbox } from '../../src/sandbox/git/local-sandbox.js';
import { openSandbox } from '../../src/sandbox/git/open-sandbox.js';
import { makeRepo } from './helpers.js';

let scratch: string;
let repo: string;
const open: LocalSandbox[] = [];
const writers: ChildProcess[] = [];

beforeEach(() => {
  scratch = mkdtempSync(join(tmpdir(), 'host-traps-'));
  repo = join(scratch, 'repo');
  mkdirSync(repo);
  makeRepo(repo, { 'README.md': '# demo\n', 'src/a.txt': 'a\n' });
});

afterEach(async () => {
  for (const writer of writers.splice(0)) writer.kill('SIGKILL');
  for (const sandbox of open.splice(0)) await sandbox.close().catch(() => undefined);
  rmSync(scratch, { recursive: true, force: true });
});

async function make(gitTimeoutMs = 20_000): Promise<LocalSandbox> {
  const sandbox = await openSandbox({
    dir: join(scratch, 'sandboxes', 's1'),
    source: repo,
    gitTimeoutMs,
  });
  open.push(sandbox);
  return sandbox;
}

function mkfifo(path: string): void {
  expect(spawnSync('mkfifo', [path]).status).toBe(0);
  expect(lstatSync(path).isFIFO()).toBe(true);
}

/** Precondition: a plain `git add -A` over `root` (throwaway index) hangs: killed after 1 s. */
function plainGitHangs(root: string): boolean {
  const result = spawnSync('git', ['add', '-A'], {
    cwd: root,
    timeout: 1000,
    killSignal: 'SIGKILL',
    env: {
      PATH: process.env['PATH'] ?? '/usr/bin:/bin',
      GIT_DIR: join(scratch, 'probe.git'),
      GIT_WORK_TREE: root,
      GIT_INDEX_FILE: join(scratch, 'probe-index'),
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
    },
  });
  return result.signal === 'SIGKILL';
}

describe('fifos planted where the host git reads files', () => {
  it('a nested repo whose .git/HEAD is a fifo and fifo .gitignore files do not stall a snapshot, and later snapshots work', async () => {
    spawnSync('git', ['init', '-q', '--bare', join(scratch, 'probe.git')]);
    const sandbox = await make();
    const nested = join(sandbox.root, 'nested');
    mkdirSync(join(nested, '.git', 'objects'), { recursive: true });
    mkdirSync(join(nested, '.git', 'refs'), { recursive: true });
    writeFileSync(join(nested, 'n.txt'), 'n\n');
    mkfifo(join(nested, '.git', 'HEAD'));
    expect(plainGitHangs(sandbox.root)).toBe(true);
    mkfifo(join(sandbox.root, '.gitignore'));
    mkfifo(join(sandbox.root, 'src', '.gitignore'));
    writeFileSync(join(sandbox.root, 'src', 'b.txt'), 'b\n');

    const started = Date.now();
    const first = await sandbox.snapshot('planted');
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(first.changed.map((change) => change.path)).toEqual(
      expect.arrayContaining(['nested/n.txt', 'src/b.txt']),
    );
    expect(first.changed.map((change) => change.path)).not.toContain('.gitignore');
    expect(
      (sandbox.skippedPaths?.() ?? [])
        .filter((item) => item.reason === 'special-file')
        .map((item) => item.path),
    ).toEqual(expect.arrayContaining(['.gitignore', 'nested/.git/HEAD']));
    expect(first.warnings?.join('\n')).toContain('is a fifo where git reads a file');
    expect(existsSync(join(sandbox.runDir, 'index.lock'))).toBe(false);

    writeFileSync(join(sandbox.root, 'src', 'c.txt'), 'c\n');
    const second = await sandbox.snapshot('after');
    expect(second.changed).toEqual([{ status: 'A', path: 'src/c.txt' }]);
    await sandbox.restore(first.sha);
    expect(existsSync(join(sandbox.root, 'src', 'c.txt'))).toBe(false);
  }, 30_000);

  it('a fifo a process holds open stops the snapshot at once, naming it, with no lock left behind', async () => {
    const sandbox = await make();
    // Both ends are opened by a process "in the sandbox": git's open succeeds, its read waits
    // (a `.gitignore` is not read then: git sees its size, 0; a HEAD is read whatever its size).
    const nested = join(sandbox.root, 'nested');
    mkdirSync(join(nested, '.git', 'objects'), { recursive: true });
    mkdirSync(join(nested, '.git', 'refs'), { recursive: true });
    const fifo = join(nested, '.git', 'HEAD');
    mkfifo(fifo);
    const writer = spawn('sh', ['-c', `exec 3<>'${fifo}'; exec sleep 60`], { stdio: 'ignore' });
    writers.push(writer);
    await new Promise((done) => setTimeout(done, 200));
    writeFileSync(join(sandbox.root, 'src', 'b.txt'), 'b\n');

    const started = Date.now();
    const error = await sandbox.snapshot('held').then(
      () => undefined,
      (caught: unknown) => caught as Error,
    );
    expect(error?.message).toContain(`stuck reading "${fifo}"`);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(existsSync(join(sandbox.runDir, 'index.lock'))).toBe(false);

    writer.kill('SIGKILL');
    await new Promise((done) => writer.once('exit', done));
    const next = await sandbox.snapshot('released');
    expect(next.changed).toEqual(expect.arrayContaining([{ status: 'A', path: 'src/b.txt' }]));
  }, 30_000);

  it('a lock file left in the run dir by a killed git is recovered', async () => {
    const first = await make();
    await first.snapshot('first');
    await first.close({ remove: false });
    open.splice(0);
    // As a git killed with an earlier process leaves it; the reopened sandbox's first snapshot
    // is a full scan, whose `add -A` takes this lock.
    const lock = join(first.runDir, 'index.lock');
    writeFileSync(lock, '');
    expect(existsSync(lock)).toBe(true);
    const sandbox = await make();
    writeFileSync(join(sandbox.root, 'src', 'b.txt'), 'b\n');
    const snapshot = await sandbox.snapshot('after a stale lock');
    expect(snapshot.changed).toEqual([{ status: 'A', path: 'src/b.txt' }]);
    expect(existsSync(lock)).toBe(false);
  }, 30_000);
});
