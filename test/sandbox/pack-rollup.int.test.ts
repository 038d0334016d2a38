/**
 * Store upkeep keeps up with back-to-back snapshots (issue 38, item 6): the background roll-up
 * of snapshot packs once ran a single time, and stores reached 72–120 packs in long runs. It
 * must run whenever the pack count is over its bound, never while a snapshot writes objects.
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSandbox, type LocalSandbox } from '../../src/sandbox/git/local-sandbox.js';
import { ROLL_UP_PACKS } from '../../src/sandbox/git/watched-snapshots.js';
import { makeRepo, storeGit } from './helpers.js';

/** Snapshots taken back to back, with no pause between them. */
const SNAPSHOTS = 300;

let scratch: string;
let repo: string;
const open: LocalSandbox[] = [];

beforeEach(() => {
  scratch = mkdtempSync(join(tmpdir(), 'pack-rollup-'));
  repo = join(scratch, 'repo');
  mkdirSync(repo);
  makeRepo(repo, { 'README.md': '# demo\n', 'src/a.txt': 'a\n' });
});

afterEach(async () => {
  for (const sandbox of open.splice(0)) await sandbox.close().catch(() => undefined);
  rmSync(scratch, { recursive: true, force: true });
});

describe('pack roll-up under back-to-back snapshots', () => {
  it(`keeps the pack count bounded over ${SNAPSHOTS} snapshots, and every snapshot stays readable`, async () => {
    const sandbox = await createSandbox({ source: repo, baseDir: join(scratch, 'sandboxes') });
    open.push(sandbox);
    await sandbox.snapshot('first');
    const packDir = join(sandbox.runDir, 'git', 'objects', 'pack');
    const packs = () => readdirSync(packDir).filter((name) => name.endsWith('.idx')).length;
    const shas: string[] = [];
    const counts: number[] = [];
    for (let round = 0; round < SNAPSHOTS; round++) {
      // A file in a folder: blob, folder, root and commit, written as one pack.
      writeFileSync(join(sandbox.root, 'src', `r${round % 7}.txt`), `round ${round}\n`);
      const snapshot = await sandbox.snapshot(`round ${round}`);
      expect(snapshot.scan).toBe('watched');
      shas.push(snapshot.sha);
      counts.push(packs());
    }
    // Precondition: the snapshots did write packs, many times the roll-up bound over the run.
    expect(counts.some((count) => count > ROLL_UP_PACKS)).toBe(true);
    const rollUps = counts.filter((count, at) => at > 0 && count < counts[at - 1]!).length;
    expect(rollUps).toBeGreaterThanOrEqual(Math.floor(SNAPSHOTS / ROLL_UP_PACKS) - 1);
    expect(Math.max(...counts)).toBeLessThanOrEqual(ROLL_UP_PACKS + 2);
    await sandbox.close({ remove: false });
    storeGit(sandbox, 'fsck', '--no-dangling', '--no-progress');
    for (const round of [0, 1, SNAPSHOTS / 2, SNAPSHOTS - 1]) {
      expect(storeGit(sandbox, 'show', `${shas[round]!}:src/r${round % 7}.txt`)).toBe(
        `round ${round}\n`,
      );
    }
  }, 60_000);
});
