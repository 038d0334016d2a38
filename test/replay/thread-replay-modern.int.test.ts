/**
 * `agents actor run … --record` then `agents thread replay` against the 2026-07-28-only fixture
 * server: a call whose server asks a question first (`input_required`, answered on the
 * terminal) and a call the server turns into a task (followed with polls). The replay, with the
 * server's command gone and no model, answers the question as recorded and ends on the same
 * tree, checkpoint count and policy outcomes.
 */
import { existsSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatCassette, parseCassette, type Cassette } from '../../src/testing/index.js';
import { agents, agentsWithStdin, makeCountingModernProject } from '../cli/helpers.js';

const MISSING_SERVER = '/nonexistent/agents-replay-modern';

let dir: string;
let counterDir: string;
let cassette: Cassette;

beforeAll(async () => {
  const project = await makeCountingModernProject('replay-modern-cli-', 'modern-skill');
  ({ dir, counterDir } = project);
  const server = await project.store.get('server', 'modern');
  await project.store.put(
    'server',
    'modern',
    {
      ...server,
      env: {
        MODERN_FIXTURE_COUNTER: project.counter,
        MODERN_FIXTURE_TASKS: '1',
        MODERN_FIXTURE_POLL_MS: '20',
      },
    } as never,
    { overwrite: true },
  );
  await writeFile(
    join(dir, 'script.yaml'),
    [
      '- tool_calls: [{ name: confirm_write, args: { path: a.txt } }]',
      '- tool_calls: [{ name: slow_count, args: { text: three } }]',
      '- content: done',
      '',
    ].join('\n'),
  );
  await project.store.put('actor', 'asker', {
    skills: ['modern-skill'],
    model: 'scripted:script.yaml',
    policy: { mode: 'auto' },
  });
  // "a" answers the server's question, "yes" fills in its one field (confirm).
  const run = await agentsWithStdin(
    dir,
    'a\nyes\n',
    'actor',
    'run',
    'asker',
    '--input',
    'go',
    '--record',
    'modern.jsonl',
  );
  expect(run.code, run.stderr).toBe(0);
  expect(run.stdout).toMatch(/wrote \S*a\.txt/);
  expect(run.stdout).toContain('counted three');
  cassette = parseCassette(await readFile(join(dir, 'modern.jsonl'), 'utf8'));
});

afterAll(async () => {
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  if (counterDir !== undefined) await rm(counterDir, { recursive: true, force: true });
});

/** The recording with the server's command pointing nowhere. */
async function offline(name: string, edit: (copy: Cassette) => void = () => {}): Promise<string> {
  const copy = parseCassette(formatCassette(cassette));
  for (const entry of copy.entries) {
    if (entry.kind === 'actor') {
      for (const server of Object.values(entry.servers)) server['command'] = MISSING_SERVER;
    }
  }
  edit(copy);
  const path = join(dir, name);
  await writeFile(path, formatCassette(copy));
  return path;
}

describe('agents thread replay of a 2026-07-28 server', () => {
  it('replays the input_required round and the task offline: same tree, checkpoints, outcomes', async () => {
    const methods = cassette.entries.flatMap((entry) =>
      entry.kind === 'mcp' ? [entry.method] : [],
    );
    expect(methods, 'the recording followed a task').toContain('tasks/get');
    const retried = cassette.entries.filter(
      (entry) =>
        entry.kind === 'mcp' &&
        entry.method === 'tools/call' &&
        (entry.params as { inputResponses?: unknown }).inputResponses !== undefined,
    );
    expect(retried, 'the recording has the call sent again with the answer').toHaveLength(1);
    expect(existsSync(MISSING_SERVER)).toBe(false);
    const path = await offline('offline.jsonl');
    const replay = await agents(dir, 'thread', 'replay', path, '--json');
    expect(replay.code, replay.stderr + replay.stdout).toBe(0);
    const report = JSON.parse(replay.stdout) as {
      tree: string;
      checkpoints: number;
      calls: Array<{ toolId: string; outcome?: string; isError: boolean }>;
    };
    const end = cassette.entries.find((entry) => entry.kind === 'end')!;
    expect(report.tree).toBe(end.tree);
    expect(report.checkpoints).toBe(end.checkpoints);
    const recorded = cassette.entries.flatMap((entry) =>
      entry.kind === 'call' ? [`${entry.toolId}:${entry.policy?.outcome}`] : [],
    );
    expect(report.calls.map((call) => `${call.toolId}:${call.outcome}`).sort()).toEqual(
      recorded.sort(),
    );
    expect(report.calls.every((call) => !call.isError)).toBe(true);
  });

  it('a task result tampered with diverges at the model turn that saw it', async () => {
    const path = await offline('tampered-task.jsonl', (copy) => {
      let tampered = 0;
      copy.entries = copy.entries.map((entry) => {
        if (entry.kind !== 'mcp' || !JSON.stringify(entry).includes('counted three')) return entry;
        tampered++;
        return JSON.parse(JSON.stringify(entry).replaceAll('counted three', 'counted four'));
      });
      expect(tampered, 'the recording has the task result').toBeGreaterThan(0);
    });
    const replay = await agents(dir, 'thread', 'replay', path);
    expect(replay.code, replay.stdout + replay.stderr).toBe(11);
    expect(replay.stderr).toMatch(/Replay diverged at model turn 3: the messages in differ/);
    expect(replay.stderr).toContain('counted four');
  });

  it('an answer edited in the cassette diverges at the call sent again with it', async () => {
    const answered = cassette.entries.find(
      (entry) => entry.kind === 'call' && entry.answers !== undefined,
    );
    expect(answered, 'the recording notes the answer on its call').toMatchObject({
      toolId: expect.stringContaining('confirm_write'),
      answers: [{ round: 1 }],
    });
    expect(JSON.stringify(answered)).toContain('"action":"accept"');
    const confirmed = (text: string) => text.includes('"confirm":true');
    // The answer as the call entry records it, then as the retry sent it: either edit is seen.
    for (const [name, kind, recorded, sent] of [
      ['edited-answer.jsonl', 'call', true, false],
      ['edited-retry.jsonl', 'mcp', false, true],
    ] as const) {
      const path = await offline(name, (copy) => {
        let edited = 0;
        copy.entries = copy.entries.map((entry) => {
          const text = JSON.stringify(entry);
          if (entry.kind !== kind || !confirmed(text)) return entry;
          edited++;
          return JSON.parse(text.replaceAll('"confirm":true', '"confirm":false')) as typeof entry;
        });
        expect(edited, `the recording has the answer in a ${kind} entry`).toBe(1);
      });
      const replay = await agents(dir, 'thread', 'replay', path);
      expect(replay.code, replay.stdout + replay.stderr).toBe(11);
      expect(replay.stderr).toMatch(
        new RegExp(
          `Replay diverged at modern exchange \\d+: tools/call confirm_write on modern was recorded with inputResponses\\.\\S+\\.content\\.confirm = ${recorded}, the run sent ${sent}\\.`,
        ),
      );
    }
  });

  it('a question answered with `actor resume --answer` replays from the recorded pause', async () => {
    const paused = await agents(
      dir,
      ...['actor', 'run', 'asker', '--input', 'go', '--thread', 'q1', '--no-prompt'],
    );
    expect(paused.code, paused.stderr).toBe(8);
    const resumed = await agents(
      dir,
      ...['actor', 'resume', 'asker', '--thread', 'q1', '--answer', '{"confirm":true}'],
      ...['--no-prompt', '--record', 'answer.jsonl'],
    );
    expect(resumed.code, resumed.stderr).toBe(0);
    const recorded = parseCassette(await readFile(join(dir, 'answer.jsonl'), 'utf8'));
    expect(recorded.entries.find((entry) => entry.kind === 'thread')).toMatchObject({
      waiting: 'question',
      next: ['tools'],
    });
    const answered = recorded.entries.find((entry) => entry.kind === 'call' && entry.answers);
    expect(JSON.stringify(answered), 'the resume noted the answer given').toContain(
      '"confirm":true',
    );
    for (const entry of recorded.entries) {
      if (entry.kind === 'actor') {
        for (const server of Object.values(entry.servers)) server['command'] = MISSING_SERVER;
      }
    }
    const path = join(dir, 'offline-answer.jsonl');
    await writeFile(path, formatCassette(recorded));
    const replay = await agents(dir, 'thread', 'replay', path, '--json');
    expect(replay.code, replay.stderr + replay.stdout).toBe(0);
    const report = JSON.parse(replay.stdout) as { tree: string; checkpoints: number };
    const end = recorded.entries.find((entry) => entry.kind === 'end')!;
    expect(report).toMatchObject({ tree: end.tree, checkpoints: end.checkpoints });
    // Written before calls carried their answers: answered from the recorded retry, as then.
    const older = join(dir, 'offline-answer-older.jsonl');
    await writeFile(
      older,
      formatCassette({
        ...recorded,
        entries: recorded.entries.map((entry) => {
          if (entry.kind !== 'call') return entry;
          const { answers: _answers, ...rest } = entry;
          return rest;
        }),
      }),
    );
    expect(await readFile(older, 'utf8')).not.toContain('"answers"');
    const replayOlder = await agents(dir, 'thread', 'replay', older, '--json');
    expect(replayOlder.code, replayOlder.stderr + replayOlder.stdout).toBe(0);
    expect(JSON.parse(replayOlder.stdout)).toMatchObject({
      tree: end.tree,
      checkpoints: end.checkpoints,
    });
  });
});
