/**
 * `npm run bench`: every benchmark of issue 9 in one process, then `bench/results.md`.
 *
 * Sections: per-call cost of each stack (payloads × transports), per-call cost by MCP revision
 * (2026-07-28 and 2025-11-25 against the raw SDK v2 client; ours on 2026 against
 * `@langchain/mcp-adapters` on 2025 through ToolNode), sandbox middleware (read-only
 * path rewrite, write + snapshot), discovery of 500 tools, heap after 10,000 calls, and the
 * lifecycle, snapshot and confinement figures of `bench/lifecycle.ts` / `bench/snapshot.ts` /
 * `bench/confinement.ts` (run as child processes when present; their stdout goes into the
 * report as is).
 *
 * Flags: `--quick` (a smoke run: fewer rounds and smaller repos; the per-call sections, cheap and
 * feeding goal rows, run in full), `--out FILE`, `--only
 * calls,revisions,middleware,discovery,memory,external` (an unknown name stops the run with the
 * valid ones).
 * Without `--out` a full run writes `bench/results.md` (committed) and a partial one (`--only`
 * leaving a section out) writes `bench/results.partial.md` (ignored by git), so a quick look at
 * one section never overwrites the full report.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, totalmem } from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { callsMarkdown, runCallScenarios } from './calls.js';
import { discoveryMarkdown, runDiscovery } from './discovery.js';
import {
  callGoalRows,
  discoveryGoalRows,
  goalLines,
  GOAL_ROW_PREFIX,
  printedGoalRows,
  readLastFigures,
  revisionGoalRows,
  writeLastFigures,
  type GoalRow,
} from './goals.js';
import { memoryMarkdown, runMemory } from './memory.js';
import { middlewareMarkdown, runMiddleware } from './middleware.js';
import { revisionsMarkdown, runRevisions } from './revisions.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.dirname(here);

const SECTIONS = ['calls', 'revisions', 'middleware', 'discovery', 'memory', 'external'] as const;
type Section = (typeof SECTIONS)[number];

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    out: { type: 'string' },
    only: { type: 'string' },
  },
});
const quick = values.quick === true;

/** The sections `--only` names (all when absent); exits with code 2 on an unknown or empty name. */
function selectedSections(list: string | undefined): Set<Section> {
  if (list === undefined) return new Set(SECTIONS);
  const names = list.split(',').map((name) => name.trim());
  const unknown = names.filter((name) => !(SECTIONS as readonly string[]).includes(name));
  if (unknown.length > 0) {
    process.stderr.write(
      `bench: unknown section${unknown.length === 1 ? '' : 's'} in --only: ` +
        `${unknown.map((name) => JSON.stringify(name)).join(', ')}. ` +
        `Valid sections: ${SECTIONS.join(', ')} (comma-separated, e.g. --only calls,memory).\n`,
    );
    process.exit(2);
  }
  return new Set(names as Section[]);
}
const only = selectedSections(values.only);
const complete = SECTIONS.every((name) => only.has(name));
// A partial report must never replace the committed full one unless asked to with --out.
const outFile = values.out ?? path.join(here, complete ? 'results.md' : 'results.partial.md');

const log = (line: string): void => {
  process.stderr.write(`${line}\n`);
};

function packageVersion(name: string): string {
  const candidates = [
    path.join(root, 'node_modules', name, 'package.json'),
    path.join(
      root,
      'node_modules',
      '@langchain',
      'langgraph-cli',
      'node_modules',
      name,
      'package.json',
    ),
  ];
  for (const file of candidates) {
    if (!existsSync(file)) continue;
    const manifest: unknown = JSON.parse(readFileSync(file, 'utf8'));
    if (typeof manifest === 'object' && manifest !== null && 'version' in manifest)
      return String(manifest.version);
  }
  return 'not installed';
}

function machineMarkdown(started: Date): string {
  const packages = [
    '@modelcontextprotocol/sdk',
    '@modelcontextprotocol/client',
    '@langchain/core',
    '@langchain/langgraph',
    '@langchain/mcp-adapters',
    'simple-git',
    'ajv',
    'zod',
  ];
  const cpuModel = cpus()[0]?.model ?? 'unknown';
  return [
    `- Date: ${started.toISOString()}${quick ? ' (quick run: fewer samples)' : ''}`,
    `- Machine: ${availableParallelism()} CPUs (${cpuModel}), ${(totalmem() / 2 ** 30).toFixed(1)} GiB RAM, ` +
      `load average at start ${loadavg()
        .map((value) => value.toFixed(2))
        .join(' / ')}`,
    `- Node ${process.version} (${process.platform} ${process.arch})`,
    `- Packages: ${packages.map((name) => `${name} ${packageVersion(name)}`).join(', ')}`,
  ].join('\n');
}

/** Runs one of the other engineers' bench scripts with tsx and returns its stdout. */
async function runExternal(
  file: string,
  args: readonly string[],
): Promise<{ ok: boolean; output: string; ms: number }> {
  const started = Date.now();
  return await new Promise((resolve) => {
    const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', file, ...args], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'inherit'],
      // BENCH_QUICK: fewer rounds (see benchRounds); BENCH_BUILT: dist/ is fresh, do not rebuild.
      env: { ...process.env, BENCH_BUILT: '1', ...(quick ? { BENCH_QUICK: '1' } : {}) },
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    // A stuck script must not hold the whole report hostage.
    // Long-run rows (1,000 calls, a 10,000-file repo) take minutes on a loaded machine.
    const timer = setTimeout(() => child.kill('SIGKILL'), 900_000);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({
        ok: code === 0,
        output:
          code === 0 ? output : `${output}\n(exited with ${signal ?? `code ${String(code)}`})`,
        ms: Date.now() - started,
      });
    });
  });
}

async function main(): Promise<void> {
  const started = new Date();
  const parts: string[] = [
    complete ? '# Benchmark results' : `# Benchmark results (partial: ${[...only].join(', ')})`,
    '',
    machineMarkdown(started),
    '',
  ];
  parts.push(
    'Generated by `npm run bench` (`bench/run.ts`). The machine is shared and noisy: compare',
    'stacks within one row (same run, interleaved rounds), not absolute figures across runs.',
    'Anchors from an earlier run on this kind of machine are in `shared/notes/perf-anchors.md`.',
    '',
  );
  const failures: string[] = [];
  const section = async (
    title: string,
    name: Section,
    run: () => Promise<string>,
  ): Promise<void> => {
    if (!only.has(name)) return;
    const sectionStart = Date.now();
    log(`== ${title}`);
    try {
      parts.push(`## ${title}`, '', await run(), '');
    } catch (error) {
      const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
      failures.push(`${title}: ${message}`);
      parts.push(`## ${title}`, '', '```', `failed: ${message}`, '```', '');
      log(`!! ${title} failed: ${message}`);
    }
    log(`== ${title}: ${((Date.now() - sectionStart) / 1000).toFixed(1)} s`);
  };

  const goalRows: GoalRow[] = [];
  await section('Per-call cost', 'calls', async () => {
    const results = await runCallScenarios(log);
    goalRows.push(...callGoalRows(results));
    return callsMarkdown(results);
  });
  await section('Per-call cost by MCP revision', 'revisions', async () => {
    const run = await runRevisions(log);
    goalRows.push(...revisionGoalRows(run));
    return revisionsMarkdown(run);
  });
  await section('Sandbox middleware', 'middleware', async () =>
    middlewareMarkdown(await runMiddleware(quick, log)),
  );
  await section('Discovery of 500 tools', 'discovery', async () => {
    const results = await runDiscovery(quick, log);
    goalRows.push(...discoveryGoalRows(results));
    return discoveryMarkdown(results);
  });
  await section('Memory after 10,000 calls', 'memory', async () =>
    memoryMarkdown(await runMemory(quick, log)),
  );
  // The long-run and start-up sections run the published binary (dist/): built once here, so
  // a clean clone regenerates every section. A quick run reuses an existing dist/.
  await section('Build (tsc -p tsconfig.build.json)', 'external', async () => {
    const main = path.join(root, 'dist', 'cli', 'main.js');
    if (quick && existsSync(main)) return '_Quick run: reused the existing `dist/`._';
    const started = Date.now();
    execFileSync(
      process.execPath,
      [path.join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'],
      {
        cwd: root,
        stdio: 'inherit',
      },
    );
    return `_Built \`dist/\` in ${((Date.now() - started) / 1000).toFixed(1)} s._`;
  });
  // Their own CLI arguments: lifecycle takes a cycle count, snapshot takes file counts. Quick
  // arguments are the smallest that still run every code path (a smoke run, not figures).
  for (const [title, file, args] of [
    ['Server lifecycle (bench/lifecycle.ts)', 'lifecycle.ts', [quick ? '3' : '200']],
    ['Sandbox snapshots (bench/snapshot.ts)', 'snapshot.ts', quick ? ['100'] : ['1000', '10000']],
    [
      'Snapshot tail latency at 100,000 files (bench/snapshot-tail.ts, issue 37)',
      'snapshot-tail.ts',
      quick ? ['2000', '20'] : ['100000', '80'],
    ],
    [
      'Snapshot scaling: 1,000 / 10,000 / 100,000 files (bench/snapshot-scaling.ts)',
      'snapshot-scaling.ts',
      quick ? ['200'] : [],
    ],
    [
      'Sandbox creation and removal (bench/sandbox.ts)',
      'sandbox.ts',
      quick ? ['100'] : ['1000', '10000'],
    ],
    ['Spawn cost of OS confinement (bench/confinement.ts)', 'confinement.ts', [quick ? '2' : '20']],
    [
      'Host gits under bubblewrap? (bench/host-git.ts, issue 23)',
      'host-git.ts',
      quick ? ['100', '2'] : ['1000', '15'],
    ],
    [
      'Network proxy overhead per request and per connection (bench/network-proxy.ts)',
      'network-proxy.ts',
      [quick ? '50' : '300'],
    ],
    [
      'Shared snapshot store: push per tracked write, materialise a thread (bench/shared-store.ts)',
      'shared-store.ts',
      quick ? ['100'] : ['1000', '10000'],
    ],
    [
      'Long runs: bytes, time and memory per call (bench/long-run.ts)',
      'long-run.ts',
      quick ? ['--sizes', '10'] : [],
    ],
    [
      'Long run on a 10,000-file repo (bench/long-run.ts, issue 19 done-when)',
      'long-run.ts',
      quick
        ? ['--repo-files', '100', '--calls', '10']
        : ['--repo-files', '10000', '--calls', '300'],
    ],
    [
      'Long run against a plain LangGraph loop (bench/long-run-loop.ts, issue 37)',
      'long-run-loop.ts',
      // 1,000 calls in a quick run too: the goal is set at 1,000, and at 100 the plain loop's
      // checkpoints have not grown yet, so a 100-call ratio is another measure (bench/findings.md).
      ['--calls', '1000'],
    ],
    ['CLI start-up (bench/cli-startup.ts)', 'cli-startup.ts', [quick ? '1' : '7']],
  ] as const) {
    await section(title, 'external', async () => {
      const script = path.join(here, file);
      if (!existsSync(script)) return `_Not run: \`bench/${file}\` is not in this checkout._`;
      const result = await runExternal(script, args);
      if (!result.ok) throw new Error(`bench/${file} failed:\n${result.output}`);
      goalRows.push(...printedGoalRows(result.output));
      // Their output is their own plain-text report; quote it verbatim.
      return [
        '```text',
        result.output
          .split('\n')
          .filter((line) => !line.startsWith(GOAL_ROW_PREFIX))
          .join('\n')
          .trim(),
        '```',
        '',
        `_(bench/${file}, ${(result.ms / 1000).toFixed(1)} s)_`,
      ].join('\n');
    });
  }
  // Each ratio beside its goal and the last committed full run's figure; REGRESSED per row past
  // its goal (issue 37). Printed on every run (CI's bench:quick included); never fails the run.
  const figuresFile = path.join(here, 'goal-figures.json');
  const lines = goalLines(goalRows, readLastFigures(figuresFile));
  for (const line of lines) log(line);
  if (lines.length > 0) parts.push('## Goals', '', '```text', ...lines, '```', '');
  if (complete && !quick && failures.length === 0) writeLastFigures(figuresFile, goalRows);
  // Hand-written analysis of the goals (profiling notes), kept beside the generated tables.
  const findings = path.join(here, 'findings.md');
  if (existsSync(findings)) parts.push(readFileSync(findings, 'utf8').trim(), '');
  parts.push(`_Total run time: ${((Date.now() - started.getTime()) / 1000).toFixed(0)} s._`, '');
  writeFileSync(outFile, parts.join('\n'));
  log(`wrote ${path.relative(process.cwd(), outFile) || outFile}`);
  if (failures.length > 0) {
    log(`${failures.length} section(s) failed`);
    process.exitCode = 1;
  }
}

await main();
