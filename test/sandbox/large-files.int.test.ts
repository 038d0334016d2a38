import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AgentsError } from '../../src/errors.js';
import { createSandbox, type LocalSandbox } from '../../src/sandbox/git/local-sandbox.js';
import { openSandbox } from '../../src/sandbox/git/open-sandbox.js';
import { git, makeRepo, storeGit, writeFiles } from './helpers.js';

/** A small cap, so the tests need no large files. */
const CAP = 1000;
const big = (bytes = 2000, char = 'x'): string => char.repeat(bytes);

let scratch: string;
let repo: string;
let baseDir: string;
const open: LocalSandbox[] = [];

beforeEach(() => {
  scratch = mkdtempSync(join(tmpdir(), 'sandbox-large-'));
  repo = join(scratch, 'repo');
  baseDir = join(scratch, 'sandboxes');
  mkdirSync(repo);
  mkdirSync(baseDir);
  makeRepo(repo, {
    'README.md': '# demo\n',
    'data.txt': 'small\n',
    'src/util.py': 'x = 1\n',
    '.gitattributes': '*.bin filter=lfs diff=lfs merge=lfs -text\n',
  });
});

afterEach(async () => {
  for (const sandbox of open.splice(0)) await sandbox.close();
  rmSync(scratch, { recursive: true, force: true });
});

async function make(
  options: Partial<Parameters<typeof createSandbox>[0]> = {},
): Promise<LocalSandbox> {
  const sandbox = await createSandbox({ source: repo, baseDir, maxFileBytes: CAP, ...options });
  open.push(sandbox);
  return sandbox;
}

/** The file paths a snapshot holds. */
function filesOf(sandbox: LocalSandbox, sha: string): string[] {
  return storeGit(sandbox, 'ls-tree', '-r', '-z', '--name-only', sha)
    .split('\0')
    .filter((path) => path !== '');
}

function read(sandbox: LocalSandbox, path: string): string {
  return readFileSync(join(sandbox.root, path), 'utf8');
}

describe('snapshot size cap (maxFileBytes)', () => {
  it('leaves a new file over the cap out of every snapshot and names it in one warning', async () => {
    const sandbox = await make();
    expect(sandbox.maxFileBytes).toBe(CAP);
    writeFiles(sandbox.root, { 'big.dat': big(), 'notes.txt': 'hi\n' });
    const first = await sandbox.snapshot('one');
    expect(first.changed).toEqual([{ status: 'A', path: 'notes.txt' }]);
    expect(filesOf(sandbox, first.sha)).toContain('notes.txt');
    expect(filesOf(sandbox, first.sha)).not.toContain('big.dat');
    expect(first.warnings).toEqual([
      '"big.dat" is 2000 bytes, over the snapshot size cap of 1000 bytes (maxFileBytes), so it is not captured: a rollback will not restore or remove it; raise maxFileBytes or add it to .gitignore.',
    ]);
    expect(sandbox.oversizedFiles()).toEqual([{ path: 'big.dat', size: 2000, tracked: false }]);

    writeFiles(sandbox.root, { 'big.dat': big(3000), 'notes.txt': 'hi again\n' });
    const second = await sandbox.snapshot('two');
    expect(second.parent).toBe(first.sha);
    expect(second.changed).toEqual([{ status: 'M', path: 'notes.txt' }]);
    expect(filesOf(sandbox, second.sha)).not.toContain('big.dat');
    expect(second.warnings).toBeUndefined();

    const third = await sandbox.snapshot('nothing');
    expect(third.sha).toBe(second.sha);
    expect(third.warnings).toBeUndefined();
    expect(read(sandbox, 'big.dat')).toBe(big(3000));
  });

  it('keeps the last captured version of a tracked file that grows over the cap, and captures the small change beside it', async () => {
    const sandbox = await make();
    writeFiles(sandbox.root, { 'data.txt': big(), 'src/util.py': 'x = 2\n' });
    const snap = await sandbox.snapshot('grow');
    expect(snap.changed).toEqual([{ status: 'M', path: 'src/util.py' }]);
    expect(storeGit(sandbox, 'show', `${snap.sha}:data.txt`)).toBe('small\n');
    expect(storeGit(sandbox, 'show', `${snap.sha}:src/util.py`)).toBe('x = 2\n');
    expect(snap.warnings).toHaveLength(1);
    expect(snap.warnings![0]).toContain('"data.txt" is 2000 bytes');
    expect(snap.warnings![0]).toContain('snapshots keep its last captured version');
    expect(sandbox.oversizedFiles()).toEqual([{ path: 'data.txt', size: 2000, tracked: true }]);

    writeFiles(sandbox.root, { 'data.txt': big(2500) });
    const again = await sandbox.snapshot('grow more');
    expect(again.sha).toBe(snap.sha);
    expect(again.warnings).toBeUndefined();
  });

  it('captures a skipped file again once it is back under the cap, and records its deletion', async () => {
    const sandbox = await make();
    writeFiles(sandbox.root, { 'new.dat': big(), 'data.txt': big() });
    const skipped = await sandbox.snapshot('big');
    expect(skipped.sha).toBe(sandbox.base);
    expect(skipped.warnings).toHaveLength(2);

    writeFiles(sandbox.root, { 'new.dat': 'now small\n' });
    const back = await sandbox.snapshot('shrink');
    expect(back.changed).toEqual([{ status: 'A', path: 'new.dat' }]);
    expect(storeGit(sandbox, 'show', `${back.sha}:new.dat`)).toBe('now small\n');

    rmSync(join(sandbox.root, 'data.txt'));
    const gone = await sandbox.snapshot('delete');
    expect(gone.changed).toEqual([{ status: 'D', path: 'data.txt' }]);
    expect(sandbox.oversizedFiles()).toEqual([]);
  });

  it('never overwrites or deletes a skipped file when rolling back, whatever the target holds at its path', async () => {
    const sandbox = await make();
    writeFiles(sandbox.root, { 'grow.dat': 'v1\n', 'gone.txt': 'old\n' });
    const one = await sandbox.snapshot('one');
    // grow.dat: tracked, grows over the cap. gone.txt: deleted, then made again over the cap
    // (untracked now, but the target has it). data.txt: tracked since the base.
    writeFiles(sandbox.root, { 'grow.dat': big(2000, 'g'), 'data.txt': big(2000, 'd') });
    rmSync(join(sandbox.root, 'gone.txt'));
    writeFiles(sandbox.root, { 'later.txt': 'later\n' });
    const two = await sandbox.snapshot('two');
    expect(two.changed).toEqual([
      { status: 'D', path: 'gone.txt' },
      { status: 'A', path: 'later.txt' },
    ]);
    writeFiles(sandbox.root, { 'gone.txt': big(2000, 'o') });
    expect((await sandbox.snapshot('three')).sha).toBe(two.sha);

    const toOne = await sandbox.restore(one.sha);
    expect(toOne.changed).toContainEqual({ status: 'D', path: 'later.txt' });
    expect(existsSync(join(sandbox.root, 'later.txt'))).toBe(false);
    expect(read(sandbox, 'grow.dat')).toBe(big(2000, 'g'));
    expect(read(sandbox, 'gone.txt')).toBe(big(2000, 'o'));
    expect(read(sandbox, 'data.txt')).toBe(big(2000, 'd'));

    const toBase = await sandbox.restore(sandbox.base);
    expect(toBase.changed).toContainEqual({ status: 'D', path: 'grow.dat' });
    expect(read(sandbox, 'grow.dat')).toBe(big(2000, 'g'));
    expect(read(sandbox, 'gone.txt')).toBe(big(2000, 'o'));
    expect(read(sandbox, 'data.txt')).toBe(big(2000, 'd'));
    expect(sandbox.head).toBe(sandbox.base);
    expect(readdirSync(sandbox.runDir).filter((name) => name.includes('aside'))).toEqual([]);

    // Still not captured after the rollbacks; the snapshot keeps the base's data.txt.
    writeFiles(sandbox.root, { 'README.md': '# after\n' });
    const after = await sandbox.snapshot('after');
    expect(after.changed).toEqual([{ status: 'M', path: 'README.md' }]);
    expect(filesOf(sandbox, after.sha)).not.toContain('grow.dat');
    expect(filesOf(sandbox, after.sha)).not.toContain('gone.txt');
    expect(storeGit(sandbox, 'show', `${after.sha}:data.txt`)).toBe('small\n');
  });

  it('refuses a rollback that would put a folder where a skipped file is, and leaves the file alone', async () => {
    const sandbox = await make();
    writeFiles(sandbox.root, { 'thing/inner.txt': 'inside\n' });
    const one = await sandbox.snapshot('one');
    rmSync(join(sandbox.root, 'thing'), { recursive: true });
    writeFiles(sandbox.root, { thing: big() });
    const two = await sandbox.snapshot('two');
    expect(two.changed).toEqual([{ status: 'D', path: 'thing/inner.txt' }]);

    const error = await sandbox.restore(one.sha).catch((caught: unknown) => caught);
    expect(AgentsError.isInstance(error) && error.code).toBe('ROLLBACK_FAILED');
    expect((error as Error).message).toContain('"thing"');
    expect(read(sandbox, 'thing')).toBe(big());
    expect(sandbox.head).toBe(two.sha);
  });

  it('leaves files matching the Git LFS patterns of .gitattributes out, even small ones', async () => {
    writeFiles(repo, {
      '.gitattributes':
        '*.bin filter=lfs diff=lfs merge=lfs -text\n[attr]lfs-file filter=lfs\n*.psd lfs-file\n*.txt text\n',
    });
    git(repo, 'commit', '-q', '-am', 'attributes');
    const sandbox = await make();
    expect(readFileSync(sandbox.excludeFile, 'utf8')).toMatch(/^\*\.bin\n\*\.psd\n/m);
    writeFiles(sandbox.root, { 'x.bin': 'tiny', 'art/a.psd': 'tiny', 'plain.txt': 'plain\n' });
    const snap = await sandbox.snapshot('lfs');
    expect(snap.changed).toEqual([{ status: 'A', path: 'plain.txt' }]);
    expect(snap.warnings).toBeUndefined();
    expect(existsSync(join(sandbox.root, 'x.bin'))).toBe(true);
  });

  it('excludes a skipped file by an escaped pattern that matches no other file', async () => {
    const sandbox = await make();
    writeFiles(sandbox.root, { 'odd/a*[1] ?.dat': big() });
    const first = await sandbox.snapshot('odd');
    expect(first.warnings?.[0]).toContain('"odd/a*[1] ?.dat"');
    expect(readFileSync(sandbox.excludeFile, 'utf8')).toContain('/odd/a\\*\\[1] \\?.dat\n');
    // Both would match the pattern were it not escaped.
    writeFiles(sandbox.root, { 'odd/aZ1 x.dat': 'small\n', 'odd/a*[1] ?.dat': big(2200) });
    const second = await sandbox.snapshot('neighbour');
    expect(second.changed).toEqual([{ status: 'A', path: 'odd/aZ1 x.dat' }]);
  });

  it('turns the cap off with 0 and rejects a negative or fractional cap', async () => {
    const sandbox = await make({ maxFileBytes: 0 });
    writeFiles(sandbox.root, { 'big.dat': big(5000) });
    const snap = await sandbox.snapshot('all');
    expect(snap.changed).toEqual([{ status: 'A', path: 'big.dat' }]);
    expect(snap.warnings).toBeUndefined();
    for (const maxFileBytes of [-1, 1.5, Number.NaN]) {
      const error = await make({ maxFileBytes }).catch((caught: unknown) => caught);
      expect(AgentsError.isInstance(error) && error.code).toBe('CONFIG_INVALID');
    }
  });

  it('keeps the cap and the skipped files across a reopen, naming each skipped file once more', async () => {
    const dir = join(scratch, 'kept');
    const first = await openSandbox({ dir, source: repo, maxFileBytes: CAP, exclude: ['tmp/'] });
    writeFiles(first.root, { 'big.dat': big(), 'data.txt': big() });
    expect((await first.snapshot('one')).warnings).toHaveLength(2);
    await first.close({ remove: false });

    const second = await openSandbox({ dir, source: repo });
    try {
      expect(second.maxFileBytes).toBe(CAP);
      // The exclude file is rewritten on reopen: recorded patterns and LFS patterns stay.
      writeFiles(second.root, { 'README.md': '# reopened\n', 'tmp/t.txt': 't', 'y.bin': 'y' });
      const snap = await second.snapshot('two');
      expect(snap.changed).toEqual([{ status: 'M', path: 'README.md' }]);
      expect(snap.warnings?.join('\n')).toContain('"big.dat"');
      expect(snap.warnings?.join('\n')).toContain('"data.txt"');
      expect(storeGit(second, 'show', `${snap.sha}:data.txt`)).toBe('small\n');
      expect((await second.snapshot('three')).warnings).toBeUndefined();
    } finally {
      await second.close({ remove: false });
    }

    const third = await openSandbox({ dir, source: repo, maxFileBytes: 0 });
    try {
      const snap = await third.snapshot('uncapped');
      expect(snap.changed).toEqual([
        { status: 'A', path: 'big.dat' },
        { status: 'M', path: 'data.txt' },
      ]);
    } finally {
      await third.close();
    }
  });

  it("keeps files over the cap out of a plain folder's base snapshot", async () => {
    const folder = join(scratch, 'folder');
    writeFiles(folder, { 'big.dat': big(), 'small.txt': 'small\n', 'sub/huge.dat': big(4000) });
    const sandbox = await make({ source: folder });
    expect(sandbox.kind).toBe('folder');
    expect(filesOf(sandbox, sandbox.base)).toEqual(['small.txt']);
    const snap = await sandbox.snapshot('first');
    expect(snap.sha).toBe(sandbox.base);
    expect(snap.warnings?.join('\n')).toContain('"big.dat"');
    expect(snap.warnings?.join('\n')).toContain('"sub/huge.dat"');
  });
});
