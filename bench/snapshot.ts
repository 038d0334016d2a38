/**
 * Snapshot benchmark (npx tsx bench/snapshot.ts [fileCounts...] [--rewrite-only]).
 *
 * For repos of 1,000 and 10,000 files: snapshot after a one-file change, change listing, and
 * restore, each as a ratio to the bare git plumbing commands (execFile) doing the same work in
 * the same process on a twin worktree, interleaved round by round (alternating which goes first).
 * Plus the added cost of path rewriting on a read-only tool call (no git work at all).
 */
import { execFile } from 'node:child_process';
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  rmSync,
  writeFileSync,
  appendFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { performance } from 'node:perf_hooks';
import { createPathRewriteMiddleware } from '../src/pipeline/path-rewrite.js';
import { composeMiddleware, type ToolCallRequest } from '../src/core/tool-middleware.js';
import type { ToolDescriptor, ToolResult } from '../src/core/tool-descriptor.js';
import { benchRounds } from './harness.js';
import { createSandbox } from '../src/sandbox/git/local-sandbox.js';

const exec = promisify(execFile);
const identity = {
  GIT_AUTHOR_NAME: 'bench',
  GIT_AUTHOR_EMAIL: 'bench@localhost',
  GIT_COMMITTER_NAME: 'bench',
  GIT_COMMITTER_EMAIL: 'bench@localhost',
};
const baseEnv = {
  PATH: process.env['PATH'] ?? '/usr/bin:/bin',
  HOME: process.env['HOME'] ?? '/tmp',
  LC_ALL: 'C',
  ...identity,
};

async function git(
  cwd: string,
  args: string[],
  env: Record<string, string> = baseEnv,
  input?: string,
): Promise<string> {
  if (input !== undefined) {
    return new Promise((resolve, reject) => {
      const child = execFile('git', args, { cwd, env }, (error: Error | null, stdout: string) => {
        if (error) reject(error);
        else resolve(stdout);
      });
      child.stdin?.end(input);
    });
  }
  return (await exec('git', args, { cwd, env, maxBuffer: 256 * 1024 * 1024 })).stdout;
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

async function benchRepo(fileCount: number, rounds: number): Promise<void> {
  const scratch = mkdtempSync(join(tmpdir(), 'bench-snapshot-'));
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
  await git(repo, ['commit', '-q', '-m', 'base']);
  const base = (await git(repo, ['rev-parse', 'HEAD'])).trim();

  const sandbox = await createSandbox({ source: repo, baseDir: scratch, id: 'bench' });
  // The bare twin: another detached worktree with its own persistent private index.
  const bare = join(scratch, 'bare');
  await git(repo, ['worktree', 'add', '-q', '--detach', bare, base]);
  const bareIndex = join(scratch, 'bare-index');
  copyFileSync(
    (await git(bare, ['rev-parse', '--git-path', 'index'])).trim().replace(/^(?!\/)/, `${bare}/`),
    bareIndex,
  );
  const bareEnv = { ...baseEnv, GIT_INDEX_FILE: bareIndex };
  let bareHead = base;
  const bareSnapshot = async (): Promise<string> => {
    await git(bare, ['add', '-A'], bareEnv);
    const tree = (await git(bare, ['write-tree'], bareEnv)).trim();
    const sha = (
      await git(bare, ['commit-tree', tree, '-p', bareHead, '-m', 'bare'], bareEnv)
    ).trim();
    await git(bare, ['update-ref', `refs/bare/${sha}`, sha], bareEnv);
    await git(
      bare,
      ['diff-tree', '-r', '-z', '--name-status', '--no-renames', bareHead, sha],
      bareEnv,
    );
    bareHead = sha;
    return sha;
  };
  const bareRestore = async (target: string): Promise<void> => {
    await bareSnapshot();
    await git(bare, ['read-tree', '-u', '--reset', target], bareEnv);
    await git(bare, ['write-tree'], bareEnv);
    bareHead = target;
  };

  const results = {
    snapshot: { ours: [] as number[], bare: [] as number[] },
    diff: { ours: [] as number[], bare: [] as number[] },
    restore: { ours: [] as number[], bare: [] as number[] },
  };
  // Warm both sides once (first add -A after checkout refreshes stat data).
  await sandbox.snapshot('warm');
  await bareSnapshot();
  for (let round = 0; round < rounds; round++) {
    const target = `d${round % dirs}/f0.txt`;
    appendFileSync(join(sandbox.root, target), `round ${round}\n`);
    appendFileSync(join(bare, target), `round ${round}\n`);
    const prevOurs = sandbox.head;
    const prevBare = bareHead;
    const pairs: Array<[keyof typeof results, () => Promise<unknown>, () => Promise<unknown>]> = [
      ['snapshot', () => sandbox.snapshot(`round ${round}`), () => bareSnapshot()],
    ];
    for (const [name, ours, bareWork] of pairs) {
      if (round % 2 === 0) {
        results[name].ours.push(await time(ours));
        results[name].bare.push(await time(bareWork));
      } else {
        results[name].bare.push(await time(bareWork));
        results[name].ours.push(await time(ours));
      }
    }
    const oursHead = sandbox.head;
    // The sandbox store holds its own base commit (the source commit is not in it).
    const diffOurs = () => sandbox.diff(sandbox.base, oursHead);
    const diffBare = () =>
      git(
        bare,
        ['diff-tree', '-r', '-z', '--name-status', '--no-renames', base, bareHead],
        bareEnv,
      );
    const restoreOurs = () => sandbox.restore(prevOurs);
    const restoreBare = () => bareRestore(prevBare);
    for (const [name, ours, bareWork] of [
      ['diff', diffOurs, diffBare],
      ['restore', restoreOurs, restoreBare],
    ] as const) {
      if (round % 2 === 0) {
        results[name].ours.push(await time(ours));
        results[name].bare.push(await time(bareWork));
      } else {
        results[name].bare.push(await time(bareWork));
        results[name].ours.push(await time(ours));
      }
    }
  }
  console.log(
    `\n${fileCount} files, ${rounds} interleaved rounds (median ms; ratio = ours / bare plumbing)`,
  );
  for (const [name, { ours, bare: bareTimes }] of Object.entries(results)) {
    const o = median(ours);
    const b = median(bareTimes);
    console.log(
      `  ${name.padEnd(9)} ours ${o.toFixed(1).padStart(7)}  bare ${b.toFixed(1).padStart(7)}  ratio ${(o / b).toFixed(2)}`,
    );
  }
  await sandbox.close();
  await git(repo, ['worktree', 'remove', '--force', bare]);
  rmSync(scratch, { recursive: true, force: true });
}

async function benchRewrite(): Promise<void> {
  const scratch = mkdtempSync(join(tmpdir(), 'bench-rewrite-'));
  writeFileSync(join(scratch, 'README.md'), 'x');
  const sandbox = await createSandbox({ source: scratch, baseDir: tmpdir(), id: 'rewrite' });
  const verdict = { value: true, source: 'default' as const, reason: 'bench' };
  const descriptor = (pathArguments: string[]): ToolDescriptor => ({
    id: 'mcp:fs/read_text_file',
    name: 'read_text_file',
    originalName: 'read_text_file',
    source: 'mcp',
    description: '',
    inputSchema: { type: 'object' },
    // Read-only (readOnly true, writes false): a write-class call would drop the symlink-check
    // cache at its start and end and walk the path again, which is not what this row measures.
    capabilities: {
      readOnly: verdict,
      writes: { ...verdict, value: false },
      destructive: { ...verdict, value: false },
      openWorld: verdict,
      disagreements: [],
    },
    pathArguments,
    fingerprint: 'x',
  });
  const result: ToolResult = {
    content: [{ type: 'text', text: 'line one of a README file\n'.repeat(40) }],
  };
  const inner = async (_request: ToolCallRequest): Promise<ToolResult> => result;
  const wrapped = composeMiddleware([createPathRewriteMiddleware(sandbox.paths)], inner);
  const cases: Array<[string, ToolCallRequest]> = [
    ['no path arguments', { descriptor: descriptor([]), args: { query: 'x' }, context: {} }],
    [
      'one path argument',
      { descriptor: descriptor(['path']), args: { path: 'src/deep/nested/file.ts' }, context: {} },
    ],
  ];
  const iterations = 20_000;
  console.log(
    `\npath rewriting on a read-only call (${iterations} calls, no git work; µs per call)`,
  );
  for (const [label, request] of cases) {
    for (let warm = 0; warm < 5000; warm++) {
      await inner(request);
      await wrapped(request);
    }
    // Alternate the two loops a few times and keep the best of each (least disturbed by others).
    let bare = Infinity;
    let ours = Infinity;
    for (let repeat = 0; repeat < 5; repeat++) {
      let start = performance.now();
      for (let index = 0; index < iterations; index++) await inner(request);
      bare = Math.min(bare, ((performance.now() - start) * 1000) / iterations);
      start = performance.now();
      for (let index = 0; index < iterations; index++) await wrapped(request);
      ours = Math.min(ours, ((performance.now() - start) * 1000) / iterations);
    }
    console.log(
      `  ${label.padEnd(18)} handler ${bare.toFixed(2)}  with rewrite ${ours.toFixed(2)}  added ${(ours - bare).toFixed(2)}`,
    );
  }
  await sandbox.close();
  rmSync(scratch, { recursive: true, force: true });
}

// `--rewrite-only`: just the path-rewriting figures, without building any repo (seconds, not
// minutes; for profiling the read-only hot path).
const rewriteOnly = process.argv.includes('--rewrite-only');
const counts = process.argv
  .slice(2)
  .map(Number)
  .filter((count) => count > 0);
if (!rewriteOnly) {
  for (const count of counts.length > 0 ? counts : [1000, 10000])
    await benchRepo(count, benchRounds(count >= 10000 ? 7 : 11, 3));
}
await benchRewrite();
