/**
 * `agents actor run … --record`: a real run (the fixture server over stdio in the actor's
 * sandbox, a scripted model) leaves a cassette with its model turns and MCP exchanges, the
 * sandbox written as `.`, and says where on its last line.
 */
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseCassette } from '../../src/testing/index.js';
import {
  addScriptedActors,
  agents,
  makeProjectRepo,
  putFixtureFilesSkill,
} from '../cli/helpers.js';

let dir: string;

beforeAll(async () => {
  dir = await makeProjectRepo('actor-record-');
  await putFixtureFilesSkill(dir);
  await addScriptedActors(
    dir,
    [
      '- tool_calls: [{ name: write_file, args: { path: a.txt, content: A1 } }, { name: add, args: { a: 2, b: 3 } }]',
      '- content: done',
    ],
    { mode: 'auto' },
  );
});

afterAll(async () => {
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

describe('agents actor run --record', () => {
  it('writes a cassette of the run and names it on the last line', async () => {
    const run = await agents(
      dir,
      'actor',
      'run',
      'bot',
      '--input',
      'go',
      '--record',
      '--thread',
      'r1',
    );
    expect(run.code, run.stderr).toBe(0);
    const last = run.stdout.trimEnd().split('\n').at(-1);
    expect(last).toBe(`cassette: ${join(dir, 'r1.cassette.jsonl')}`);
    const text = await readFile(join(dir, 'r1.cassette.jsonl'), 'utf8');
    const cassette = parseCassette(text);
    const turns = cassette.entries.filter((entry) => entry.kind === 'model');
    expect(turns).toHaveLength(2);
    const calls = cassette.entries.flatMap((entry) =>
      entry.kind === 'mcp' && entry.method === 'tools/call'
        ? [(entry.params as { name: string }).name]
        : [],
    );
    expect(calls.sort()).toEqual(['add', 'write_file']);
    expect(text).toContain('"server":"fs"');
    const stateDir = process.env['AGENTS_STATE_DIR'];
    expect(stateDir, 'the test setup sets a state folder').toBeDefined();
    expect(text).not.toContain(stateDir!);
    // The file side (format 2): the actor, the input, the base files, each call's change set
    // and tree id, and the end.
    const kinds = new Set(cassette.entries.map((entry) => entry.kind));
    expect([...kinds]).toEqual(expect.arrayContaining(['actor', 'run', 'base', 'call', 'end']));
    const base = cassette.entries.find((entry) => entry.kind === 'base')!;
    expect(base.files.map((file) => file.path)).toContain('README.md');
    expect(base.tree).toMatch(/^sha256:[0-9a-f]{64}$/);
    const write = cassette.entries.find(
      (entry) => entry.kind === 'call' && entry.toolId === 'mcp:fs/write_file',
    );
    expect(write).toMatchObject({
      policy: { outcome: 'allowed' },
      changes: [{ path: 'a.txt', mode: '100644', text: 'A1' }],
      tree: expect.stringMatching(/^sha256:/),
    });
    const end = cassette.entries.find((entry) => entry.kind === 'end')!;
    expect(end.tree).toBe((write as { tree: string }).tree);
    expect(end.checkpoints).toBeGreaterThan(2);
  });

  it('takes an explicit PATH', async () => {
    const run = await agents(
      dir,
      'actor',
      'run',
      'bot',
      '--input',
      'go',
      '--record',
      'runs/x.jsonl',
    );
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.trimEnd().split('\n').at(-1)).toBe(`cassette: ${join(dir, 'runs/x.jsonl')}`);
    expect(
      parseCassette(await readFile(join(dir, 'runs/x.jsonl'), 'utf8')).entries.length,
    ).toBeGreaterThan(3);
  });

  it('records when the actor says record: true, and on actor resume --record', async () => {
    await writeFile(
      join(dir, '.agents', 'actors', 'rec.yaml'),
      'skills: [files]\nmodel: scripted:script.yaml\nrecord: true\npolicy:\n  mode: ask\n',
    );
    // Paused at the write's approval (no prompt), recorded because of the YAML.
    const run = await agents(
      dir,
      'actor',
      'run',
      'rec',
      '--input',
      'go',
      '--thread',
      'y1',
      '--no-prompt',
    );
    expect(run.code, run.stderr).toBe(8);
    expect(run.stdout.trimEnd().split('\n').at(-1)).toBe(
      `cassette: ${join(dir, 'y1.cassette.jsonl')}`,
    );
    const first = parseCassette(await readFile(join(dir, 'y1.cassette.jsonl'), 'utf8'));
    expect(first.entries.find((entry) => entry.kind === 'run')).toEqual({
      kind: 'run',
      mode: 'run',
      input: 'go',
    });
    const resume = await agents(
      dir,
      'actor',
      'resume',
      'rec',
      '--thread',
      'y1',
      '--approve',
      '--by',
      'bob',
      '--record',
      'resumed.jsonl',
    );
    expect(resume.code, resume.stderr).toBe(0);
    expect(resume.stdout.trimEnd().split('\n').at(-1)).toBe(
      `cassette: ${join(dir, 'resumed.jsonl')}`,
    );
    const resumed = parseCassette(await readFile(join(dir, 'resumed.jsonl'), 'utf8'));
    expect(resumed.entries.find((entry) => entry.kind === 'run')).toEqual({
      kind: 'run',
      mode: 'continue',
    });
    expect(
      resumed.entries.find(
        (entry) => entry.kind === 'call' && entry.toolId === 'mcp:fs/write_file',
      ),
    ).toMatchObject({ policy: { outcome: 'approved', decidedBy: 'bob' } });
  });
});
