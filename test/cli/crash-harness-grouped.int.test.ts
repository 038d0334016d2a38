import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { AIMessage, ToolMessage } from '@langchain/core/messages';
import type { BaseMessage } from '@langchain/core/messages';
import { afterAll, describe, expect, it } from 'vitest';
import { createThreadContextOpener } from '../../src/actors/open-thread.js';
import {
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
 * The crash harness over turns that mix grouped read-only calls with writes (issue 37): an
 * actor runs a turn's read-only, allowed calls in ONE LangGraph task and each write in its own.
 * SIGKILLed at a named boundary and continued: every write ran exactly once (or, in flight at
 * the kill, at most twice), the tree is the uninterrupted run's, the reads of the second turn
 * saw the first turn's writes, and every tool call id of the thread has exactly one ToolMessage.
 */

const THREAD = 'grouped';

/** Turn 1: two reads (one group) between two writes; turn 2: a read, a write, a read. */
const SCRIPT = [
  '- tool_calls: [{ name: read_logged, args: { path: x.txt } }, { name: write_logged, args: { path: a.txt, content: "A" } }, { name: read_logged, args: { path: y.txt } }, { name: write_logged, args: { path: b.txt, content: "B" } }]',
  '- tool_calls: [{ name: read_logged, args: { path: a.txt } }, { name: write_logged, args: { path: c.txt, content: "C" } }, { name: read_logged, args: { path: b.txt } }]',
  '- content: done',
];

const CASES: KillCase[] = [
  { killAt: undefined, inFlight: [] },
  // The first tools/call of the run (a read of the group or a write, whichever is sent first).
  { killAt: 'before-send:1', inFlight: [] },
  // After the first turn's step: the group's and both writes' results are saved writes.
  { killAt: 'checkpoint-write:4', inFlight: [] },
  // Reads are not snapshotted: the 1st and 2nd after-answer are turn 1's writes.
  { killAt: 'after-answer:1', inFlight: ['a.txt', 'b.txt'] },
  { killAt: 'after-snapshot:2', inFlight: ['a.txt', 'b.txt'] },
  // Turn 2's write answered while its grouped reads run beside it.
  { killAt: 'after-answer:3', inFlight: ['c.txt'] },
];

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

/**
 * The thread's messages as saved by its last checkpoint, and the number of tasks of each tools
 * step (the precondition: the reads of a turn shared one task).
 */
async function savedThread(dir: string): Promise<{ messages: BaseMessage[]; tasks: number[] }> {
  const thread = await createThreadContextOpener({ lock: false })(join(dir, '.agents'), THREAD, {
    cwd: dir,
    signal: new AbortController().signal,
  });
  try {
    const config = { configurable: { thread_id: THREAD } };
    const state = await thread.graph.getState(config);
    const tasks: number[] = [];
    for await (const snapshot of thread.graph.getStateHistory(config))
      if (snapshot.next.includes('tools')) tasks.unshift(snapshot.tasks.length);
    return { messages: (state.values as { messages: BaseMessage[] }).messages, tasks };
  } finally {
    await thread.close();
  }
}

function expectOneToolMessagePerCall(label: string, messages: BaseMessage[]): void {
  const callIds = messages
    .filter((message) => AIMessage.isInstance(message))
    .flatMap((message) => (message as AIMessage).tool_calls ?? [])
    .map((call) => call.id);
  expect(callIds, label).toHaveLength(7);
  const answered = messages
    .filter((message) => ToolMessage.isInstance(message))
    .map((message) => (message as ToolMessage).tool_call_id);
  expect([...answered].sort(), label).toEqual([...callIds].sort());
  const texts = messages
    .filter((message) => ToolMessage.isInstance(message))
    .map((message) => message.text);
  // Turn 2's reads ran on the tree turn 1 left (after a kill too).
  expect(
    texts.filter((text) => text === 'A'),
    label,
  ).toHaveLength(1);
  expect(
    texts.filter((text) => text === 'B'),
    label,
  ).toHaveLength(1);
}

async function runCase(killCase: KillCase): Promise<void> {
  const { dir, sideLog, run } = await runKillCase(killCase, {
    prefix: 'agents-crash-grouped-',
    script: SCRIPT,
    thread: THREAD,
    dirs,
  });
  const label = labelOf(killCase);
  await expectSideLog(killCase, sideLog, run);
  const reads = (await readFile(sideLog, 'utf8'))
    .split('\n')
    .filter((line) => line.startsWith('read '));
  // Reads may run again after a kill (read-only); uninterrupted, each ran once.
  for (const path of ['x.txt', 'y.txt', 'a.txt', 'b.txt'])
    expect(
      reads.filter((line) => line === `read ${path}`).length,
      `${label}: read ${path}`,
    ).toBeGreaterThan(0);
  if (killCase.killAt === undefined) expect(reads, label).toHaveLength(4);
  const saved = await savedThread(dir);
  // Turn 1: the two reads in one task, each write in its own; turn 2: the reads, the write. (A
  // `--continue` after a kill inside a step may save the step's start again: [3, 3, 2].)
  expect(saved.tasks[0], label).toBe(3);
  expect(saved.tasks.at(-1), label).toBe(2);
  expect(
    saved.tasks.every((count) => count === 3 || count === 2),
    label,
  ).toBe(true);
  expectOneToolMessagePerCall(label, saved.messages);
  const diff = await agents(dir, 'sandbox', 'diff', '--thread', THREAD, '--stat');
  await expectDelivered(killCase, await sandboxRoot(dir, THREAD), diff);
}

describe('crash harness over grouped read-only calls beside writes (#37, #38)', () => {
  it(
    `every kill point (${CASES.map(labelOf).join(', ')}): writes once, one ToolMessage per call`,
    { timeout: 420_000 },
    () => runAll(CASES, runCase),
  );
});
