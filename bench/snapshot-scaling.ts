/**
 * Snapshot scaling (issue 29): what one write call's snapshot costs as the repo grows.
 *
 *   npx tsx bench/snapshot-scaling.ts [fileCounts...]      # default 1000 10000 100000
 *
 * For each repo size (files in folders of 100) and 1 and 10 changed files (each in its own
 * folder), three contenders in the same rounds, interleaved (alternating which goes first):
 * - ours: `sandbox.snapshot()` (whatever path it takes: watched or full scan);
 * - bare: `git add -A` + `git write-tree` with a persistent private index on a twin worktree
 *   (what a snapshot cannot avoid when it scans);
 * - lower bound: `git hash-object -w` of the changed files, then `ls-tree` + `mktree` per changed
 *   folder and the root (index-free, one spawn per step: the lower bound).
 * Then restore rounds (ours: `sandbox.restore()` to the snapshot before the change; bare: `add -A`
 * + `write-tree` + `read-tree -u --reset`).
 * Medians in ms; ratios ours / bare. Prints markdown tables (bench/run.ts quotes them).
 */
import { execFile } from 'node:child_process';
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, loadavg } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { benchRounds, median } from './harness.js';
import { createSandbox } from '../src/sandbox/git/local-sandbox.js';

const env = {
  PATH: process.env['PATH'] ?? '/usr/bin:/bin',
  HOME: process.env['HOME'] ?? '/tmp',
  LC_ALL: 'C',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_AUTHOR_NAME: 'bench',
  GIT_AUTHOR_EMAIL: 'bench@localhost',
  GIT_COMMITTER_NAME: 'bench',
  GIT_COMMITTER_EMAIL: 'bench@localhost',
};

function git(
  cwd: string,
  args: string[],
  extra: Record<string, string> = {},
  input?: string,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      'git',
      args,
      { cwd, env: { ...env, ...extra }, maxBuffer: 256 * 1024 * 1024 },
      (error, stdout) => (error === null ? resolve(stdout) : reject(new Error(error.message))),
    );
    if (input !== undefined) child.stdin?.end(input);
  });
}

const PER_DIR = 100;

function makeRepo(dir: string, files: number): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'README.md'), 'bench\n');
  for (let folder = 0; folder * PER_DIR < files; folder++) {
    mkdirSync(join(dir, `d${folder}`));
    for (let index = 0; index < PER_DIR && folder * PER_DIR + index < files; index++)
      writeFileSync(join(dir, `d${folder}`, `f${index}.txt`), `file ${folder}/${index}\n`);
  }
}

async function time(work: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await work();
  return performance.now() - started;
}

/** The lower bound: hash the changed files, rewrite each changed folder's tree, then the root. */
async function lowerBound(tree: string, cwd: string, paths: readonly string[]): Promise<string> {
  const shas = (await git(cwd, ['hash-object', '-w', '--', ...paths])).trim().split('\n');
  const byDir = new Map<string, Map<string, string>>();
  paths.forEach((path, index) => {
    const slash = path.lastIndexOf('/');
    const dir = path.slice(0, slash);
    if (!byDir.has(dir)) byDir.set(dir, new Map());
    byDir.get(dir)!.set(path.slice(slash + 1), shas[index]!);
  });
  const rewrite = async (listing: string, changes: Map<string, string>, type: string) =>
    (
      await git(
        cwd,
        ['mktree'],
        {},
        listing
          .split('\n')
          .filter((line) => line !== '')
          .map((line) => {
            const [meta = '', name = ''] = line.split('\t');
            const sha = changes.get(name);
            return sha === undefined ? line : `${meta.split(' ')[0]} ${type} ${sha}\t${name}`;
          })
          .join('\n') + '\n',
      )
    ).trim();
  const newDirs = new Map<string, string>();
  for (const [dir, changes] of byDir)
    newDirs.set(dir, await rewrite(await git(cwd, ['ls-tree', `${tree}:${dir}`]), changes, 'blob'));
  return rewrite(await git(cwd, ['ls-tree', tree]), newDirs, 'tree');
}

interface Row {
  files: number;
  changed: number;
  rounds: number;
  ours: number;
  bare: number;
  lower: number;
  paths: string;
}

interface RestoreRow {
  files: number;
  changed: number;
  rounds: number;
  ours: number;
  bare: number;
  paths: string;
}
const restoreRows: RestoreRow[] = [];

async function benchSize(files: number): Promise<Row[]> {
  const scratch = mkdtempSync(join(tmpdir(), 'bench-scaling-'));
  try {
    const repo = join(scratch, 'repo');
    makeRepo(repo, files);
    await git(repo, ['init', '-q', '-b', 'main']);
    await git(repo, ['add', '-A']);
    await git(repo, ['commit', '-q', '-m', 'base']);
    const base = (await git(repo, ['rev-parse', 'HEAD'])).trim();
    const sandbox = await createSandbox({ source: repo, baseDir: scratch, id: 'scaling' });
    // The bare twin: a detached worktree with its own persistent private index.
    const twin = join(scratch, 'twin');
    await git(repo, ['worktree', 'add', '-q', '--detach', twin, base]);
    const bareEnv = { GIT_INDEX_FILE: join(scratch, 'twin-index') };
    await git(twin, ['read-tree', base], bareEnv);
    const bare = async () => {
      await git(twin, ['add', '-A'], bareEnv);
      return (await git(twin, ['write-tree'], bareEnv)).trim();
    };
    let lowerTree = (await git(twin, ['rev-parse', `${base}^{tree}`])).trim();
    // Warm every side once (the first add -A refreshes stat data).
    await bare();
    await sandbox.snapshot('warm');
    const rows: Row[] = [];
    const folders = Math.ceil(files / PER_DIR);
    let round = 0;
    for (const changed of [1, 10]) {
      const rounds = benchRounds(files >= 100_000 ? 5 : files >= 10_000 ? 7 : 9, 2);
      const samples = { ours: [] as number[], bare: [] as number[], lower: [] as number[] };
      const taken = new Map<string, number>();
      for (let r = 0; r < rounds; r++, round++) {
        const paths = Array.from(
          { length: changed },
          (_, index) => `d${(round * 10 + index) % folders}/f${round % PER_DIR}.txt`,
        );
        for (const path of paths) {
          appendFileSync(join(sandbox.root, path), `round ${round}\n`);
          appendFileSync(join(twin, path), `round ${round}\n`);
        }
        const contenders: Array<[keyof typeof samples, () => Promise<unknown>]> = [
          [
            'ours',
            async () => {
              const snapshot = await sandbox.snapshot(`round ${round}`);
              const scan = (snapshot as { scan?: string }).scan ?? 'full';
              taken.set(scan, (taken.get(scan) ?? 0) + 1);
            },
          ],
          ['bare', bare],
          ['lower', async () => (lowerTree = await lowerBound(lowerTree, twin, paths))],
        ];
        if (r % 2 === 1) contenders.reverse();
        for (const [name, work] of contenders) samples[name].push(await time(work));
      }
      rows.push({
        files,
        changed,
        rounds,
        ours: median(samples.ours),
        bare: median(samples.bare),
        lower: median(samples.lower),
        paths: [...taken].map(([scan, count]) => `${scan} ${count}`).join(', '),
      });
    }
    // Restore: change files, then put the tree back to the snapshot before the change. Ours
    // takes its safety snapshot and writes what differs; bare: `add -A` + `write-tree` (the
    // same safety snapshot: without it `read-tree -u` would keep the edits) + `read-tree -u
    // --reset` of the earlier tree on the persistent index.
    let bareTree = await bare();
    for (const changed of [1, 10]) {
      const rounds = benchRounds(files >= 100_000 ? 5 : files >= 10_000 ? 7 : 9, 2);
      const samples = { ours: [] as number[], bare: [] as number[] };
      const taken = new Map<string, number>();
      for (let r = 0; r < rounds; r++, round++) {
        const oursBefore = sandbox.head;
        const bareBefore = bareTree;
        const paths = Array.from(
          { length: changed },
          (_, index) => `d${(round * 10 + index) % folders}/f${round % PER_DIR}.txt`,
        );
        for (const path of paths) {
          appendFileSync(join(sandbox.root, path), `restore round ${round}\n`);
          appendFileSync(join(twin, path), `restore round ${round}\n`);
        }
        const contenders: Array<[keyof typeof samples, () => Promise<unknown>]> = [
          [
            'ours',
            async () => {
              const restored = await sandbox.restore(oursBefore);
              const writes = (restored as { writes?: string }).writes ?? 'full';
              taken.set(writes, (taken.get(writes) ?? 0) + 1);
            },
          ],
          [
            'bare',
            async () => {
              await bare();
              await git(twin, ['read-tree', '-u', '--reset', bareBefore], bareEnv);
              bareTree = bareBefore;
            },
          ],
        ];
        if (r % 2 === 1) contenders.reverse();
        for (const [name, work] of contenders) samples[name].push(await time(work));
      }
      restoreRows.push({
        files,
        changed,
        rounds,
        ours: median(samples.ours),
        bare: median(samples.bare),
        paths: [...taken].map(([how, count]) => `${how} ${count}`).join(', '),
      });
    }
    await sandbox.close();
    await git(repo, ['worktree', 'remove', '--force', twin]);
    return rows;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

const counts = process.argv
  .slice(2)
  .map(Number)
  .filter((count) => count > 0);
const loadBefore = loadavg();
const rows: Row[] = [];
for (const count of counts.length > 0 ? counts : [1000, 10_000, 100_000])
  rows.push(...(await benchSize(count)));
const ms = (value: number) => value.toFixed(1);
console.log(
  [
    'One write call’s snapshot after changing 1 or 10 files (each in its own folder of 100), medians',
    'in ms, rounds interleaved. bare: `git add -A` + `write-tree` on a persistent private index;',
    'lower bound: `hash-object -w` + `ls-tree`/`mktree` per changed folder and the root (spawns).',
    'Goals (issue 29): ours ≤ 15 ms at 100,000 files with ≤ 10 changed; ≤ 0.5× bare at 1,000.',
    `Load average before: ${loadBefore.map((value) => value.toFixed(1)).join(' / ')}, after: ${loadavg()
      .map((value) => value.toFixed(1))
      .join(' / ')}.`,
    '',
    '| files | changed | rounds | ours | bare add -A + write-tree | lower bound | ours / bare | path taken (ours) |',
    '| ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |',
    ...rows.map(
      (row) =>
        `| ${row.files.toLocaleString('en-US')} | ${row.changed} | ${row.rounds} | ${ms(row.ours)} | ${ms(row.bare)} | ${ms(row.lower)} | ${(row.ours / row.bare).toFixed(2)}× | ${row.paths} |`,
    ),
    '',
    'Restore to the snapshot before 1 or 10 changed files (ours: `sandbox.restore()`, its safety',
    'snapshot included; bare: `add -A` + `write-tree` + `read-tree -u --reset` on a persistent index).',
    '',
    '| files | changed | rounds | ours | bare | ours / bare | writes (ours) |',
    '| ---: | ---: | ---: | ---: | ---: | ---: | --- |',
    ...restoreRows.map(
      (row) =>
        `| ${row.files.toLocaleString('en-US')} | ${row.changed} | ${row.rounds} | ${ms(row.ours)} | ${ms(row.bare)} | ${(row.ours / row.bare).toFixed(2)}× | ${row.paths} |`,
    ),
  ].join('\n'),
);
