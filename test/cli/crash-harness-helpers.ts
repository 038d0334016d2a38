import { appendFile, mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { findThreadSandboxes } from '../../src/actors/thread-sandbox.js';
import { TSX_LOADER } from '../fixtures/fixture-process.js';
import {
  addScriptedActors,
  agents,
  agentsProcess,
  makeProjectRepo,
  type CliRun,
} from './helpers.js';

/*
 * What the crash harnesses (crash-harness.int.test.ts on SQLite, crash-harness-postgres on a
 * shared Postgres and store) share: the scripted run, its side-log server, and the checks made
 * after every kill point.
 */

const SIDE_LOG_SERVER = join(import.meta.dirname, '..', 'fixtures', 'side-log-server.ts');

/** The files the scripted run writes (a.txt and b.txt in one parallel turn, then c.txt). */
export const FILES: Readonly<Record<string, string>> = { 'a.txt': 'A', 'b.txt': 'B', 'c.txt': 'C' };

/** The scripted model's turns: two parallel write calls, then one, then the answer. */
export const SCRIPT = [
  '- tool_calls: [{ name: write_logged, args: { path: a.txt, content: "A" } }, { name: write_logged, args: { path: b.txt, content: "B" } }]',
  '- tool_calls: [{ name: write_logged, args: { path: c.txt, content: "C" } }]',
  '- content: done',
];

export interface KillCase {
  /** AGENTS_TEST_KILL_AT, or undefined for the uninterrupted run. */
  killAt: string | undefined;
  /** Calls that may have executed when the process died without their result being saved. */
  inFlight: string[];
}

/** A label for a case in messages. */
export const labelOf = (killCase: KillCase): string => killCase.killAt ?? 'uninterrupted';

/**
 * Registers the side-log server as `sl` (its log outside the project, writable to it when
 * confined) and skill `files` over it, in the workspace of `dir`. Returns the side log's path.
 */
export async function addSideLogServer(dir: string): Promise<{ sideLog: string; outside: string }> {
  const outside = await mkdtemp(join(tmpdir(), 'agents-crash-side-'));
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
  return { sideLog, outside };
}

/** The root of the sandbox a worker (its state folder, or the test's) holds for `thread`. */
export async function sandboxRoot(dir: string, thread: string, stateDir?: string): Promise<string> {
  const options = stateDir === undefined ? {} : { stateDir };
  const location = (await findThreadSandboxes(join(dir, '.agents'), thread, options))[0];
  if (location === undefined) throw new Error(`no sandbox for thread ${thread} in ${dir}`);
  const marker = JSON.parse(
    await readFile(join(location.sandboxDir, 'run', 'sandbox.json'), 'utf8'),
  ) as { root: string };
  return marker.root;
}

/**
 * One case on a fresh project: the scripted actor (policy auto) over the side-log server, run on
 * `thread` with the case's kill point, then, for a killed case, `actor resume --continue`. The
 * uninterrupted run and the continued one must exit 0.
 */
export async function runKillCase(
  killCase: KillCase,
  options: { prefix: string; script: readonly string[]; thread: string; dirs: string[] },
): Promise<{ dir: string; sideLog: string; run: CliRun; resumed: CliRun | undefined }> {
  const dir = await makeProjectRepo(options.prefix);
  const { sideLog, outside } = await addSideLogServer(dir);
  options.dirs.push(dir, outside);
  await addScriptedActors(dir, options.script, { mode: 'auto' });
  const label = labelOf(killCase);
  const run = await agentsProcess(
    dir,
    ['actor', 'run', 'bot', '--input', 'go', '--thread', options.thread, '--keep-sandbox'],
    undefined,
    killCase.killAt === undefined ? {} : { AGENTS_TEST_KILL_AT: killCase.killAt },
  );
  if (killCase.killAt === undefined) {
    expect(run.code, `${label}: ${run.stderr}`).toBe(0);
    return { dir, sideLog, run, resumed: undefined };
  }
  expectKilled(killCase, run);
  const resumed = await agentsProcess(dir, [
    ...['actor', 'resume', 'bot', '--thread', options.thread, '--continue', '--keep-sandbox'],
  ]);
  expect(resumed.code, `${label}: ${resumed.stderr}`).toBe(0);
  return { dir, sideLog, run, resumed };
}

/** The precondition of a killed case: the run died at its kill point (SIGKILL: no exit code). */
export function expectKilled(killCase: KillCase, run: CliRun): void {
  expect(run.code, `${labelOf(killCase)}: ${run.stdout}${run.stderr}`).toBeNull();
}

/** Each completed call ran exactly once; a call in flight at the kill at most twice. */
export async function expectSideLog(
  killCase: KillCase,
  sideLog: string,
  run: CliRun,
): Promise<void> {
  const label = labelOf(killCase);
  const log = await readFile(sideLog, 'utf8').catch(() => {
    throw new Error(`${label}: no side log; the run printed: ${run.stdout}${run.stderr}`);
  });
  const lines = log.trim().split('\n');
  for (const path of Object.keys(FILES)) {
    const times = lines.filter((line) => line === path).length;
    if (killCase.inFlight.includes(path)) expect([1, 2], `${label}: ${path}`).toContain(times);
    else expect(times, `${label}: ${path} in ${lines.join(',')}`).toBe(1);
  }
}

/** The tree holds every file with the uninterrupted run's contents; the diff lists them all. */
export async function expectDelivered(
  killCase: KillCase,
  root: string,
  diff: CliRun,
): Promise<void> {
  const label = labelOf(killCase);
  for (const [path, content] of Object.entries(FILES))
    expect(await readFile(join(root, path), 'utf8'), `${label}: ${path}`).toBe(content);
  expect(diff.code, `${label}: ${diff.stderr}`).toBe(0);
  for (const path of Object.keys(FILES)) expect(diff.stdout, label).toContain(path);
}

/** Runs every case at once; fails with every case's failure, not just the first. */
export async function runAll(
  cases: readonly KillCase[],
  runCase: (killCase: KillCase, index: number) => Promise<void>,
): Promise<void> {
  const outcomes = await Promise.allSettled(cases.map((item, index) => runCase(item, index)));
  const failures = outcomes.flatMap((outcome) =>
    outcome.status === 'rejected' ? [String(outcome.reason)] : [],
  );
  expect(failures).toEqual([]);
}
