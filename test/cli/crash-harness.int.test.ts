import { appendFile, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { findThreadSandboxes } from '../../src/actors/thread-sandbox.js';
import { TSX_LOADER } from '../fixtures/fixture-process.js';
import { addScriptedActors, agents, agentsProcess, makeProjectRepo } from './helpers.js';

/*
 * Crash-injection harness on SQLite (issue 38): a scripted run (a turn of two parallel write
 * calls, then a turn of one) whose server appends every execution to a side log outside the
 * sandbox is SIGKILLed at a named boundary (AGENTS_TEST_KILL_AT, src/core/kill-point.ts), then
 * continued on the same worker. For every kill point: each call that completed before the kill
 * ran exactly once, the final tree is the uninterrupted run's, and `sandbox diff` delivers it.
 * The kill points run concurrently: each has its own project and state.
 */

const SIDE_LOG_SERVER = join(import.meta.dirname, '..', 'fixtures', 'side-log-server.ts');
const THREAD = 'crash';
const FILES = { 'a.txt': 'A', 'b.txt': 'B', 'c.txt': 'C' };

interface KillCase {
  /** AGENTS_TEST_KILL_AT, or undefined for the uninterrupted run. */
  killAt: string | undefined;
  /** Calls that may have executed when the process died without their result being saved. */
  inFlight: string[];
}

const CASES: KillCase[] = [
  ...(process.env['HARNESS_ONLY'] === '1' ? [] : []),
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
  // The first parallel call's snapshot stored, its result not yet in any checkpoint.
  { killAt: 'after-snapshot:1', inFlight: ['a.txt', 'b.txt'] },
];

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

async function sandboxRoot(dir: string): Promise<string> {
  const location = (await findThreadSandboxes(join(dir, '.agents'), THREAD))[0];
  if (location === undefined) throw new Error(`no sandbox for thread ${THREAD} in ${dir}`);
  const marker = JSON.parse(
    await readFile(join(location.sandboxDir, 'run', 'sandbox.json'), 'utf8'),
  ) as { root: string };
  return marker.root;
}

async function project(): Promise<{ dir: string; sideLog: string }> {
  const dir = await makeProjectRepo('agents-crash-');
  const outside = await mkdtemp(join(tmpdir(), 'agents-crash-side-'));
  dirs.push(dir, outside);
  const sideLog = join(outside, 'side.log');
  const add = await agents(
    dir,
    'server',
    'add',
    'sl',
    '--no-validate',
    '--',
    process.execPath,
    '--import',
    TSX_LOADER,
    SIDE_LOG_SERVER,
    '--side-log',
    sideLog,
  );
  if (add.code !== 0) throw new Error(`server add failed: ${add.stderr}`);
  // A confined server sees only the sandbox: the side log's folder is its one exception.
  await appendFile(
    join(dir, '.agents', 'servers', 'sl.yaml'),
    `sandbox:\n  writable: [${JSON.stringify(outside)}]\n`,
  );
  const skill = await agents(dir, 'skill', 'add', 'files', '--server', 'sl', '--no-validate');
  if (skill.code !== 0) throw new Error(`skill add failed: ${skill.stderr}`);
  await addScriptedActors(
    dir,
    [
      '- tool_calls: [{ name: write_logged, args: { path: a.txt, content: "A" } }, { name: write_logged, args: { path: b.txt, content: "B" } }]',
      '- tool_calls: [{ name: write_logged, args: { path: c.txt, content: "C" } }]',
      '- content: done',
    ],
    { mode: 'auto' },
  );
  return { dir, sideLog };
}

async function runCase(killCase: KillCase): Promise<void> {
  const { dir, sideLog } = await project();
  const label = killCase.killAt ?? 'uninterrupted';
  const run = await agentsProcess(
    dir,
    ['actor', 'run', 'bot', '--input', 'go', '--thread', THREAD, '--keep-sandbox'],
    undefined,
    killCase.killAt === undefined ? {} : { AGENTS_TEST_KILL_AT: killCase.killAt },
  );
  if (killCase.killAt === undefined) {
    expect(run.code, `${label}: ${run.stderr}`).toBe(0);
  } else {
    // Precondition: the run died at its kill point (SIGKILL: no exit code).
    expect(run.code, `${label}: ${run.stdout}${run.stderr}`).toBeNull();
    const resumed = await agentsProcess(dir, [
      'actor',
      'resume',
      'bot',
      '--thread',
      THREAD,
      '--continue',
      '--keep-sandbox',
    ]);
    expect(resumed.code, `${label}: ${resumed.stderr}`).toBe(0);
    // Said before running: a step whose results were saved never runs again.
    if (killCase.killAt === 'checkpoint-write:3')
      expect(resumed.stderr, label).toContain('nothing runs again');
  }

  const log = await readFile(sideLog, 'utf8').catch(() => {
    throw new Error(`${label}: no side log; the run printed: ${run.stdout}${run.stderr}`);
  });
  const lines = log.trim().split('\n');
  for (const path of Object.keys(FILES)) {
    const times = lines.filter((line) => line === path).length;
    // A completed call ran exactly once; a call in flight at the kill at most twice.
    if (killCase.inFlight.includes(path)) expect([1, 2], `${label}: ${path}`).toContain(times);
    else expect(times, `${label}: ${path} in ${lines.join(',')}`).toBe(1);
  }

  const root = await sandboxRoot(dir);
  for (const [path, content] of Object.entries(FILES))
    expect(await readFile(join(root, path), 'utf8'), `${label}: ${path}`).toBe(content);
  const diff = await agents(dir, 'sandbox', 'diff', '--thread', THREAD, '--stat');
  expect(diff.code, `${label}: ${diff.stderr}`).toBe(0);
  for (const path of Object.keys(FILES)) expect(diff.stdout, label).toContain(path);
}

describe('crash harness: SIGKILL at named boundaries, then --continue on the same worker (#38)', () => {
  it(
    `every kill point (${CASES.map((item) => item.killAt ?? 'none').join(', ')}): no completed call twice, no file lost`,
    { timeout: 180_000 },
    async () => {
      const outcomes = await Promise.allSettled(CASES.map((item) => runCase(item)));
      const failures = outcomes.flatMap((outcome) =>
        outcome.status === 'rejected' ? [String(outcome.reason)] : [],
      );
      expect(failures).toEqual([]);
    },
  );
});
