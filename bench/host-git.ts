/**
 * What running the host's snapshot gits inside bubblewrap would cost (issue 23, option (a)):
 * npx tsx bench/host-git.ts [files] [rounds].
 *
 * A sandbox of `files` small files is made with the library; then, round by round and
 * interleaved, one file is changed and the snapshot's git sequence (add -A, write-tree,
 * diff-tree, commit-tree, update-ref: five spawns) runs on its store, once plain and once with
 * each git under `bwrap` as a confined server gets it (the root read-only, the run dir
 * writable, no network, own PID namespace). Also: `LocalSandbox.snapshot()` itself, as shipped
 * (fixed config env, nested repos opaque), for scale. Medians in ms and the ratio.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { probeBubblewrap } from '../src/confinement/bubblewrap.js';
import { openSandbox } from '../src/sandbox/git/open-sandbox.js';
import { storeEnv } from '../src/sandbox/git/snapshot-store.js';

const exec = promisify(execFile);
const files = Number(process.argv[2] ?? 1000);
const rounds = Number(process.argv[3] ?? 15);

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

const probe = probeBubblewrap();
if (!probe.available) {
  console.log(`bubblewrap unavailable (${probe.reason}); nothing to compare.`);
  process.exit(0);
}
const scratch = mkdtempSync(join(tmpdir(), 'bench-host-git-'));
try {
  const repo = join(scratch, 'repo');
  mkdirSync(repo);
  await exec('git', ['init', '-q', repo]);
  for (let index = 0; index < files; index++) {
    const dir = join(repo, `d${index % 50}`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `f${index}.txt`), `${index}\n`);
  }
  await exec('git', ['-C', repo, 'add', '-A']);
  await exec('git', [
    '-C',
    repo,
    '-c',
    'user.name=b',
    '-c',
    'user.email=b@b',
    'commit',
    '-qm',
    'base',
  ]);
  const sandbox = await openSandbox({ dir: join(scratch, 'sandbox'), source: repo });
  const env = storeEnv(sandbox.runDir, sandbox.root);
  const exclude = join(sandbox.runDir, 'exclude');
  const bwrap = [
    '--ro-bind',
    '/',
    '/',
    '--bind',
    sandbox.runDir,
    sandbox.runDir,
    '--dev',
    '/dev',
    '--proc',
    '/proc',
    '--unshare-net',
    '--unshare-pid',
    '--die-with-parent',
    '--',
    'git',
  ];
  let parent = sandbox.head;
  let headTree = (
    await exec('git', ['rev-parse', `${parent}^{tree}`], { cwd: sandbox.root, env })
  ).stdout.trim();
  const sequence = async (confined: boolean): Promise<number> => {
    const git = async (args: string[]) =>
      (confined
        ? await exec(probe.path, [...bwrap, ...args], { cwd: sandbox.root, env })
        : await exec('git', args, { cwd: sandbox.root, env })
      ).stdout.trim();
    const start = performance.now();
    await git(['-c', `core.excludesFile=${exclude}`, 'add', '-A']);
    const tree = await git(['write-tree']);
    await git(['diff-tree', '-r', '-z', '--raw', '--no-renames', headTree, tree]);
    const sha = await git(['commit-tree', tree, '-p', parent, '-m', 'bench']);
    await git(['update-ref', `refs/snapshots/${sha}`, sha]);
    parent = sha;
    headTree = tree;
    return performance.now() - start;
  };
  const plain: number[] = [];
  const confined: number[] = [];
  const shipped: number[] = [];
  for (let round = 0; round < rounds; round++) {
    writeFileSync(join(sandbox.root, 'd0', 'f0.txt'), `plain ${round}\n`);
    plain.push(await sequence(false));
    writeFileSync(join(sandbox.root, 'd0', 'f0.txt'), `confined ${round}\n`);
    confined.push(await sequence(true));
  }
  // The library's own snapshot, after the store moved on under it: re-sync once, then time.
  await sandbox.restore(parent);
  for (let round = 0; round < rounds; round++) {
    writeFileSync(join(sandbox.root, 'd0', 'f0.txt'), `shipped ${round}\n`);
    const start = performance.now();
    await sandbox.snapshot('bench');
    shipped.push(performance.now() - start);
  }
  await sandbox.close();
  const p = median(plain);
  const c = median(confined);
  console.log(`files ${files}, rounds ${rounds} (medians, ms)`);
  console.log(`snapshot git sequence, plain:      ${p.toFixed(1)}`);
  console.log(
    `snapshot git sequence, bubblewrap: ${c.toFixed(1)}  (x${(c / p).toFixed(2)}, +${((c - p) / 5).toFixed(1)} per spawn)`,
  );
  console.log(`LocalSandbox.snapshot() as shipped: ${median(shipped).toFixed(1)}`);
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
