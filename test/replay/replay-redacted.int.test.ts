/**
 * Redacted files in `agents thread replay`: a base file with a secret and a call that writes one
 * are recorded masked, with the real bytes' content id; the replay writes the masked text and
 * still compares every tree (the placeholder counts as the recorded id) instead of leaving the
 * trees after it unchecked.
 */
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatCassette, parseCassette, type Cassette } from '../../src/testing/index.js';
import { agents, makeProjectRepo } from '../cli/helpers.js';
import { recordScriptedRun } from './helpers.js';

let dir: string;
let cassette: Cassette;

beforeAll(async () => {
  dir = await makeProjectRepo('replay-redacted-');
  await writeFile(join(dir, 'settings.yaml'), 'name: demo\npassword: hunter2-base\n');
  cassette = await recordScriptedRun(dir, [
    '- tool_calls: [{ name: write_file, args: { path: app.env, content: "API_KEY=later-masked" } }]',
    '- tool_calls: [{ name: write_file, args: { path: a.txt, content: A1 } }]',
    '- content: done',
  ]);
});

afterAll(async () => {
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

describe('agents thread replay of redacted files', () => {
  it('writes the masked files and still checks every tree by the recorded content ids', async () => {
    const base = cassette.entries.find((entry) => entry.kind === 'base')!;
    const settings = base.files.find((file) => file.path === 'settings.yaml');
    expect(settings).toMatchObject({ text: 'name: demo\npassword: ***\n', redacted: true });
    expect(settings?.id).toMatch(/^[0-9a-f]{40,64}$/);
    expect(JSON.stringify(base)).not.toContain('hunter2-base');
    const write = cassette.entries.find(
      (entry) => entry.kind === 'call' && entry.changes?.[0]?.path === 'app.env',
    );
    expect(write).toMatchObject({ changes: [{ text: 'API_KEY=***', redacted: true }] });

    const replay = await agents(dir, 'thread', 'replay', 'run.jsonl', '--json');
    expect(replay.code, replay.stderr + replay.stdout).toBe(0);
    const report = JSON.parse(replay.stdout) as {
      tree: string;
      treesChecked: number;
      treesUnchecked: number;
      redacted: string[];
    };
    const end = cassette.entries.find((entry) => entry.kind === 'end')!;
    expect(report.tree).toBe(end.tree);
    expect(report.treesUnchecked).toBe(0);
    expect(report.treesChecked).toBe(2);
    expect(report.redacted).toEqual(['app.env', 'settings.yaml']);
    const text = await agents(dir, 'thread', 'replay', 'run.jsonl');
    expect(text.stdout).toContain('redacted: app.env, settings.yaml (written as recorded, masked');

    // A placeholder is no free pass: a wrong content id is a tree divergence at the base.
    const wrong = parseCassette(formatCassette(cassette));
    const wrongBase = wrong.entries.find((entry) => entry.kind === 'base')!;
    wrongBase.files.find((file) => file.path === 'settings.yaml')!.id = '0'.repeat(40);
    await writeFile(join(dir, 'wrong.jsonl'), formatCassette(wrong));
    const diverged = await agents(dir, 'thread', 'replay', 'wrong.jsonl');
    expect(diverged.code, diverged.stdout).toBe(11);
    expect(diverged.stderr).toContain('Replay diverged at the base');
  });
});
