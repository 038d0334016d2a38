import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSandbox, type LocalSandbox } from '../../src/sandbox/git/local-sandbox.js';
import { git, makeRepo, storeGit } from './helpers.js';

/**
 * Issue 35, item 5: a process still running in the sandbox swaps a folder for a symlink to the
 * state folder, over and over, while the host takes full-scan snapshots. git's `add -A` walks by
 * path, so without a check it stores the files behind the symlink (the OAuth tokens). The
 * secrets here hold a marker; no stored tree may ever hold a blob with it.
 */

const FILES_PER_FOLDER = 150;
/** Rounds of each phase; the whole test stays well under 30 s. */
/** Rounds of plain `add -A` per hold time of the swapper, tried in turn until one leaks. */
const MAX_RAW_ROUNDS = 60;
const RAW_HOLDS_MS = [1, 5, 2, 10];
const SNAPSHOT_ROUNDS = 40;

let scratch: string;
let repo: string;
let secrets: string;
let swapper: ChildProcess | undefined;
let sandbox: LocalSandbox | undefined;
const savedScan = process.env['AGENTS_SNAPSHOT_SCAN'];

beforeEach(() => {
  scratch = mkdtempSync(join(tmpdir(), 'scan-race-'));
  repo = join(scratch, 'repo');
  secrets = join(scratch, 'state', 'credentials');
  mkdirSync(repo);
  mkdirSync(secrets, { recursive: true });
  mkdirSync(join(scratch, 'sandboxes'));
  const files: Record<string, string> = { 'README.md': '# demo\n' };
  for (let i = 0; i < FILES_PER_FOLDER; i++) files[`d/f${i}.txt`] = `public ${i}\n`;
  makeRepo(repo, files);
  // The same names as the sandbox's folder (git sees changed files) and token files of its own.
  for (let i = 0; i < FILES_PER_FOLDER; i++) {
    writeFileSync(join(secrets, `f${i}.txt`), `SECRET-TOKEN ${i}\n`);
  }
  writeFileSync(join(secrets, 'oauth-tokens.json'), '{"access_token":"SECRET-TOKEN access"}\n');
  // Every snapshot below is a full scan (the path the race is about).
  process.env['AGENTS_SNAPSHOT_SCAN'] = 'full';
});

afterEach(async () => {
  if (savedScan === undefined) delete process.env['AGENTS_SNAPSHOT_SCAN'];
  else process.env['AGENTS_SNAPSHOT_SCAN'] = savedScan;
  await stopSwapper();
  await sandbox?.close();
  sandbox = undefined;
  rmSync(scratch, { recursive: true, force: true });
});

/** The secret blobs' ids: what a leak would put in a tree. */
function secretBlobs(): Set<string> {
  const ids = new Set<string>();
  const names = [...Array(FILES_PER_FOLDER).keys()].map((i) => `f${i}.txt`);
  names.push('oauth-tokens.json');
  const out = git(secrets, 'hash-object', '--no-filters', ...names.map((n) => join(secrets, n)));
  for (const id of out.split('\n')) if (id !== '') ids.add(id);
  return ids;
}

/**
 * A real background process, as a tool would leave running: swaps `d` for a symlink to the
 * secrets and back as fast as it can, and reports how many swaps it made when stopped.
 */
function startSwapper(root: string, holdMs = 1): ChildProcess {
  const script = `
    const fs = require('fs');
    const HOLD = Number(process.argv[2]);
    let swaps = 0, running = true;
    const hold = new Int32Array(new SharedArrayBuffer(4));
    process.on('SIGTERM', () => { running = false; });
    const tick = () => {
      for (let i = 0; i < 200 && running; i++) {
        try {
          fs.renameSync('d', 'd.real');
          fs.symlinkSync(process.argv[1], 'd');
          swaps++;
          Atomics.wait(hold, 0, 0, HOLD);
          fs.unlinkSync('d');
          fs.renameSync('d.real', 'd');
          Atomics.wait(hold, 0, 0, HOLD);
        } catch {}
      }
      if (running) setImmediate(tick);
      else process.stdout.write(String(swaps), () => process.exit(0));
    };
    tick();`;
  return spawn(process.execPath, ['-e', script, secrets, String(holdMs)], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
}

async function stopSwapper(): Promise<number> {
  const child = swapper;
  swapper = undefined;
  if (child === undefined || child.exitCode !== null) return 0;
  let out = '';
  child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const done = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  await done;
  return Number(out);
}

/** Blob ids of every entry of `tree` in the store at `gitDir`. */
function treeBlobs(cwd: string, gitDir: string, tree: string): string[] {
  return git(cwd, `--git-dir=${gitDir}`, 'ls-tree', '-r', '-z', tree)
    .split('\0')
    .filter((line) => line !== '')
    .map((line) => line.split(/\s/)[2]!);
}

describe('full-scan snapshot racing a folder swapped for a symlink (issue 35, item 5)', () => {
  it('never stores a file from behind the symlink, though plain add -A does', async () => {
    const secret = secretBlobs();
    sandbox = await createSandbox({ source: repo, baseDir: join(scratch, 'sandboxes') });
    const root = sandbox.root;
    expect((await sandbox.snapshot('first')).scan).toBe('full');

    // Precondition: on this machine the race is real. The same swapper against the plain
    // `add -A` the host ran before the fix (a scratch store, a fresh index each round) stores a
    // secret within a few rounds.
    const rawDir = join(scratch, 'raw.git');
    execFileSync('git', ['init', '--bare', '-q', rawDir]);
    // The swap's hold time decides how often git meets a folder mid-swap (and fails outright,
    // a lost round) against a symlink that stays long enough to be read through: which hold
    // wins the race depends on the machine's speed and load, so the rounds go through several.
    let rawLeaks = 0;
    let rawRounds = 0;
    let rawFailed = 0;
    let rawSwaps = 0;
    for (const holdMs of RAW_HOLDS_MS) {
      if (rawLeaks > 0) break;
      swapper = startSwapper(root, holdMs);
      for (let round = 0; round < MAX_RAW_ROUNDS && rawLeaks === 0; round++, rawRounds++) {
        const env = { ...process.env, GIT_DIR: rawDir, GIT_WORK_TREE: root };
        const index = join(scratch, `raw-index-${rawRounds}`);
        // git fails outright when the swap removes a folder it is reading: that round is lost.
        const add = spawnSync('git', ['add', '-A'], {
          cwd: root,
          env: { ...env, GIT_INDEX_FILE: index },
        });
        if (add.status !== 0) {
          rawFailed++;
          continue;
        }
        const tree = execFileSync('git', ['write-tree'], {
          cwd: root,
          env: { ...env, GIT_INDEX_FILE: index },
          encoding: 'utf8',
        }).trim();
        if (treeBlobs(root, rawDir, tree).some((id) => secret.has(id))) rawLeaks++;
      }
      rawSwaps += await stopSwapper();
    }
    expect(rawSwaps).toBeGreaterThan(0);
    expect(
      rawLeaks,
      `plain add -A leaked in none of ${rawRounds} rounds (${rawFailed} failed, ${rawSwaps} swaps)`,
    ).toBeGreaterThan(0);

    // The host's full scans, racing the same swapper.
    swapper = startSwapper(root);
    const snapshots: string[] = [];
    let skippedRounds = 0;
    let failedRounds = 0;
    for (let round = 0; round < SNAPSHOT_ROUNDS; round++) {
      // As above, a scan whose folder vanished under git fails (the tool broke its own call);
      // what matters is what the others stored.
      const snapshot = await sandbox.snapshot(`round ${round}`).catch(() => undefined);
      if (snapshot === undefined) {
        failedRounds++;
        continue;
      }
      expect(snapshot.scan).toBe('full');
      snapshots.push(snapshot.sha);
      if (snapshot.warnings?.some((w) => w.includes('through a symlink')) === true) skippedRounds++;
    }
    const swaps = await stopSwapper();
    expect(swaps).toBeGreaterThan(0);
    expect(snapshots.length, `${failedRounds} of ${SNAPSHOT_ROUNDS} scans failed`).toBeGreaterThan(
      SNAPSHOT_ROUNDS / 4,
    );
    for (const sha of new Set(snapshots)) {
      const leaked = treeBlobs(root, join(sandbox.runDir, 'git'), `${sha}^{tree}`).filter((id) =>
        secret.has(id),
      );
      expect(leaked, `snapshot ${sha} holds secret blobs`).toEqual([]);
    }
    // The check did take entries back out (the race hit the host's scans too).
    expect(skippedRounds).toBeGreaterThan(0);
    // After the swapper stops, the folder is recorded as it is.
    const settled = await sandbox.snapshot('settled');
    expect(storeGit(sandbox, 'show', `${settled.sha}:d/f0.txt`)).toBe('public 0\n');
    const settledPaths = storeGit(sandbox, 'ls-tree', '-r', '--name-only', settled.sha)
      .split('\n')
      .filter((line) => line !== '');
    expect(settledPaths).toHaveLength(FILES_PER_FOLDER + 1);
  }, 60_000);
});
