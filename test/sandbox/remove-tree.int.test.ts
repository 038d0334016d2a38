/**
 * Issue 35, item 8: a tool can make a tree deeper than PATH_MAX in its sandbox; removing the
 * sandbox (`thread remove`, `sandbox remove`, close with remove) failed with ENAMETOOLONG and
 * left it on disk.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync } from 'node:fs';
import { lstat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSandbox } from '../../src/sandbox/git/local-sandbox.js';
import { makeRepo } from './helpers.js';

const NAME = 'd'.repeat(200);
const DEPTH = 30; // 30 × 201 bytes: past PATH_MAX (4,096)

let scratch: string;
beforeEach(() => {
  scratch = mkdtempSync(join(tmpdir(), 'remove-tree-'));
});
afterEach(() => {
  execFileSync('rm', ['-rf', '--', scratch]);
});

describe('removing a sandbox whose tree is deeper than PATH_MAX', () => {
  it('leaves nothing on disk', async () => {
    const repo = join(scratch, 'repo');
    mkdirSync(repo);
    makeRepo(repo, { 'README.md': '# demo\n' });
    const sandbox = await createSandbox({ source: repo, baseDir: join(scratch, 'sandboxes') });
    // Made as a tool would: one folder at a time, relative to the last.
    execFileSync(
      process.execPath,
      [
        '-e',
        `const fs = require('fs'); process.chdir(process.argv[1]);
         for (let i = 0; i < ${DEPTH}; i++) { fs.mkdirSync('${NAME}'); process.chdir('${NAME}'); }
         fs.writeFileSync('f.txt', 'deep');`,
        sandbox.root,
      ],
      { stdio: 'ignore', timeout: 10_000 },
    );
    // Precondition: the deepest file cannot be named by one path.
    const deepest = join(sandbox.root, ...Array<string>(DEPTH).fill(NAME), 'f.txt');
    expect(deepest.length).toBeGreaterThan(4096);
    await expect(lstat(deepest)).rejects.toMatchObject({ code: 'ENAMETOOLONG' });

    await sandbox.close({ remove: true });
    expect(existsSync(sandbox.container)).toBe(false);
    expect(existsSync(sandbox.root)).toBe(false);
  }, 30_000);
});
