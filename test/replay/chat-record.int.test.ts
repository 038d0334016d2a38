/**
 * `agents chat … --record` then `agents thread replay`: a scripted conversation (two turns, the
 * first call rejected, the second approved) against the fixture server as a process over stdio
 * is replayed with the server's command gone and no model: same final tree, same checkpoints.
 */
import { existsSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
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
import { MISSING_SERVER, writeOffline } from './helpers.js';

let dir: string;

beforeAll(async () => {
  dir = await makeProjectRepo('chat-record-');
  await putFixtureFilesSkill(dir);
  // Each turn runs the script again: write a.txt (asks for approval), then answer.
  await addScriptedActors(
    dir,
    ['- tool_calls: [{ name: write_file, args: { path: a.txt, content: A1 } }]', '- content: done'],
    { mode: 'ask' },
  );
});

afterAll(async () => {
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

describe('agents chat --record', () => {
  it('writes a cassette of every turn that thread replay reproduces offline', async () => {
    const lines = ['Write a.txt please', 'r not yet', '/undo', 'Now write it', 'a', '/exit'];
    const chat = await agentsWithStdin(
      dir,
      `${lines.join('\n')}\n`,
      ...['chat', 'bot', '--thread', 'c1', '--record', '--by', 'alice'],
    );
    expect(chat.code, chat.stderr).toBe(0);
    const path = join(dir, 'c1.cassette.jsonl');
    expect(chat.stdout.trimEnd().split('\n').at(-1)).toBe(`cassette: ${path}`);
    expect(chat.stderr).toContain('/undo is not available while the chat is recorded');

    const cassette: Cassette = parseCassette(await readFile(path, 'utf8'));
    expect(cassette.entries.filter((entry) => entry.kind === 'run')).toEqual([
      { kind: 'run', mode: 'run', input: 'Write a.txt please' },
      { kind: 'run', mode: 'run', input: 'Now write it' },
    ]);
    const outcomes = cassette.entries.flatMap((entry) =>
      entry.kind === 'call' ? [entry.policy?.outcome] : [],
    );
    expect(outcomes).toEqual(['rejected', 'approved']);
    const end = cassette.entries.find((entry) => entry.kind === 'end')!;
    expect(end.tree).toMatch(/^sha256:/);
    expect(end.checkpoints).toBeGreaterThan(4);

    // No server to start: its command points nowhere; no model: the turns come from the cassette.
    expect(existsSync(MISSING_SERVER), 'the server command is really missing').toBe(false);
    const offline = await writeOffline(dir, 'offline.jsonl', cassette);
    const replay = await agents(dir, 'thread', 'replay', offline, '--json');
    expect(replay.code, replay.stderr + replay.stdout).toBe(0);
    const report = JSON.parse(replay.stdout) as {
      tree: string;
      checkpoints: number;
      calls: Array<{ outcome: string }>;
      treesChecked: number;
    };
    expect(report.tree).toBe(end.tree);
    expect(report.checkpoints).toBe(end.checkpoints);
    expect(report.calls.map((call) => call.outcome)).toEqual(['rejected', 'approved']);
    expect(report.treesChecked).toBe(1);
  });
});
