/**
 * Snapshot tail latency (issue 37): many watched snapshot rounds of one changed file on a large
 * tree, p50 / p95 / max, and for each slow round (over 2× the median) what was going on: the path
 * the snapshot took, whether the background roll-up of the store's packs was running (a
 * `git repack` / `pack-objects` of this sandbox's store alive at the round's start or end), the
 * pack count, and the load average.
 *
 *   npx tsx bench/snapshot-tail.ts [files] [rounds]      # default 100000 60
 */
import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { median, percentile } from './harness.js';
import { createSandbox } from '../src/sandbox/git/local-sandbox.js';

const files = Number(process.argv[2] ?? 100_000);
const rounds = Number(process.argv[3] ?? 60);
const PER_DIR = 100;

const gitEnv = {
  ...process.env,
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_AUTHOR_NAME: 'bench',
  GIT_AUTHOR_EMAIL: 'bench@localhost',
  GIT_COMMITTER_NAME: 'bench',
  GIT_COMMITTER_EMAIL: 'bench@localhost',
};

function makeRepo(dir: string): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'README.md'), 'bench\n');
  for (let folder = 0; folder * PER_DIR < files; folder++) {
    mkdirSync(join(dir, `d${folder}`));
    for (let index = 0; index < PER_DIR && folder * PER_DIR + index < files; index++)
      writeFileSync(join(dir, `d${folder}`, `f${index}.txt`), `file ${index}\n`);
  }
  const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, env: gitEnv });
  git('init', '-q', '-b', 'main');
  git('add', '-A');
  git('commit', '-q', '-m', 'base');
}

/** Pack files of every snapshot store under `scratch` (the sandbox's, not the source repo's). */
function countPacks(dir: string): number {
  let count = 0;
  const walk = (at: string, depth: number): void => {
    if (depth > 6) return;
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      if (!entry.isDirectory()) continue;
      const next = join(at, entry.name);
      if (entry.name === 'pack' && at.endsWith('objects')) {
        count += readdirSync(next).filter((name) => name.endsWith('.pack')).length;
      } else if (entry.name !== 'repo' && !/^d\d+$/.test(entry.name)) walk(next, depth + 1);
    }
  };
  walk(dir, 0);
  return count;
}

/** True while a git repack / pack-objects whose command line names `dir` is alive. */
function rollUpRunning(dir: string): boolean {
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
      if (/\bgit\b/.test(cmd) && /repack|pack-objects/.test(cmd) && cmd.includes(dir)) return true;
      const cwd = /repack|pack-objects/.test(cmd)
        ? execFileSync('readlink', [`/proc/${pid}/cwd`])
        : '';
      if (cwd.toString().startsWith(dir)) return true;
    } catch {
      // The process ended meanwhile.
    }
  }
  return false;
}

interface Round {
  ms: number;
  scan: string;
  rollUp: boolean;
  packs: number;
  load: number;
}

const scratch = mkdtempSync(join(tmpdir(), 'bench-tail-'));
try {
  const repo = join(scratch, 'repo');
  makeRepo(repo);
  const sandbox = await createSandbox({ source: repo, baseDir: scratch, id: 'tail' });
  await sandbox.snapshot('warm');
  const samples: Round[] = [];
  const folders = Math.ceil(files / PER_DIR);
  for (let round = 0; round < rounds; round++) {
    appendFileSync(
      join(sandbox.root, `d${(round * 7) % folders}/f${round % PER_DIR}.txt`),
      `round ${round}\n`,
    );
    const before = rollUpRunning(scratch);
    const started = performance.now();
    const snapshot = await sandbox.snapshot(`round ${round}`);
    const ms = performance.now() - started;
    samples.push({
      ms,
      scan: (snapshot as { scan?: string }).scan ?? 'full',
      rollUp: before || rollUpRunning(scratch),
      packs: countPacks(scratch),
      load: loadavg()[0]!,
    });
  }
  await sandbox.close();
  const times = samples.map((sample) => sample.ms);
  const p50 = median(times);
  const slow = samples.map((sample, index) => ({ ...sample, index })).filter((s) => s.ms > 2 * p50);
  const f1 = (value: number) => value.toFixed(1);
  const lines = [
    `${rounds} watched snapshot rounds of one changed file on ${files.toLocaleString('en-US')} files;`,
    `load average at the end ${loadavg()
      .map((value) => value.toFixed(1))
      .join(' / ')}.`,
    '',
    '| files | rounds | p50 ms | p95 ms | max ms | rounds over 2× p50 | of those with a roll-up running |',
    '| ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    `| ${files.toLocaleString('en-US')} | ${rounds} | ${f1(p50)} | ${f1(percentile(times, 95))} | ${f1(Math.max(...times))} | ${slow.length} | ${slow.filter((s) => s.rollUp).length} |`,
    '',
    'Slow rounds:',
    '',
    '| round | ms | path | roll-up running | packs after | load (1 min) |',
    '| ---: | ---: | --- | --- | ---: | ---: |',
    ...slow.map(
      (s) =>
        `| ${s.index} | ${f1(s.ms)} | ${s.scan} | ${s.rollUp ? 'yes' : 'no'} | ${s.packs} | ${f1(s.load)} |`,
    ),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
