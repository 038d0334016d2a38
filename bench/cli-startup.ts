/**
 * CLI start-up (issue 19): wall time of `agents` commands run as the published binary
 * (`dist/cli/main.js`, built first with `tsc -p tsconfig.build.json`) and of importing the
 * package root, each beside `node -e 0` measured in the same rounds (interleaved, so machine
 * load hits all alike). Goals are for a quiet machine; the ratio to `node -e 0` is what carries
 * across machines.
 *
 *   npx tsx bench/cli-startup.ts [ROUNDS]
 *
 * Prints a markdown table on stdout (bench/run.ts quotes it).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { median } from './harness.js';

const root = resolve(fileURLToPath(import.meta.url), '..', '..');
const rounds = Number(process.argv[2] ?? '7');
const main = join(root, 'dist', 'cli', 'main.js');

// bench/run.ts builds dist/ once for every section (BENCH_BUILT); alone, this script builds it.
if (process.env['BENCH_BUILT'] !== '1')
  execFileSync(
    process.execPath,
    [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'],
    {
      cwd: root,
      stdio: 'inherit',
    },
  );

// A project with one thread (a sandboxed run that wrote a file), so `checkpoints`, `audit` and
// `sandbox diff` do their real work.
const project = await mkdtemp(join(tmpdir(), 'agents-bench-startup-'));
const git = (...args: string[]) => execFileSync('git', args, { cwd: project, stdio: 'pipe' });
git('init', '-q', '-b', 'main');
git('config', 'user.email', 'b@example.com');
git('config', 'user.name', 'B');
await writeFile(join(project, 'README.md'), 'hello\n');
git('add', '-A');
git('commit', '-q', '-m', 'init');
const run = (...argv: string[]) =>
  spawnSync(process.execPath, [main, ...argv], { cwd: project, encoding: 'utf8' });
run('skill', 'add', 'files', '--tool', 'read_file', '--tool', 'write_file');
await writeFile(
  join(project, 'script.yaml'),
  '- tool_calls: [{ name: write_file, args: { path: a.txt, content: hi } }]\n- content: done\n',
);
run(
  'actor',
  'add',
  'bench',
  '--skill',
  'files',
  '--model',
  'scripted:script.yaml',
  '--policy',
  'auto',
);
const setup = run('actor', 'run', 'bench', '--input', 'go', '--thread', 't1');
if (setup.status !== 0) throw new Error(`setup run failed: ${setup.stderr}`);

interface Case {
  name: string;
  argv: string[];
  goalMs?: number;
  /** Issue 29's goal as a ratio to `node -e 0` (measured in the same rounds). */
  goalRatio?: number;
}
const importing = (file: string): string[] => [
  '--input-type=module',
  '-e',
  `await import(${JSON.stringify(join(root, 'dist', file))})`,
];
// Resolved here: the measured processes run in the temp project, which has no node_modules.
const importingPackage = (name: string): string[] => [
  '--input-type=module',
  '-e',
  `await import(${JSON.stringify(import.meta.resolve(name))})`,
];
const cases: Case[] = [
  { name: '`node -e 0` (baseline)', argv: ['-e', '0'] },
  { name: '`agents --help`', argv: [main, '--help'], goalMs: 150 },
  {
    name: '`agents checkpoints --thread t1`',
    argv: [main, 'checkpoints', '--thread', 't1'],
    goalMs: 400,
    goalRatio: 3,
  },
  { name: '`agents audit`', argv: [main, 'audit'], goalMs: 400 },
  {
    name: '`agents sandbox diff --thread t1`',
    argv: [main, 'sandbox', 'diff', '--thread', 't1'],
    goalMs: 400,
    goalRatio: 3,
  },
  { name: 'import the package root', argv: importing('index.js'), goalMs: 400, goalRatio: 3 },
  // Not an issue 29 goal: this entry exists to load `langchain` (createAgent middleware).
  { name: 'import `/langchain` (loads `langchain` by design)', argv: importing('langchain.js') },
  {
    name: 'import `/adapter` (`createMcpToolAdapter` alone)',
    argv: importing('adapter.js'),
    goalRatio: 2,
  },
  // References, not goals: what a program using the adapter loads anyway to make its `Client`,
  // and the floor of any command that reads checkpoints (the saver package loads LangChain core).
  {
    name: 'reference: import `@modelcontextprotocol/client`',
    argv: importingPackage('@modelcontextprotocol/client'),
  },
  {
    name: 'reference: import `@langchain/langgraph-checkpoint`',
    argv: importingPackage('@langchain/langgraph-checkpoint'),
  },
];
/**
 * How many module files (ES and CommonJS, ours and node_modules') the command opens, counted by
 * `bench/module-counter.mjs` in one extra run: the stable figure on a loaded machine.
 */
async function modulesLoaded(argv: string[], index: number): Promise<number> {
  const out = join(project, `.modules-${index}.txt`);
  const result = spawnSync(
    process.execPath,
    ['--import', pathToFileURL(join(root, 'bench', 'module-counter.mjs')).href, ...argv],
    { cwd: project, stdio: 'ignore', env: { ...process.env, BENCH_MODULES_OUT: out } },
  );
  if (result.status !== 0) throw new Error(`counting modules of ${argv.join(' ')} failed`);
  const text = await readFile(out, 'utf8').catch(() => '');
  return new Set(text.split('\n').filter(Boolean)).size;
}
const modules = new Map<string, number>();
for (const [index, item] of cases.entries()) {
  modules.set(item.name, index === 0 ? 0 : await modulesLoaded(item.argv, index));
}

const loadBefore = loadavg();
const samples = new Map<string, number[]>(cases.map((item) => [item.name, []]));
for (let round = 0; round < rounds; round++) {
  for (const item of cases) {
    const started = performance.now();
    const result = spawnSync(process.execPath, item.argv, { cwd: project, stdio: 'ignore' });
    const ms = performance.now() - started;
    if (result.status !== 0) throw new Error(`${item.name} exited with ${result.status}`);
    samples.get(item.name)!.push(ms);
  }
}
await rm(project, { recursive: true, force: true });

const baseline = median(samples.get(cases[0]!.name)!);
const lines = [
  `Medians of ${rounds} interleaved rounds, ms wall per process (built \`dist/\`). Goals are for a`,
  'quiet machine, where `node -e 0` takes about 40 ms; on a loaded one compare the ratio.',
  `Load average (1/5/15 min) before: ${loadBefore.map((value) => value.toFixed(1)).join(' / ')}, after: ${loadavg()
    .map((value) => value.toFixed(1))
    .join(' / ')}.`,
  '',
  'Modules: the module files the process loads (ES and CommonJS), counted in one extra run with',
  '`bench/module-counter.mjs`; unlike wall time it does not move with machine load.',
  '',
  '| command | modules | median ms | × `node -e 0` | goal | goal as ratio (at 40 ms) | met (by ratio) | issue 29 goal | met |',
  '| --- | ---: | ---: | ---: | ---: | ---: | --- | ---: | --- |',
  ...cases.map((item) => {
    const ms = median(samples.get(item.name)!);
    const ratio = ms / baseline;
    const issue29 =
      item.goalRatio === undefined
        ? '— | —'
        : `≤ ${item.goalRatio}× | ${ratio <= item.goalRatio ? 'yes' : '**no**'}`;
    const count = modules.get(item.name)!;
    if (item.goalMs === undefined)
      return `| ${item.name} | ${count} | ${ms.toFixed(0)} | ${ratio.toFixed(2)}× | — | — | — | ${issue29} |`;
    const goalRatio = item.goalMs / 40;
    return `| ${item.name} | ${count} | ${ms.toFixed(0)} | ${ratio.toFixed(2)}× | ${item.goalMs} ms | ${goalRatio.toFixed(2)}× | ${ratio <= goalRatio ? 'yes' : '**no**'} | ${issue29} |`;
  }),
];
process.stdout.write(`${lines.join('\n')}\n`);
