import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSandbox, type LocalSandbox } from '../../src/sandbox/git/local-sandbox.js';
import { ROLL_UP_PACKS } from '../../src/sandbox/git/watched-snapshots.js';
import { makeRepo, storeGit } from './helpers.js';

/**
 * Property test of watched snapshots (issue 29): random writes, deletes, renames, mode changes,
 * symlinks, nested folders and ignored files, made by another process (as a tool would), and
 * after each step the snapshot's tree must equal the tree a full `git add -A` into a fresh
 * index gives. Seeded: a failure names its seed and step.
 */

let scratch: string;
let repo: string;
const open: LocalSandbox[] = [];

beforeEach(() => {
  scratch = mkdtempSync(join(tmpdir(), 'watched-snapshots-'));
  repo = join(scratch, 'repo');
  mkdirSync(repo);
  mkdirSync(join(scratch, 'sandboxes'));
  makeRepo(repo, {
    'README.md': '# demo\n',
    'src/a.txt': 'a\n',
    'src/deep/b.txt': 'b\n',
    'docs/c.md': 'c\n',
    '.gitignore': '*.log\nbuild/\n',
  });
});

afterEach(async () => {
  for (const sandbox of open.splice(0)) await sandbox.close();
  rmSync(scratch, { recursive: true, force: true });
});

/** mulberry32: a small seeded generator, so a failing run can be replayed. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * The tree a full `add -A` of the sandbox gives, on an index made from the previous snapshot's
 * tree (what is tracked stays tracked, as in the sandbox's own index) with no stat data at all:
 * every file is read again.
 */
function referenceTree(sandbox: LocalSandbox, previous: string): string {
  const index = join(scratch, 'reference-index');
  rmSync(index, { force: true });
  const env = {
    PATH: process.env['PATH'] ?? '/usr/bin:/bin',
    HOME: scratch,
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_DIR: join(sandbox.runDir, 'git'),
    GIT_WORK_TREE: sandbox.root,
    GIT_INDEX_FILE: index,
  };
  const run = (...args: string[]) =>
    execFileSync('git', args, { cwd: sandbox.root, env, encoding: 'utf8' }).trim();
  run('read-tree', previous);
  run('-c', `core.excludesFile=${sandbox.excludeFile}`, 'add', '-A');
  return run('write-tree');
}

/**
 * The operations of one step, as a script another Node process runs in the sandbox (a tool's
 * writes come from another process; the watcher must see them like any other).
 */
function stepScript(next: () => number, step: number): string {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
  const dirs = ['', 'src', 'src/deep', 'docs', 'new', 'new/inner', 'build', 'x/y/z'];
  const names = ['a.txt', 'b.txt', 'c.md', 'run.sh', 'note.log', 'data.bin', 'link'];
  const path = () => {
    const dir = pick(dirs);
    return dir === '' ? pick(names) : `${dir}/${pick(names)}`;
  };
  const ops: string[] = [];
  const count = 1 + Math.floor(next() * 4);
  for (let index = 0; index < count; index++) {
    const target = JSON.stringify(path());
    const other = JSON.stringify(path());
    const dir = JSON.stringify(pick(dirs.filter((entry) => entry !== '')));
    const otherDir = JSON.stringify(pick(['moved', 'src/moved', 'new', 'docs/sub']));
    const content = JSON.stringify(`step ${step} op ${index} ${next()}\n`);
    switch (
      pick([
        'write',
        'write',
        'write',
        'append',
        'delete',
        'rename',
        'renameDir',
        'deleteDir',
        'chmod',
        'symlink',
        'mkdirEmpty',
        'fileOverDir',
        'dirOverFile',
      ] as const)
    ) {
      case 'write':
        ops.push(`mk(dirname(${target})); rm(${target}); fs.writeFileSync(${target}, ${content});`);
        break;
      case 'append':
        ops.push(`try { fs.appendFileSync(${target}, ${content}); } catch {}`);
        break;
      case 'delete':
        ops.push(`rm(${target});`);
        break;
      case 'rename':
        ops.push(
          `try { mk(dirname(${other})); rm(${other}); fs.renameSync(${target}, ${other}); } catch {}`,
        );
        break;
      case 'renameDir':
        ops.push(
          `try { mk(dirname(${otherDir})); fs.rmSync(${otherDir}, { recursive: true, force: true }); fs.renameSync(${dir}, ${otherDir}); } catch {}`,
        );
        break;
      case 'deleteDir':
        ops.push(`fs.rmSync(${dir}, { recursive: true, force: true });`);
        break;
      case 'chmod':
        ops.push(`try { fs.chmodSync(${target}, ${pick(['0o755', '0o644', '0o700'])}); } catch {}`);
        break;
      case 'symlink':
        ops.push(
          `mk(dirname(${target})); rm(${target}); fs.symlinkSync(${JSON.stringify(pick(['a.txt', '../README.md', 'missing', 'src/deep']))}, ${target});`,
        );
        break;
      case 'mkdirEmpty':
        ops.push(`mk(${dir});`);
        break;
      case 'fileOverDir':
        ops.push(
          `fs.rmSync(${dir}, { recursive: true, force: true }); mk(dirname(${dir})); fs.writeFileSync(${dir}, ${content});`,
        );
        break;
      case 'dirOverFile':
        ops.push(
          `rm(${target}); mk(${target}); fs.writeFileSync(${target} + '/inside.txt', ${content});`,
        );
        break;
    }
  }
  return [
    "const fs = require('node:fs');",
    "const { dirname } = require('node:path');",
    // A file where a folder should be is removed first (the tool "means" to make the folder).
    "const mk = (d) => { if (d === '.' || d === '') return; try { fs.mkdirSync(d, { recursive: true }); } catch { const parts = d.split('/'); for (let i = 1; i <= parts.length; i++) { const p = parts.slice(0, i).join('/'); try { if (!fs.lstatSync(p).isDirectory()) fs.rmSync(p, { force: true }); } catch {} } fs.mkdirSync(d, { recursive: true }); } };",
    'const rm = (p) => { try { fs.rmSync(p, { recursive: true, force: true }); } catch {} };',
    // Each operation on its own: one that does not apply (a rename of a missing file) is skipped.
    ...ops.map((op) => `try { ${op} } catch {}`),
  ].join('\n');
}

describe('watched snapshots', () => {
  // A longer hunt: AGENTS_PROPERTY_SEEDS=1-40 npx vitest run <this file>.
  const [first = 1, last = 3] = (process.env['AGENTS_PROPERTY_SEEDS'] ?? '1-3')
    .split('-')
    .map(Number);
  const seeds = Array.from({ length: last - first + 1 }, (_, index) => first + index);
  it.each(seeds)(
    'equal a full add -A after every step of random changes (seed %i)',
    async (seed) => {
      const sandbox = await createSandbox({
        source: repo,
        baseDir: join(scratch, 'sandboxes'),
        id: `prop${seed}`,
      });
      open.push(sandbox);
      const next = random(seed);
      const scans = { watched: 0, full: 0 };
      const restores = { changed: 0, full: 0 };
      const snapshots: string[] = [];
      const watchedShas: string[] = [];
      for (let step = 0; step < 24; step++) {
        const script = stepScript(next, step);
        execFileSync(process.execPath, ['-e', script], { cwd: sandbox.root });
        const snapshot = await sandbox.snapshot(`step ${step}`);
        scans[snapshot.scan ?? 'full']++;
        if (snapshot.scan === 'watched' && snapshot.sha !== snapshot.parent)
          watchedShas.push(snapshot.sha);
        const tree = storeGit(sandbox, 'rev-parse', `${snapshot.sha}^{tree}`).trim();
        const reference = referenceTree(sandbox, snapshot.parent);
        const difference =
          tree === reference ? '' : storeGit(sandbox, 'diff-tree', '-r', tree, reference);
        expect(
          tree,
          `seed ${seed} step ${step} (${snapshot.scan} ${snapshot.scanReason ?? ''}):\n${difference}\n${script}`,
        ).toBe(reference);
        // The change list is git's own diff between the two snapshots.
        const listed = storeGit(
          sandbox,
          'diff-tree',
          '-r',
          '--name-status',
          '--no-renames',
          snapshot.parent,
          snapshot.sha,
        )
          .split('\n')
          .filter((line) => line !== '')
          .map((line) => line.replace('\t', ' '))
          .sort();
        expect(
          snapshot.changed.map(({ status, path }) => `${status} ${path}`).sort(),
          `seed ${seed} step ${step}`,
        ).toEqual(listed);
        snapshots.push(snapshot.sha);
        // Now and then, a restore to an earlier snapshot; the next steps continue from it.
        if (step % 8 === 7) {
          const target = snapshots[Math.floor(next() * snapshots.length)]!;
          const restored = await sandbox.restore(target);
          restores[restored.writes ?? 'full']++;
          // Byte for byte, modes and symlinks included: a full `add -A` of the disk gives the
          // target's tree.
          expect(referenceTree(sandbox, target), `seed ${seed} restore at step ${step}`).toBe(
            storeGit(sandbox, 'rev-parse', `${target}^{tree}`).trim(),
          );
          // What it says it changed is git's own diff between the safety snapshot and the target.
          expect(
            restored.changed.map(({ status, path }) => `${status} ${path}`).sort(),
            `seed ${seed} restore at step ${step}`,
          ).toEqual(
            storeGit(
              sandbox,
              'diff-tree',
              '-r',
              '--name-status',
              '--no-renames',
              restored.safety.sha,
              target,
            )
              .split('\n')
              .filter((line) => line !== '')
              .map((line) => line.replace('\t', ' '))
              .filter((line) => !(restored.keptIgnored ?? []).includes(line.slice(2)))
              .sort(),
          );
        }
      }
      // The store stays sound (objects written without git are valid objects).
      storeGit(sandbox, 'fsck', '--no-dangling', '--no-progress');
      // Watched snapshots were written as packs (their commits are not loose objects).
      const loose = (sha: string) =>
        existsSync(join(sandbox.runDir, 'git', 'objects', sha.slice(0, 2), sha.slice(2)));
      expect(
        watchedShas.some((sha) => !loose(sha)),
        `seed ${seed}: no packed snapshot`,
      ).toBe(true);
      // Most steps take the watched path; the first one of a process (and a few others) scan.
      expect(scans.watched).toBeGreaterThan(12);
      // Restores write only what differs whenever the watcher runs (it does after a scan).
      expect(restores.changed).toBeGreaterThan(0);
    },
    // Generous: each step spawns a process and several git commands, on a loaded machine.
    300_000,
  );

  it('scans the whole tree when the watcher cannot know what changed', async () => {
    const sandbox = await createSandbox({ source: repo, baseDir: join(scratch, 'sandboxes') });
    open.push(sandbox);
    const first = await sandbox.snapshot('first');
    expect(first.scan).toBe('full');
    execFileSync(process.execPath, ['-e', "require('fs').writeFileSync('new.txt', 'x')"], {
      cwd: sandbox.root,
    });
    const watched = await sandbox.snapshot('watched');
    expect(watched).toMatchObject({ scan: 'watched', changed: [{ status: 'A', path: 'new.txt' }] });
    // A rule change: every path may now be in or out, so the watcher's list is not enough.
    execFileSync(
      process.execPath,
      [
        '-e',
        "const fs = require('fs'); fs.writeFileSync('.gitignore', '*.txt\\n'); fs.writeFileSync('later.txt', 'x')",
      ],
      { cwd: sandbox.root },
    );
    const rules = await sandbox.snapshot('rules');
    expect(rules.scan).toBe('full');
    expect(rules.scanReason).toMatch(/gitignore/);
    expect(storeGit(sandbox, 'rev-parse', `${rules.sha}^{tree}`).trim()).toBe(
      referenceTree(sandbox, rules.parent),
    );
    // After the scan, watching starts again.
    execFileSync(process.execPath, ['-e', "require('fs').writeFileSync('README.md', 'changed')"], {
      cwd: sandbox.root,
    });
    expect((await sandbox.snapshot('again')).scan).toBe('watched');
  });

  it('rolls the packs of many snapshots up, and every snapshot stays readable and right', async () => {
    const sandbox = await createSandbox({ source: repo, baseDir: join(scratch, 'sandboxes') });
    open.push(sandbox);
    await sandbox.snapshot('first');
    const packDir = join(sandbox.runDir, 'git', 'objects', 'pack');
    const packs = () => readdirSync(packDir).filter((name) => name.endsWith('.idx')).length;
    const shas: string[] = [];
    let most = 0;
    for (let round = 0; round <= ROLL_UP_PACKS + 4; round++) {
      // Five files in five folders: a snapshot of a dozen objects, written as one pack.
      for (const dir of ['src', 'src/deep', 'docs', 'new', 'new/inner']) {
        mkdirSync(join(sandbox.root, dir), { recursive: true });
        writeFileSync(join(sandbox.root, dir, 'r.txt'), `round ${round}\n`);
      }
      const snapshot = await sandbox.snapshot(`round ${round}`);
      expect(snapshot.scan).toBe('watched');
      // Rewrites that only change ids patch the old trees' content: still the tree add -A gives.
      if (round % 8 === 1)
        expect(storeGit(sandbox, 'rev-parse', `${snapshot.sha}^{tree}`).trim()).toBe(
          referenceTree(sandbox, snapshot.parent),
        );
      shas.push(snapshot.sha);
      most = Math.max(most, packs());
    }
    expect(most).toBeGreaterThan(ROLL_UP_PACKS);
    // Closing waits for the roll-up under way (nothing left running).
    await sandbox.close({ remove: false });
    expect(packs()).toBeLessThan(ROLL_UP_PACKS);
    storeGit(sandbox, 'fsck', '--no-dangling', '--no-progress');
    shas.forEach((sha, round) =>
      expect(storeGit(sandbox, 'show', `${sha}:new/inner/r.txt`)).toBe(`round ${round}\n`),
    );
  });
});
