/**
 * `agents thread replay` of recordings that start on a thread that ran before: a run after a
 * rollback (answering an approval), `actor resume --approve` after a pause, and
 * `actor resume --continue` after the turn limit. The cassette carries the thread's state as the
 * recording found it; the replay seeds a fresh thread with it and, with the server's command
 * gone and no model, ends on the same tree, checkpoint count and policy outcomes.
 */
import { existsSync } from 'node:fs';
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { formatCassette, parseCassette, type Cassette } from '../../src/testing/index.js';
import {
  addScriptedActors,
  agents,
  agentsWithStdin,
  makeProjectRepo,
  putFixtureFilesSkill,
} from '../cli/helpers.js';
import { MISSING_SERVER, offlineCopy } from './helpers.js';

interface ReplayReport {
  tree: string;
  checkpoints: number;
  calls: Array<{ toolId: string; outcome?: string }>;
  treesChecked: number;
  divergence?: { message: string };
}

let dir: string | undefined;

afterEach(async () => {
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

async function project(prefix: string, turns: string[], mode: 'auto' | 'ask'): Promise<string> {
  dir = await makeProjectRepo(prefix);
  await putFixtureFilesSkill(dir);
  await addScriptedActors(dir, turns, { mode });
  return dir;
}

/**
 * Runs `bot` on `thread` until it pauses for an approval (exit 8; `paused` checks that pause),
 * then records `actor resume --approve` into `file`; returns the offline copy.
 */
async function pauseThenRecordApproval(
  at: string,
  thread: string,
  file: string,
  paused?: () => Promise<void>,
): Promise<{ path: string; cassette: Cassette }> {
  const run = await agentsWithStdin(
    at,
    '',
    ...['actor', 'run', 'bot', '--input', 'go', '--thread', thread, '--no-prompt'],
  );
  expect(run.code, run.stderr).toBe(8);
  await paused?.();
  const resumed = await agents(
    at,
    ...['actor', 'resume', 'bot', '--thread', thread, '--approve', '--record', file],
  );
  expect(resumed.code, resumed.stderr).toBe(0);
  return offline(at, file);
}

/** Every SQLite file under the project's `.agents`, as text (the checkpoints are stored as JSON). */
async function checkpointBytes(at: string): Promise<string> {
  const files = (await readdir(join(at, '.agents'), { recursive: true })).filter((name) =>
    /\.(sqlite|db)$/.test(name),
  );
  const texts = await Promise.all(
    files.map((name) => readFile(join(at, '.agents', name), 'latin1')),
  );
  return texts.join('\n');
}

/** Reads `name`, points its servers' commands nowhere (a replay that spawned would fail). */
async function offline(at: string, name: string): Promise<{ path: string; cassette: Cassette }> {
  const cassette = offlineCopy(parseCassette(await readFile(join(at, name), 'utf8')));
  const path = join(at, `offline-${name}`);
  await writeFile(path, formatCassette(cassette));
  return { path, cassette };
}

/** Replays `path` and checks the report against the recording's end and calls. */
async function replaysAsRecorded(at: string, path: string, cassette: Cassette) {
  expect(existsSync(MISSING_SERVER), 'the server command is really missing').toBe(false);
  const replay = await agents(at, 'thread', 'replay', path, '--json');
  expect(replay.code, replay.stderr + replay.stdout).toBe(0);
  const report = JSON.parse(replay.stdout) as ReplayReport;
  const end = cassette.entries.find((entry) => entry.kind === 'end')!;
  expect(report.tree).toBe(end.tree);
  expect(report.checkpoints).toBe(end.checkpoints);
  expect(report.checkpoints).toBeGreaterThan(0);
  const outcomes = cassette.entries.flatMap((entry) =>
    entry.kind === 'call' ? [`${entry.toolId}:${entry.policy?.outcome}`] : [],
  );
  expect(report.calls.map((call) => `${call.toolId}:${call.outcome}`).sort()).toEqual(
    outcomes.sort(),
  );
  return report;
}

describe('agents thread replay of a thread with prior history', () => {
  it('a run after a rollback, with an approval, replays from the recorded history', async () => {
    const at = await project(
      'replay-rollback-',
      [
        '- tool_calls: [{ name: write_file, args: { path: a.txt, content: A1 } }]',
        '- tool_calls: [{ name: write_file, args: { path: b.txt, content: B1 } }]',
        '- content: done',
      ],
      'ask',
    );
    const first = await agentsWithStdin(
      at,
      'y\ny\n',
      'actor',
      'run',
      'bot',
      '--input',
      'one',
      '--thread',
      't1',
    );
    expect(first.code, first.stderr).toBe(0);
    const listed = JSON.parse(
      (await agents(at, 'checkpoints', '--thread', 't1', '--json')).stdout,
    ) as Array<{ checkpointId: string; changed: unknown[] }>;
    // Newest first: the step that wrote a.txt is the last one with a change.
    const target = listed.filter((entry) => entry.changed.length > 0).at(-1);
    expect(target, 'the first run wrote a.txt in a step of its own').toBeDefined();
    const rolled = await agents(at, 'rollback', '--thread', 't1', '--to', target!.checkpointId);
    expect(rolled.code, rolled.stderr).toBe(0);
    const second = await agentsWithStdin(
      at,
      'y\ny\n',
      'actor',
      'run',
      'bot',
      '--input',
      'two',
      '--thread',
      't1',
      '--record',
      'after-rollback.jsonl',
      '--by',
      'alice',
    );
    expect(second.code, second.stderr).toBe(0);
    const { path, cassette } = await offline(at, 'after-rollback.jsonl');
    const history = cassette.entries.find((entry) => entry.kind === 'thread');
    expect(history, 'the cassette carries the history the rollback left').toMatchObject({
      messages: expect.arrayContaining([
        expect.objectContaining({ type: 'human', content: 'one' }),
      ]),
    });
    expect(JSON.stringify(history)).not.toContain('B1');
    const report = await replaysAsRecorded(at, path, cassette);
    expect(report.calls.map((call) => call.outcome)).toEqual(['approved', 'approved']);
    // Without the history the first model turn sees other messages: the entry is what replays.
    const bare = join(at, 'no-history.jsonl');
    await writeFile(
      bare,
      formatCassette({
        ...cassette,
        entries: cassette.entries.filter((entry) => entry.kind !== 'thread'),
      }),
    );
    const without = await agents(at, 'thread', 'replay', bare);
    expect(without.code, without.stdout).toBe(11);
    expect(without.stderr).toMatch(/Replay diverged at model turn 1: the messages in differ/);
  });

  it('`actor resume --approve` after a pause replays the approval and what followed', async () => {
    const at = await project(
      'replay-resume-',
      [
        '- tool_calls: [{ name: write_file, args: { path: c.txt, content: C1 } }]',
        '- content: done',
      ],
      'ask',
    );
    const paused = await agentsWithStdin(
      at,
      '',
      'actor',
      'run',
      'bot',
      '--input',
      'go',
      '--thread',
      't2',
      '--no-prompt',
    );
    expect(paused.code, paused.stderr).toBe(8);
    const resumed = await agents(
      at,
      'actor',
      'resume',
      'bot',
      '--thread',
      't2',
      '--approve',
      '--by',
      'bob',
      '--record',
      'resume.jsonl',
    );
    expect(resumed.code, resumed.stderr).toBe(0);
    const { path, cassette } = await offline(at, 'resume.jsonl');
    expect(cassette.entries.find((entry) => entry.kind === 'thread')).toMatchObject({
      next: ['tools'],
      waiting: 'approval',
    });
    const report = await replaysAsRecorded(at, path, cassette);
    expect(report.calls).toEqual([expect.objectContaining({ outcome: 'approved' })]);
    // A resume recorded without the thread's state (format 2 had none) is refused, saying why.
    const bare = join(at, 'no-history.jsonl');
    await writeFile(
      bare,
      formatCassette({
        header: { ...cassette.header, version: 2 },
        entries: cassette.entries.filter((entry) => entry.kind !== 'thread'),
      }),
    );
    const refused = await agents(at, 'thread', 'replay', bare);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toMatch(
      /continues a thread .* holds no `thread` entry.*record the resume again/,
    );
  });

  it('`actor resume --continue` after the turn limit replays past the limit', async () => {
    const at = await project(
      'replay-continue-',
      [
        '- tool_calls: [{ name: write_file, args: { path: d.txt, content: D1 } }]',
        '- tool_calls: [{ name: write_file, args: { path: e.txt, content: E1 } }]',
        '- content: done',
      ],
      'auto',
    );
    const stopped = await agents(
      at,
      'actor',
      'run',
      'bot',
      '--input',
      'go',
      '--thread',
      't3',
      '--max-turns',
      '1',
    );
    expect(stopped.code, stopped.stderr).toBe(9);
    const resumed = await agents(
      at,
      'actor',
      'resume',
      'bot',
      '--thread',
      't3',
      '--continue',
      '--record',
      'continue.jsonl',
    );
    expect(resumed.code, resumed.stderr).toBe(0);
    const { path, cassette } = await offline(at, 'continue.jsonl');
    expect(cassette.entries.find((entry) => entry.kind === 'thread')).toMatchObject({
      next: ['agent'],
      waiting: 'limit',
    });
    await replaysAsRecorded(at, path, cassette);
  });

  it('parallel calls paused for approval and resumed with --approve replay', async () => {
    const at = await project(
      'replay-parallel-',
      [
        '- tool_calls: [{ name: add, args: { a: 1, b: 2 } }, { name: write_file, args: { path: f.txt, content: F1 } }]',
        '- content: done',
      ],
      'ask',
    );
    const { path, cassette } = await pauseThenRecordApproval(at, 't4', 'par.jsonl');
    expect(cassette.entries.find((entry) => entry.kind === 'thread')).toMatchObject({
      waiting: 'approval',
    });
    const report = await replaysAsRecorded(at, path, cassette);
    expect(report.calls.map((call) => call.outcome)).toEqual(['approved', 'approved']);
  });
});

describe('agents thread replay of a step half done when the recording started', () => {
  it('a finished parallel call keeps its result, only the paused one runs again', async () => {
    const at = await project(
      'replay-half-step-',
      [
        '- tool_calls: [{ name: add, args: { a: 1, b: 2 } }, { name: write_file, args: { path: g.txt, content: G1 } }]',
        '- content: done',
      ],
      'ask',
    );
    // `add` runs at once, `write_file` waits: the step pauses with one of its calls finished.
    await writeFile(
      join(at, '.agents', 'actors', 'bot.yaml'),
      'skills: [files]\nmodel: scripted:script.yaml\npolicy:\n  mode: ask\n  tools:\n    add: { decision: allow }\n',
    );
    const { path, cassette } = await pauseThenRecordApproval(at, 't5', 'half.jsonl');
    const history = cassette.entries.find((entry) => entry.kind === 'thread');
    expect(history, 'the add call had finished when the recording started').toMatchObject({
      waiting: 'approval',
      finishedCalls: [expect.any(String)],
      messages: expect.arrayContaining([
        expect.objectContaining({ type: 'tool', name: 'add', content: '3' }),
      ]),
    });
    const recordedCalls = cassette.entries.flatMap((entry) =>
      entry.kind === 'call' ? [entry.toolId] : [],
    );
    expect(recordedCalls, 'the resume ran only the paused call').toEqual([
      expect.stringMatching(/\/write_file$/),
    ]);
    // Replayed: the add call is not run again (the cassette has no exchange for it).
    const report = await replaysAsRecorded(at, path, cassette);
    expect(report.calls.map((call) => call.outcome)).toEqual(['approved']);

    // Without the finished call's result in the thread entry, the step cannot be rebuilt.
    const bare = join(at, 'no-result.jsonl');
    await writeFile(
      bare,
      formatCassette({
        ...cassette,
        entries: cassette.entries.map((entry) =>
          entry.kind === 'thread'
            ? { ...entry, messages: entry.messages.filter((message) => message.type !== 'tool') }
            : entry,
        ),
      }),
    );
    const refused = await agents(at, 'thread', 'replay', bare);
    expect(refused.code, refused.stdout + refused.stderr).toBe(3);
    expect(refused.stderr).toMatch(
      /paused in a step whose calls \S+ had finished before the recording started, but their results are not in its `thread` entry.*Record the run again from before the pause/,
    );
  });
  it('a finished group of read-only calls keeps its results beside the paused write', async () => {
    const at = await project(
      'replay-group-step-',
      [
        '- tool_calls: [{ name: read_file, args: { path: a.txt } }, { name: read_file, args: { path: b.txt } }, { name: write_file, args: { path: g.txt, content: G1 } }]',
        '- content: done',
      ],
      'ask',
    );
    await writeFile(join(at, 'a.txt'), 'A\n');
    await writeFile(join(at, 'b.txt'), 'B\n');
    // The two reads share one task (issue 37) and finish; the write waits for its approval.
    const { path, cassette } = await pauseThenRecordApproval(at, 't6', 'group.jsonl', async () =>
      expect(await checkpointBytes(at), 'the paused step holds one task for both reads').toContain(
        'lg_tool_calls',
      ),
    );
    const history = cassette.entries.find((entry) => entry.kind === 'thread');
    expect(history, 'both reads had finished when the recording started').toMatchObject({
      waiting: 'approval',
      finishedCalls: [expect.any(String), expect.any(String)],
    });
    const recordedCalls = cassette.entries.flatMap((entry) =>
      entry.kind === 'call' ? [entry.toolId] : [],
    );
    expect(recordedCalls, 'the resume ran only the paused call').toEqual([
      expect.stringMatching(/\/write_file$/),
    ]);
    const report = await replaysAsRecorded(at, path, cassette);
    expect(report.calls.map((call) => call.outcome)).toEqual(['approved']);
  });
});
