/**
 * Shared snapshot store benchmark (npx tsx bench/shared-store.ts [fileCounts...]).
 *
 * 1. Added cost per tracked write with a shared store (a local bare repository): a write plus
 *    its snapshot, and with the store also the push the next checkpoint waits for (`flush`),
 *    against the same write and snapshot with no store; interleaved, same process.
 * 2. Materialising a thread on a fresh worker (1,000 and 10,000 files): a sandbox rebuilt from
 *    the store (`createSandbox` with the store as seed, checking out the newest snapshot)
 *    against plain git doing the same: `git init`, `git fetch` of the thread's ref, `git
 *    checkout` of the head. Goal: ≤ 1.5×.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { performance } from 'node:perf_hooks';
import { benchRounds } from './harness.js';
import { createSandbox, type LocalSandbox } from '../src/sandbox/git/local-sandbox.js';
import { ThreadReplica } from '../src/sandbox/git/shared-store.js';

const exec = promisify(execFile);
const env = {
  PATH: process.env['PATH'] ?? '/usr/bin:/bin',
  HOME: process.env['HOME'] ?? '/tmp',
  LC_ALL: 'C',
  GIT_AUTHOR_NAME: 'bench',
  GIT_AUTHOR_EMAIL: 'bench@localhost',
  GIT_COMMITTER_NAME: 'bench',
  GIT_COMMITTER_EMAIL: 'bench@localhost',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_CONFIG_NOSYSTEM: '1',
};

async function git(cwd: string, args: string[]): Promise<string> {
  return (await exec('git', args, { cwd, env, maxBuffer: 64 * 1024 * 1024 })).stdout;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

async function time(work: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await work();
  return performance.now() - start;
}

async function makeRepo(dir: string, fileCount: number): Promise<void> {
  mkdirSync(dir);
  const dirs = Math.max(1, Math.round(fileCount / 100));
  for (let folder = 0; folder < dirs; folder++) {
    mkdirSync(join(dir, `d${folder}`));
    for (let file = 0; file < fileCount / dirs; file++)
      writeFileSync(join(dir, `d${folder}`, `f${file}.txt`), `file ${folder}/${file}\n`);
  }
  await git(dir, ['init', '-q', '-b', 'main']);
  await git(dir, ['add', '-A']);
  await git(dir, ['commit', '-q', '-m', 'init']);
}

async function writeCost(scratch: string, rounds: number): Promise<string[]> {
  const repo = join(scratch, 'write-repo');
  await makeRepo(repo, 1000);
  const bare = join(scratch, 'write-store.git');
  await git(scratch, ['init', '-q', '--bare', bare]);
  const plain = await createSandbox({ source: repo, baseDir: join(scratch, 'boxes') });
  const shared = await createSandbox({ source: repo, baseDir: join(scratch, 'boxes') });
  const replica = new ThreadReplica({ remote: bare, actor: 'bench', threadId: 'write' });
  try {
    await replica.attach(shared);
    await replica.flush();
    const samples = { none: [] as number[], shared: [] as number[], hot: [] as number[] };
    let counter = 0;
    const cycle = async (sandbox: LocalSandbox, flush: boolean): Promise<number> => {
      counter += 1;
      const start = performance.now();
      await writeFile(join(sandbox.root, 'd0', `w${counter % 20}.txt`), `write ${counter}\n`);
      await sandbox.snapshot(`write ${counter}`);
      const hot = performance.now() - start;
      if (flush) await replica.flush();
      if (flush) samples.hot.push(hot);
      return performance.now() - start;
    };
    for (let index = 0; index < 5; index++) {
      await cycle(plain, false);
      await cycle(shared, true);
    }
    for (let round = 0; round < rounds; round++) {
      if (round % 2 === 0) {
        samples.none.push(await cycle(plain, false));
        samples.shared.push(await cycle(shared, true));
      } else {
        samples.shared.push(await cycle(shared, true));
        samples.none.push(await cycle(plain, false));
      }
    }
    const none = median(samples.none);
    const withStore = median(samples.shared);
    const hot = median(samples.hot);
    return [
      `Tracked write (1,000-file sandbox, median of ${rounds}):`,
      `  write + snapshot, no store               ${none.toFixed(1).padStart(7)} ms`,
      `  write + snapshot (tool call returns)     ${hot.toFixed(1).padStart(7)} ms   with a store (x${(hot / none).toFixed(2)})`,
      `  write + snapshot + push (checkpoint may) ${withStore.toFixed(1).padStart(7)} ms   x${(withStore / none).toFixed(2)}, +${(withStore - none).toFixed(1)} ms per write`,
    ];
  } finally {
    await plain.close();
    await shared.close();
  }
}

async function materialise(scratch: string, fileCount: number, rounds: number): Promise<string[]> {
  const repo = join(scratch, `repo-${fileCount}`);
  await makeRepo(repo, fileCount);
  const bare = join(scratch, `store-${fileCount}.git`);
  await git(scratch, ['init', '-q', '--bare', bare]);
  // Worker 1 runs the thread: base pushed, ten files changed over five snapshots.
  const threadId = `t${fileCount}`;
  const first = await createSandbox({ source: repo, baseDir: join(scratch, 'boxes') });
  const writer = new ThreadReplica({ remote: bare, actor: 'bench', threadId });
  await writer.attach(first);
  for (let step = 0; step < 5; step++) {
    await writeFile(join(first.root, 'd0', `f${step}.txt`), `changed ${step}\n`);
    await writeFile(join(first.root, `new${step}.txt`), `new ${step}\n`);
    await first.snapshot(`step ${step}`);
  }
  await writer.flush();
  const head = first.head;
  const namespace = writer.namespace;
  await first.close();
  const ours: number[] = [];
  const plain: number[] = [];
  const runOurs = async (round: number): Promise<void> => {
    const dir = join(scratch, `fresh-${fileCount}-${round}`);
    let sandbox: LocalSandbox | undefined;
    ours.push(
      await time(async () => {
        const replica = new ThreadReplica({ remote: bare, actor: 'bench', threadId });
        sandbox = await createSandbox({
          source: repo,
          dir,
          seed: (runDir, signal) => replica.fetchInto(runDir, signal),
        });
        // What opening the thread does: the checkpoint's snapshot, when not the one checked out.
        if (sandbox.head !== head) await sandbox.restore(head);
      }),
    );
    await sandbox!.close();
  };
  const runPlain = async (round: number): Promise<void> => {
    const dir = join(scratch, `plain-${fileCount}-${round}`);
    plain.push(
      await time(async () => {
        await git(scratch, ['init', '-q', dir]);
        await git(dir, ['fetch', '-q', '--no-tags', bare, `+${namespace}/*:refs/shared/*`]);
        await git(dir, ['checkout', '-q', '--detach', head]);
      }),
    );
    rmSync(dir, { recursive: true, force: true });
  };
  for (let round = 0; round <= rounds; round++) {
    if (round % 2 === 0) {
      await runOurs(round);
      await runPlain(round);
    } else {
      await runPlain(round);
      await runOurs(round);
    }
    if (round === 0) {
      ours.length = 0;
      plain.length = 0;
    }
  }
  const o = median(ours);
  const p = median(plain);
  return [
    `Materialise a thread on a fresh worker, ${fileCount.toLocaleString('en-US')} files (median of ${rounds}):`,
    `  sandbox from the store ${o.toFixed(0).padStart(6)} ms   git init + fetch + checkout ${p.toFixed(0).padStart(6)} ms   x${(o / p).toFixed(2)} (goal <= 1.5)`,
  ];
}

const counts = process.argv
  .slice(2)
  .map(Number)
  .filter((count) => count > 0);
const scratch = mkdtempSync(join(tmpdir(), 'bench-shared-'));
try {
  const lines: string[] = ['Shared snapshot store (local bare repository)'];
  lines.push(...(await writeCost(scratch, benchRounds(31, 3))));
  for (const count of counts.length > 0 ? counts : [1000, 10_000])
    lines.push(...(await materialise(scratch, count, benchRounds(count >= 10_000 ? 3 : 7))));
  console.log(lines.join('\n'));
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
