/**
 * `agents thread replay` of `actor resume --answer --record` on a 2026-07-28 server's questions
 * (`input_required`) in the shapes a user meets: two calls asking at once, a write approved
 * before its server asked (the default `mode: ask`), and a call waiting at its second round. The
 * replay seeds each waiting call with its recorded answers (and approval), with the server's
 * command gone and no model, and ends on the same tree and checkpoint count.
 */
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatCassette, parseCassette } from '../../src/testing/index.js';
import { agents, makeCountingModernProject, type CountingModernProject } from '../cli/helpers.js';

const MISSING_SERVER = '/nonexistent/agents-replay-questions';

let dir: string;
let counterDir: string;
let store: CountingModernProject['store'];

beforeAll(async () => {
  ({ dir, counterDir, store } = await makeCountingModernProject(
    'replay-questions-',
    'modern-skill',
  ));
});

/** An actor over the modern skill whose scripted model says `turns`. */
async function addActor(name: string, turns: string[], mode: 'auto' | 'ask'): Promise<void> {
  await writeFile(join(dir, `${name}.yaml`), [...turns, ''].join('\n'));
  await store.put('actor', name, {
    skills: ['modern-skill'],
    model: `scripted:${name}.yaml`,
    policy: { mode },
  });
}

afterAll(async () => {
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  if (counterDir !== undefined) await rm(counterDir, { recursive: true, force: true });
});

describe('agents thread replay of a recording begun on several questions', () => {
  it("two servers' questions waiting at once replay, each answered as recorded", async () => {
    await addActor(
      'asker2',
      [
        '- tool_calls: [{ name: confirm_write, args: { path: b.txt } }, { name: confirm_write, args: { path: c.txt } }]',
        '- content: done',
      ],
      'auto',
    );
    const paused = await agents(
      dir,
      ...['actor', 'run', 'asker2', '--input', 'go', '--thread', 'q2', '--no-prompt'],
    );
    expect(paused.code, paused.stderr).toBe(8);
    const resumed = await agents(
      dir,
      ...['actor', 'resume', 'asker2', '--thread', 'q2', '--answer', '{"confirm":true}'],
      ...['--no-prompt', '--record', 'two.jsonl'],
    );
    expect(resumed.code, resumed.stderr).toBe(0);
    const recorded = parseCassette(await readFile(join(dir, 'two.jsonl'), 'utf8'));
    expect(
      recorded.entries.find((entry) => entry.kind === 'thread'),
      'both questions waited when the recording began',
    ).toMatchObject({ waiting: 'question', questions: [expect.anything(), expect.anything()] });
    for (const entry of recorded.entries) {
      if (entry.kind !== 'actor') continue;
      for (const server of Object.values(entry.servers)) server['command'] = MISSING_SERVER;
    }
    const path = join(dir, 'offline-two.jsonl');
    await writeFile(path, formatCassette(recorded));
    const replay = await agents(dir, 'thread', 'replay', path, '--json');
    expect(replay.code, replay.stderr + replay.stdout).toBe(0);
    const report = JSON.parse(replay.stdout) as {
      tree: string;
      checkpoints: number;
      calls: Array<{ toolId: string; isError: boolean }>;
    };
    const end = recorded.entries.find((entry) => entry.kind === 'end')!;
    expect(report).toMatchObject({ tree: end.tree, checkpoints: end.checkpoints });
    expect(report.calls.map((call) => call.toolId)).toEqual([
      expect.stringMatching(/confirm_write$/),
      expect.stringMatching(/confirm_write$/),
    ]);
    expect(report.calls.every((call) => !call.isError)).toBe(true);
    // Each call gets its own recorded answer: one of them edited diverges at its retry.
    const answered = recorded.entries.filter((entry) => entry.kind === 'call' && entry.answers);
    expect(answered, 'the resume noted both answers').toHaveLength(2);
    const edited = join(dir, 'offline-two-edited.jsonl');
    await writeFile(
      edited,
      formatCassette({
        ...recorded,
        entries: recorded.entries.map((entry) =>
          entry === answered[1]
            ? (JSON.parse(
                JSON.stringify(entry).replace('"confirm":true', '"confirm":false'),
              ) as typeof entry)
            : entry,
        ),
      }),
    );
    const diverged = await agents(dir, 'thread', 'replay', edited);
    expect(diverged.code, diverged.stdout + diverged.stderr).toBe(11);
    expect(diverged.stderr).toMatch(
      /Replay diverged at modern exchange \d+: tools\/call confirm_write on modern was recorded with inputResponses\.confirm\.content\.confirm = true, the run sent false\./,
    );
  });
});

describe('agents thread replay of a question asked after an approval', () => {
  it('a write approved, then asked a question: the resume recorded at the question replays', async () => {
    await addActor(
      'asker3',
      ['- tool_calls: [{ name: confirm_write, args: { path: d.txt } }]', '- content: done'],
      'ask',
    );
    const thread = ['--thread', 'q3', '--no-prompt'];
    const paused = await agents(dir, 'actor', 'run', 'asker3', '--input', 'go', ...thread);
    expect(paused.code, paused.stderr).toBe(8);
    const approved = await agents(dir, 'actor', 'resume', 'asker3', '--approve', ...thread);
    expect(approved.code, 'approved, the call then waits at its question').toBe(8);
    const answered = await agents(
      dir,
      ...['actor', 'resume', 'asker3', '--answer', '{"confirm":true}', ...thread],
      ...['--record', 'q3.jsonl'],
    );
    expect(answered.code, answered.stderr).toBe(0);
    const recorded = parseCassette(await readFile(join(dir, 'q3.jsonl'), 'utf8'));
    expect(recorded.entries.find((entry) => entry.kind === 'thread')).toMatchObject({
      waiting: 'question',
    });
    expect(recorded.entries.find((entry) => entry.kind === 'call')).toMatchObject({
      policy: { outcome: 'approved' },
    });
    for (const entry of recorded.entries) {
      if (entry.kind !== 'actor') continue;
      for (const server of Object.values(entry.servers)) server['command'] = MISSING_SERVER;
    }
    const path = join(dir, 'offline-q3.jsonl');
    await writeFile(path, formatCassette(recorded));
    const replay = await agents(dir, 'thread', 'replay', path, '--json');
    expect(replay.code, replay.stderr + replay.stdout).toBe(0);
    const end = recorded.entries.find((entry) => entry.kind === 'end')!;
    expect(JSON.parse(replay.stdout)).toMatchObject({
      tree: end.tree,
      checkpoints: end.checkpoints,
      calls: [expect.objectContaining({ outcome: 'approved', isError: false })],
    });
  });
});

describe('agents thread replay of a call waiting at its second question', () => {
  it('the resume recorded at round 2 replays: both rounds answered as recorded', async () => {
    await addActor(
      'asker4',
      ['- tool_calls: [{ name: confirm_twice, args: { path: e.txt } }]', '- content: done'],
      'auto',
    );
    const thread = ['--thread', 'q4', '--no-prompt'];
    const paused = await agents(dir, 'actor', 'run', 'asker4', '--input', 'go', ...thread);
    expect(paused.code, paused.stderr).toBe(8);
    const first = await agents(
      dir,
      ...['actor', 'resume', 'asker4', '--answer', '{"confirm":true}', ...thread],
    );
    expect(first.code, 'answered once, the call waits at its second question').toBe(8);
    const second = await agents(
      dir,
      ...['actor', 'resume', 'asker4', '--answer', '{"sure":true}', ...thread],
      ...['--record', 'q4.jsonl'],
    );
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toContain('wrote');
    const recorded = parseCassette(await readFile(join(dir, 'q4.jsonl'), 'utf8'));
    expect(recorded.entries.find((entry) => entry.kind === 'thread')).toMatchObject({
      waiting: 'question',
      questions: [expect.objectContaining({ round: 2 })],
    });
    expect(recorded.entries.find((entry) => entry.kind === 'call')).toMatchObject({
      answers: [{ round: 1 }, { round: 2 }],
    });
    for (const entry of recorded.entries) {
      if (entry.kind !== 'actor') continue;
      for (const server of Object.values(entry.servers)) server['command'] = MISSING_SERVER;
    }
    const path = join(dir, 'offline-q4.jsonl');
    await writeFile(path, formatCassette(recorded));
    const replay = await agents(dir, 'thread', 'replay', path, '--json');
    expect(replay.code, replay.stderr + replay.stdout).toBe(0);
    const end = recorded.entries.find((entry) => entry.kind === 'end')!;
    expect(JSON.parse(replay.stdout)).toMatchObject({
      tree: end.tree,
      checkpoints: end.checkpoints,
      calls: [expect.objectContaining({ isError: false })],
    });
  });
});
