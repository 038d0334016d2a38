/**
 * Record and replay of a run whose turns mix grouped read-only calls with writes (issue 37: an
 * actor runs a turn's read-only, allowed calls in one LangGraph task): `agents thread replay`
 * rebuilds it with no server and no model, same tree, checkpoints and outcomes, and each call
 * of the recording answered once.
 */
import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Cassette } from '../../src/testing/index.js';
import { agents, makeProjectRepo } from '../cli/helpers.js';
import { recordScriptedRun, writeOffline } from './helpers.js';

let dir: string;
let cassette: Cassette;

beforeAll(async () => {
  dir = await makeProjectRepo('replay-grouped-');
  cassette = await recordScriptedRun(dir, [
    '- tool_calls: [{ name: read_file, args: { path: README.md } }, { name: write_file, args: { path: a.txt, content: A1 } }, { name: list_directory, args: { path: . } }, { name: read_file, args: { path: README.md } }]',
    '- tool_calls: [{ name: read_file, args: { path: a.txt } }, { name: write_file, args: { path: a.txt, content: A2 } }, { name: list_directory, args: { path: . } }]',
    '- content: done',
  ]);
});

afterAll(async () => {
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

describe('agents thread replay of grouped read-only calls', () => {
  it('replays clean: same tree, checkpoints and outcomes, every call once', async () => {
    // The precondition: the reads are read-only, allowed calls (what the actor groups).
    for (const tool of ['read_file', 'list_directory']) {
      const shown = await agents(dir, 'tool', 'show', tool, '--json');
      expect(shown.code, shown.stderr).toBe(0);
      const descriptor = JSON.parse(shown.stdout) as {
        capabilities: { readOnly: { value: boolean } };
      };
      expect(descriptor.capabilities.readOnly.value, tool).toBe(true);
    }
    const recorded = cassette.entries.filter((entry) => entry.kind === 'call');
    expect(recorded).toHaveLength(7);

    const path = await writeOffline(dir, 'offline.jsonl', cassette);
    const replay = await agents(dir, 'thread', 'replay', path, '--json');
    expect(replay.code, replay.stderr + replay.stdout).toBe(0);
    const report = JSON.parse(replay.stdout) as {
      tree: string;
      checkpoints: number;
      calls: Array<{ toolId: string; outcome: string }>;
    };
    const end = cassette.entries.find((entry) => entry.kind === 'end')!;
    expect(report.tree).toBe(end.tree);
    expect(report.checkpoints).toBe(end.checkpoints);
    expect(report.calls.map((call) => `${call.toolId}:${call.outcome}`).sort()).toEqual(
      recorded.map((entry) => `${entry.toolId}:${entry.policy?.outcome}`).sort(),
    );
  });
});
