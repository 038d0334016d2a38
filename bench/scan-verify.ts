/**
 * What the full scan's no-follow check costs (issue 35, item 5): npx tsx bench/scan-verify.ts
 * [files] [rounds].
 *
 * A sandbox of `files` small files takes full-scan snapshots (AGENTS_SNAPSHOT_SCAN=full) after
 * `changed` files were rewritten (10, then every file: the worst case, a tree that is all new).
 * Per round: the snapshot as shipped (add -A, the check, commit), and the check alone on the
 * same change list (verifyScan, the file cache as warm as the snapshot had it). Medians in ms;
 * "without" is the snapshot minus the check.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { createSandbox } from '../src/sandbox/git/local-sandbox.js';
import { verifyScan } from '../src/sandbox/git/scan-verify.js';
import { parseRawTreeDiff } from '../src/sandbox/raw-tree-diff.js';

const exec = promisify(execFile);
const files = Number(process.argv[2] ?? 10_000);
const rounds = Number(process.argv[3] ?? 5);
process.env['AGENTS_SNAPSHOT_SCAN'] = 'full';

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

const scratch = mkdtempSync(join(tmpdir(), 'bench-scan-verify-'));
try {
  const repo = join(scratch, 'repo');
  mkdirSync(repo);
  await exec('git', ['init', '-q', repo]);
  const path = (index: number) => join(`d${index % 50}`, `f${index}.txt`);
  for (let index = 0; index < 50; index++) mkdirSync(join(repo, `d${index}`));
  for (let index = 0; index < files; index++) writeFileSync(join(repo, path(index)), `${index}\n`);
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
    'b',
  ]);
  mkdirSync(join(scratch, 'sandboxes'));
  const sandbox = await createSandbox({ source: repo, baseDir: join(scratch, 'sandboxes') });
  await sandbox.snapshot('first');
  const gitDir = join(sandbox.runDir, 'git');
  console.log(`${files} files, ${rounds} rounds, full scans; medians in ms`);
  console.log('| changed | snapshot (with check) | check alone | without | ratio |');
  console.log('|---:|---:|---:|---:|---:|');
  for (const changed of [0, 10, files]) {
    const whole: number[] = [];
    const check: number[] = [];
    for (let round = 0; round < rounds; round++) {
      for (let index = 0; index < changed; index++) {
        writeFileSync(join(sandbox.root, path(index)), `${index} round ${round}\n`);
      }
      const start = performance.now();
      const snapshot = await sandbox.snapshot(`round ${round}`);
      whole.push(performance.now() - start);
      const raw = parseRawTreeDiff(
        (
          await exec(
            'git',
            [
              `--git-dir=${gitDir}`,
              'diff-tree',
              '-r',
              '-z',
              '--raw',
              '--no-renames',
              snapshot.parent,
              snapshot.sha,
            ],
            { maxBuffer: 64 * 1024 * 1024 },
          )
        ).stdout,
      );
      const checkStart = performance.now();
      const { revert } = await verifyScan(sandbox.root, raw);
      check.push(performance.now() - checkStart);
      if (revert.length > 0) throw new Error(`check reverted ${revert.length} unchanged paths`);
    }
    const w = median(whole);
    const c = median(check);
    console.log(
      `| ${changed} | ${w.toFixed(1)} | ${c.toFixed(1)} | ${(w - c).toFixed(1)} | ${(w / (w - c)).toFixed(2)} |`,
    );
  }
  await sandbox.close();
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
