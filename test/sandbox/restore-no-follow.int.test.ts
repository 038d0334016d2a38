import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { createSandbox, type LocalSandbox } from '../../src/sandbox/git/local-sandbox.js';
import { makeRepo } from './helpers.js';

/**
 * Issue 35, item 6: a symlink a process in the sandbox planted where a restore writes (a folder
 * swapped for a link to a folder outside) never makes the restore write or delete outside.
 */
let scratch: string;
let sandbox: LocalSandbox | undefined;

beforeEach(() => {
  scratch = mkdtempSync(join(tmpdir(), 'restore-no-follow-'));
});
afterEach(async () => {
  await sandbox?.close();
  sandbox = undefined;
  rmSync(scratch, { recursive: true, force: true });
});

it('a restore through a folder swapped for a symlink writes inside the sandbox only', async () => {
  const repo = join(scratch, 'repo');
  const outside = join(scratch, 'outside');
  mkdirSync(repo);
  mkdirSync(outside);
  writeFileSync(join(outside, 'keep.txt'), 'keep\n');
  makeRepo(repo, { 'README.md': '# demo\n', 'd/x.txt': 'x\n' });
  mkdirSync(join(scratch, 'sandboxes'));
  sandbox = await createSandbox({ source: repo, baseDir: join(scratch, 'sandboxes') });
  const first = await sandbox.snapshot('first');
  // The tool's process: the folder becomes a link out, with the file's name free behind it.
  execFileSync(
    process.execPath,
    [
      '-e',
      `const fs = require('fs'); fs.rmSync('d', { recursive: true }); fs.symlinkSync(${JSON.stringify(outside)}, 'd');`,
    ],
    { cwd: sandbox.root },
  );
  const planted = await sandbox.snapshot('planted');
  expect(planted.changed).toContainEqual({ status: 'A', path: 'd' });
  const restored = await sandbox.restore(first.sha);
  expect(restored.writes).toBe('changed');
  expect(readFileSync(join(sandbox.root, 'd', 'x.txt'), 'utf8')).toBe('x\n');
  expect(readdirSync(outside)).toEqual(['keep.txt']);
  expect(readFileSync(join(outside, 'keep.txt'), 'utf8')).toBe('keep\n');
});
