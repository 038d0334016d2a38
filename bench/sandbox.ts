/**
 * Sandbox creation and removal benchmark (npx tsx bench/sandbox.ts [fileCounts...]).
 *
 * For repos of 1,000 and 10,000 small files: `createSandbox` (snapshot store with the base
 * tree's objects copied in, checkout, tool repository) and `close()` (removal), against plain
 * git doing the nearest thing in the same process, interleaved round by round: a linked
 * worktree (`git worktree add --detach` / `git worktree remove`, the first design) and a shared
 * clone with checkout (`git clone --shared` / `rm -rf`). Medians and ratios.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { benchRounds } from './harness.js';
import { createSandbox } from '../src/sandbox/git/local-sandbox.js';

const exec = promisify(execFile);
const env = {
  PATH: process.env['PATH'] ?? '/usr/bin:/bin',
  HOME: process.env['HOME'] ?? '/tmp',
  LC_ALL: 'C',
  GIT_AUTHOR_NAME: 'bench',
  GIT_AUTHOR_EMAIL: 'bench@localhost',
  GIT_COMMITTER_NAME: 'bench',
  GIT_COMMITTER_EMAIL: 'bench@localhost',
};

async function git(cwd: string, args: string[]): Promise<void> {
  await exec('git', args, { cwd, env, maxBuffer: 64 * 1024 * 1024 });
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

async function time(work: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await work();
  return performance.now() - start;
}

interface Row {
  create: number[];
  remove: number[];
}

async function benchRepo(fileCount: number, rounds: number): Promise<string[]> {
  const scratch = mkdtempSync(join(tmpdir(), 'bench-sandbox-'));
  try {
    const repo = join(scratch, 'repo');
    mkdirSync(repo);
    const dirs = Math.max(1, Math.round(fileCount / 100));
    for (let dir = 0; dir < dirs; dir++) {
      mkdirSync(join(repo, `d${dir}`));
      for (let file = 0; file < fileCount / dirs; file++)
        writeFileSync(join(repo, `d${dir}`, `f${file}.txt`), `file ${dir}/${file}\n`);
    }
    await git(repo, ['init', '-q', '-b', 'main']);
    await git(repo, ['add', '-A']);
    await git(repo, ['commit', '-q', '-m', 'init']);
    const baseDir = join(scratch, 'sandboxes');
    mkdirSync(baseDir);
    const rows: Record<'sandbox' | 'worktree' | 'clone', Row> = {
      sandbox: { create: [], remove: [] },
      worktree: { create: [], remove: [] },
      clone: { create: [], remove: [] },
    };
    const runners = {
      sandbox: async (round: number) => {
        let sandbox: Awaited<ReturnType<typeof createSandbox>> | undefined;
        rows.sandbox.create.push(
          await time(async () => {
            sandbox = await createSandbox({ source: repo, baseDir, id: `s${round}` });
          }),
        );
        rows.sandbox.remove.push(await time(() => sandbox!.close()));
      },
      worktree: async (round: number) => {
        const tree = join(scratch, `wt${round}`);
        rows.worktree.create.push(
          await time(() => git(repo, ['worktree', 'add', '-q', '--detach', tree, 'HEAD'])),
        );
        rows.worktree.remove.push(
          await time(() => git(repo, ['worktree', 'remove', '--force', tree])),
        );
      },
      clone: async (round: number) => {
        const tree = join(scratch, `clone${round}`);
        rows.clone.create.push(
          await time(() => git(scratch, ['clone', '-q', '--shared', repo, tree])),
        );
        rows.clone.remove.push(await time(() => rm(tree, { recursive: true, force: true })));
      },
    };
    const order = ['sandbox', 'worktree', 'clone'] as const;
    // One warm-up round, then `rounds` measured ones, rotating which goes first.
    for (let round = 0; round <= rounds; round++) {
      for (let index = 0; index < order.length; index++) {
        const name = order[(index + round) % order.length]!;
        await runners[name](round);
      }
      if (round === 0) {
        for (const row of Object.values(rows)) {
          row.create.length = 0;
          row.remove.length = 0;
        }
      }
    }
    const ms = (value: number) => `${value.toFixed(0).padStart(6)} ms`;
    const s = { create: median(rows.sandbox.create), remove: median(rows.sandbox.remove) };
    const w = { create: median(rows.worktree.create), remove: median(rows.worktree.remove) };
    const c = { create: median(rows.clone.create), remove: median(rows.clone.remove) };
    return [
      `${fileCount.toLocaleString('en-US')} files (median of ${rounds}):`,
      `  create  sandbox ${ms(s.create)}   git worktree add ${ms(w.create)} (x${(s.create / w.create).toFixed(2)})   git clone --shared ${ms(c.create)} (x${(s.create / c.create).toFixed(2)})`,
      `  remove  sandbox ${ms(s.remove)}   git worktree remove ${ms(w.remove)} (x${(s.remove / w.remove).toFixed(2)})   rm -rf clone ${ms(c.remove)} (x${(s.remove / c.remove).toFixed(2)})`,
    ];
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

const counts = process.argv
  .slice(2)
  .map(Number)
  .filter((count) => count > 0);
const lines: string[] = ['Sandbox creation and removal vs plain git (ratios: sandbox / git)'];
for (const count of counts.length > 0 ? counts : [1000, 10_000])
  lines.push(...(await benchRepo(count, benchRounds(count >= 10_000 ? 5 : 9))));
console.log(lines.join('\n'));
