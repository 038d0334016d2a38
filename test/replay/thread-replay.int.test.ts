/**
 * `agents actor run … --record` then `agents thread replay`: real runs (the fixture server as a
 * process over stdio, parallel write calls, an approval) are replayed with the server's command
 * gone and no model: same final tree, same checkpoint count, same policy outcomes. A tampered
 * result, argument and change set each exit 11 naming the step.
 */
import { existsSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseCassette, type Cassette } from '../../src/testing/index.js';
import {
  addScriptedActors,
  agents,
  agentsWithStdin,
  makeProjectRepo,
  putFixtureFilesSkill,
} from '../cli/helpers.js';
import { MISSING_SERVER, recordScriptedRun, writeOffline as writeOffline_ } from './helpers.js';

let dir: string;
let cassette: Cassette;

/** The cassette with the server's command pointing nowhere: a replay that spawned would fail. */
const writeOffline = (name: string, edit?: (value: Cassette) => void) =>
  writeOffline_(dir, name, cassette, edit);

beforeAll(async () => {
  dir = await makeProjectRepo('thread-replay-');
  cassette = await recordScriptedRun(dir, [
    '- tool_calls: [{ name: write_file, args: { path: a.txt, content: A1 } }, { name: write_file, args: { path: sub/b.txt, content: B1 } }, { name: add, args: { a: 2, b: 3 } }]',
    '- tool_calls: [{ name: write_file, args: { path: a.txt, content: A2 } }]',
    '- content: done',
  ]);
});

afterAll(async () => {
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

describe('agents thread replay', () => {
  it('rebuilds the run with no server and no model: same tree, checkpoints and outcomes', async () => {
    expect(existsSync(MISSING_SERVER), 'the server command is really missing').toBe(false);
    const path = await writeOffline('offline.jsonl');
    const replay = await agents(dir, 'thread', 'replay', path, '--json');
    expect(replay.code, replay.stderr + replay.stdout).toBe(0);
    const report = JSON.parse(replay.stdout) as {
      tree: string;
      checkpoints: number;
      calls: Array<{ toolId: string; outcome: string }>;
      treesChecked: number;
    };
    const end = cassette.entries.find((entry) => entry.kind === 'end')!;
    expect(report.tree).toBe(end.tree);
    expect(report.checkpoints).toBe(end.checkpoints);
    const recordedOutcomes = cassette.entries
      .flatMap((entry) =>
        entry.kind === 'call' ? [`${entry.toolId}:${entry.policy?.outcome}`] : [],
      )
      .sort();
    expect(report.calls.map((call) => `${call.toolId}:${call.outcome}`).sort()).toEqual(
      recordedOutcomes,
    );
    const recordedTrees = cassette.entries.filter(
      (entry) => entry.kind === 'call' && entry.tree !== undefined,
    );
    expect(recordedTrees.length).toBeGreaterThanOrEqual(3);
    expect(report.treesChecked).toBe(recordedTrees.length);
  });

  it('a tampered change set exits 11 naming the call whose tree differs', async () => {
    const path = await writeOffline('tampered-files.jsonl', (copy) => {
      const write = copy.entries.find(
        (entry) =>
          entry.kind === 'call' && entry.changes?.some((change) => change.path === 'sub/b.txt'),
      );
      expect(write, 'the recording has the sub/b.txt write').toBeDefined();
      if (write?.kind === 'call')
        write.changes = [{ path: 'sub/b.txt', mode: '100644', text: 'B9' }];
    });
    const replay = await agents(dir, 'thread', 'replay', path);
    expect(replay.code, replay.stdout).toBe(11);
    expect(replay.stderr).toMatch(
      /Replay diverged at call \d+ \(mcp:fs\/write_file, [^)]+\): the sandbox's tree after it/,
    );
    expect(replay.stderr).toContain('sub/b.txt');
  });

  it('a tampered argument exits 11 naming the exchange and the argument', async () => {
    const path = await writeOffline('tampered-arg.jsonl', (copy) => {
      const add = copy.entries.find(
        (entry) => entry.kind === 'mcp' && (entry.params as { name?: string })?.name === 'add',
      );
      expect(add, 'the recording has the add call').toBeDefined();
      if (add?.kind === 'mcp') (add.params as { arguments: { b: number } }).arguments.b = 4;
    });
    const replay = await agents(dir, 'thread', 'replay', path);
    expect(replay.code, replay.stdout).toBe(11);
    expect(replay.stderr).toMatch(
      /Replay diverged at fs exchange \d+: tools\/call add on fs was recorded with arguments.b = 4, the run sent 3/,
    );
  });

  it('a tampered result exits 11 naming the model turn that saw it', async () => {
    const path = await writeOffline('tampered-result.jsonl', (copy) => {
      const add = copy.entries.find(
        (entry) => entry.kind === 'mcp' && (entry.params as { name?: string })?.name === 'add',
      );
      if (add?.kind !== 'mcp') throw new Error('the recording has the add call');
      add.result = { content: [{ type: 'text', text: '6' }] };
    });
    const replay = await agents(dir, 'thread', 'replay', path);
    expect(replay.code, replay.stdout).toBe(11);
    expect(replay.stderr).toMatch(/Replay diverged at model turn 2: the messages in differ/);
  });

  it('--model live runs the actor model against the recorded tools', async () => {
    const path = await writeOffline('live.jsonl');
    const same = await agents(dir, 'thread', 'replay', path, '--model', 'live');
    expect(same.code, same.stderr).toBe(0);
    const end = cassette.entries.find((entry) => entry.kind === 'end')!;
    expect(same.stdout).toContain(`tree: ${end.tree}`);
    // A new script (the "new prompt", kept outside the project) asks for another argument.
    const script = await readFile(join(dir, 'script.yaml'), 'utf8');
    expect(script, 'the recorded script has the add call').toContain('b: 3');
    await writeFile(join(dir, 'new-script.yaml'), script.replace('b: 3', 'b: 5'));
    const changed = await writeOffline('live-changed.jsonl', (copy) => {
      const actor = copy.entries.find((entry) => entry.kind === 'actor')!;
      actor.config['model'] = `scripted:${join(dir, 'new-script.yaml')}`;
    });
    const other = await agents(dir, 'thread', 'replay', changed, '--model', 'live');
    expect(other.code, other.stdout).toBe(11);
    expect(other.stderr).toMatch(
      /tools\/call add on fs was recorded with arguments.b = 3, the run sent 5/,
    );
  });

  it('replays a format 2 cassette (the previous version) as it is', async () => {
    const path = await writeOffline('v2.jsonl', (copy) => {
      expect(copy.entries.some((entry) => entry.kind === 'thread')).toBe(false);
      copy.header.version = 2;
    });
    const replay = await agents(dir, 'thread', 'replay', path);
    expect(replay.code, replay.stderr).toBe(0);
    const end = cassette.entries.find((entry) => entry.kind === 'end')!;
    expect(replay.stdout).toContain(`tree: ${end.tree}`);
  });

  it('refuses a format 1 cassette saying to record the run again', async () => {
    const path = join(dir, 'v1.jsonl');
    await writeFile(
      path,
      `${JSON.stringify({ format: 'agents-cassette', version: 1 })}\n${JSON.stringify({ kind: 'model', turn: 1, input: [], output: { type: 'ai', content: 'x' } })}\n`,
    );
    const replay = await agents(dir, 'thread', 'replay', path);
    expect(replay.code).toBe(3);
    expect(replay.stderr).toMatch(/format version 1.*Record the run again with `agents actor run/);
  });
});

describe('agents thread replay of a run with an approval', () => {
  let askDir: string;
  afterAll(async () => {
    if (askDir !== undefined) await rm(askDir, { recursive: true, force: true });
  });

  it('answers the approval as recorded and ends on the same tree', async () => {
    askDir = await makeProjectRepo('thread-replay-ask-');
    await putFixtureFilesSkill(askDir);
    await addScriptedActors(
      askDir,
      [
        '- tool_calls: [{ name: write_file, args: { path: c.txt, content: C1 } }]',
        '- content: done',
      ],
      { mode: 'ask' },
    );
    const run = await agentsWithStdin(
      askDir,
      'y\n',
      'actor',
      'run',
      'bot',
      '--input',
      'go',
      '--record',
      'ask.jsonl',
      '--by',
      'alice',
    );
    expect(run.code, run.stderr).toBe(0);
    const recorded = parseCassette(await readFile(join(askDir, 'ask.jsonl'), 'utf8'));
    const call = recorded.entries.find((entry) => entry.kind === 'call');
    expect(call).toMatchObject({ policy: { outcome: 'approved', decidedBy: 'alice' } });
    const replay = await agents(askDir, 'thread', 'replay', 'ask.jsonl', '--json');
    expect(replay.code, replay.stderr + replay.stdout).toBe(0);
    const report = JSON.parse(replay.stdout) as { tree: string; calls: Array<{ outcome: string }> };
    const end = recorded.entries.find((entry) => entry.kind === 'end')!;
    expect(report.tree).toBe(end.tree);
    expect(report.calls.map((item) => item.outcome)).toEqual(['approved']);
  });
});
