import { rm } from 'node:fs/promises';
import { afterAll, describe, expect, it } from 'vitest';
import {
  SCRIPT,
  expectDelivered,
  expectSideLog,
  labelOf,
  runAll,
  runKillCase,
  sandboxRoot,
  type KillCase,
} from './crash-harness-helpers.js';
import { agents } from './helpers.js';

/*
 * Crash-injection harness on SQLite (issue 38): a scripted run (a turn of two parallel write
 * calls, then a turn of one) whose server appends every execution to a side log outside the
 * sandbox is SIGKILLed at a named boundary (AGENTS_TEST_KILL_AT, src/core/kill-point.ts), then
 * continued on the same worker. For every kill point: each call that completed before the kill
 * ran exactly once, the final tree is the uninterrupted run's, and `sandbox diff` delivers it.
 * The kill points run concurrently: each has its own project and state. The Postgres variant,
 * continued on another worker, is crash-harness-postgres.int.test.ts.
 */

const THREAD = 'crash';

const CASES: KillCase[] = [
  { killAt: undefined, inFlight: [] },
  // Before the first tools/call is sent: nothing executed.
  { killAt: 'before-send:1', inFlight: [] },
  // The checkpoint after the first model turn (puts: input, step 0, step 1): the turn's result
  // is a saved write, no checkpoint names it yet.
  { killAt: 'checkpoint-write:3', inFlight: [] },
  // The checkpoint after the parallel step: both results are saved writes by then.
  { killAt: 'checkpoint-write:4', inFlight: [] },
  // Between steps: the second model turn, after the parallel step's checkpoint.
  { killAt: 'before-model:2', inFlight: [] },
  // The last call answered, its snapshot not yet taken.
  { killAt: 'after-answer:3', inFlight: ['c.txt'] },
  // The first parallel call's snapshot half written: its commit made, the head not moved.
  { killAt: 'mid-snapshot:1', inFlight: ['a.txt', 'b.txt'] },
  // The first parallel call's snapshot stored, its result not yet in any checkpoint.
  { killAt: 'after-snapshot:1', inFlight: ['a.txt', 'b.txt'] },
];

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

async function runCase(killCase: KillCase): Promise<void> {
  const { dir, sideLog, run, resumed } = await runKillCase(killCase, {
    prefix: 'agents-crash-',
    script: SCRIPT,
    thread: THREAD,
    dirs,
  });
  // Said before running: a step whose results were saved never runs again.
  if (killCase.killAt === 'checkpoint-write:3')
    expect(resumed?.stderr, labelOf(killCase)).toContain('nothing runs again');
  await expectSideLog(killCase, sideLog, run);
  const diff = await agents(dir, 'sandbox', 'diff', '--thread', THREAD, '--stat');
  await expectDelivered(killCase, await sandboxRoot(dir, THREAD), diff);
}

// Eight cases at once: 37 s on the shared 2-core machine at load ~2, 185 s at load ~30.
describe('crash harness: SIGKILL at named boundaries, then --continue on the same worker (#38)', () => {
  it(
    `every kill point (${CASES.map(labelOf).join(', ')}): no completed call twice, no file lost`,
    { timeout: 420_000 },
    () => runAll(CASES, runCase),
  );
});
