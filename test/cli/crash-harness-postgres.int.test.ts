import { execFileSync } from 'node:child_process';
import { cp, mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  SCRIPT,
  addSideLogServer,
  expectDelivered,
  expectKilled,
  expectSideLog,
  labelOf,
  runAll,
  sandboxRoot,
  type KillCase,
} from './crash-harness-helpers.js';
import { agentsProcess, makeProjectRepo, type CliRun } from './helpers.js';

/*
 * The crash harness on a shared PostgreSQL and a shared snapshot store (issue 38): the run is
 * SIGKILLed on worker A at a named boundary and continued on worker B (another checkout, another
 * state folder: another machine), or on A again where the case says so. For every kill point:
 * each completed call ran exactly once, B's tree is the uninterrupted run's, and B's `sandbox
 * diff` delivers it. All cases run at once, each on its own thread of one database and store.
 * Runs in the `e2e` vitest project (it needs the Postgres server).
 */

const postgresUrl = inject('postgresUrl');

interface PostgresCase extends KillCase {
  /** Where `--continue` runs: the other worker (default) or the killed one. */
  continueOn?: 'other' | 'same';
}

const CASES: PostgresCase[] = [
  { killAt: undefined, inFlight: [] },
  { killAt: 'before-send:1', inFlight: [] },
  { killAt: 'checkpoint-write:3', inFlight: [] },
  { killAt: 'checkpoint-write:4', inFlight: [] },
  { killAt: 'before-model:2', inFlight: [] },
  { killAt: 'after-answer:3', inFlight: ['c.txt'] },
  { killAt: 'mid-snapshot:1', inFlight: ['a.txt', 'b.txt'] },
  { killAt: 'after-snapshot:1', inFlight: ['a.txt', 'b.txt'] },
  // A push of the parallel turn's snapshots to the shared store, its ref not yet moved.
  { killAt: 'during-push:2', inFlight: ['a.txt', 'b.txt'] },
  { killAt: 'during-push:2', inFlight: ['a.txt', 'b.txt'], continueOn: 'same' },
];

interface Worker {
  project: string;
  stateDir: string;
}

let root: string;
let store: string;

beforeAll(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), 'agents-crash-pg-')));
  store = join(root, 'snapshots.git');
  execFileSync('git', ['init', '-q', '--bare', store]);
});

const outsides: string[] = [];
afterAll(async () => {
  for (const dir of [root, ...outsides])
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

function on(worker: Worker, argv: string[], env: Record<string, string> = {}): Promise<CliRun> {
  return agentsProcess(worker.project, argv, undefined, {
    AGENTS_STATE_DIR: worker.stateDir,
    ...env,
  });
}

/** Two checkouts of one project (one workspace), each with a state folder of its own. */
async function workers(index: number): Promise<{ a: Worker; b: Worker; sideLog: string }> {
  const caseRoot = join(root, `case-${index}`);
  const origin = await makeProjectRepo('origin-', caseRoot);
  const [a, b] = ['a', 'b'].map((name) => ({
    project: join(caseRoot, `project-${name}`),
    stateDir: join(caseRoot, `state-${name}`),
  })) as [Worker, Worker];
  for (const worker of [a, b]) {
    execFileSync('git', ['clone', '-q', origin, worker.project]);
    await mkdir(worker.stateDir);
  }
  const { sideLog, outside } = await addSideLogServer(a.project);
  outsides.push(outside);
  await mkdir(join(a.project, '.agents', 'actors'), { recursive: true });
  await writeFile(
    join(a.project, '.agents', 'actors', 'bot.yaml'),
    [
      'skills: [files]',
      'model: scripted:script.yaml',
      'checkpointer:',
      '  type: postgres',
      `  url: "${postgresUrl}"`,
      'snapshots:',
      `  remote: "${store}"`,
      // The committed project, not each checkout's untracked files (the script, .agents/).
      'sandbox:',
      '  from: head',
      'policy:',
      '  mode: auto',
      '',
    ].join('\n'),
  );
  await writeFile(join(a.project, 'script.yaml'), [...SCRIPT, ''].join('\n'));
  await cp(join(a.project, '.agents'), join(b.project, '.agents'), { recursive: true });
  await cp(join(a.project, 'script.yaml'), join(b.project, 'script.yaml'));
  return { a, b, sideLog };
}

async function runCase(killCase: PostgresCase, index: number): Promise<void> {
  const thread = `crash-${index}`;
  const { a, b, sideLog } = await workers(index);
  const label = `${labelOf(killCase)} (continued on ${killCase.continueOn ?? 'other'} worker)`;
  const run = await on(
    a,
    ['actor', 'run', 'bot', '--input', 'go', '--thread', thread, '--keep-sandbox'],
    killCase.killAt === undefined ? {} : { AGENTS_TEST_KILL_AT: killCase.killAt },
  );
  // The worker whose tree and delivery are checked: the one that continued, else the other.
  let last = b;
  if (killCase.killAt === undefined) {
    expect(run.code, `${label}: ${run.stderr}`).toBe(0);
    // B never ran the thread: it delivers from the shared store and database.
    const diff = await on(b, ['sandbox', 'diff', '--thread', thread, '--stat']);
    await expectDelivered(killCase, await sandboxRoot(a.project, thread, a.stateDir), diff);
  } else {
    expectKilled(killCase, run);
    last = killCase.continueOn === 'same' ? a : b;
    const resumed = await on(last, [
      'actor',
      'resume',
      'bot',
      '--thread',
      thread,
      '--continue',
      '--keep-sandbox',
    ]);
    expect(resumed.code, `${label}: ${resumed.stdout}${resumed.stderr}`).toBe(0);
    if (killCase.killAt === 'checkpoint-write:3')
      expect(resumed.stderr, label).toContain('nothing runs again');
    const diff = await on(last, ['sandbox', 'diff', '--thread', thread, '--stat']);
    await expectDelivered(killCase, await sandboxRoot(last.project, thread, last.stateDir), diff);
  }
  await expectSideLog(killCase, sideLog, run);
}

// Ten cases of three `agents` processes each, at once: 242 s on the shared 2-core machine at
// load 25-40 (about 60 s of CPU); the timeout leaves room for such a machine.
describe('crash harness on a shared Postgres and store, continued on another worker (#38)', () => {
  it(
    `every kill point (${CASES.map(labelOf).join(', ')}): no completed call twice, no file lost`,
    { timeout: 420_000 },
    () => runAll(CASES, runCase),
  );
});
