/**
 * `agents thread replay --tools live`: the recorded model turns against the fixture server
 * started for real. The same server replays to the recorded tree; a "newer version" of it (the
 * fixture's FIXTURE_ADD_OFFSET, set in the cassette's server config) answers `add` otherwise,
 * which exits 11 naming the call and the differing value.
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
  dir = await makeProjectRepo('replay-live-tools-');
  cassette = await recordScriptedRun(dir, [
    '- tool_calls: [{ name: write_file, args: { path: a.txt, content: A1 } }, { name: add, args: { a: 2, b: 3 } }]',
    '- content: done',
  ]);
});

afterAll(async () => {
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

describe('agents thread replay --tools live', () => {
  it('the same server replays to the recorded tree; an upgraded one that answers otherwise diverges naming the call', async () => {
    const end = cassette.entries.find((entry) => entry.kind === 'end')!;
    const same = await agents(dir, 'thread', 'replay', 'run.jsonl', '--tools', 'live', '--json');
    expect(same.code, same.stderr + same.stdout).toBe(0);
    const report = JSON.parse(same.stdout) as { tree: string; treesChecked: number };
    expect(report.tree).toBe(end.tree);
    expect(report.treesChecked).toBeGreaterThanOrEqual(1);

    const upgraded = parseCassette(formatCassette(cassette));
    const actor = upgraded.entries.find((entry) => entry.kind === 'actor')!;
    expect(Object.keys(actor.servers), 'the recording names its server').toEqual(['fs']);
    actor.servers['fs']!['env'] = { FIXTURE_ADD_OFFSET: '1' };
    await writeFile(join(dir, 'upgraded.jsonl'), formatCassette(upgraded));
    const other = await agents(dir, 'thread', 'replay', 'upgraded.jsonl', '--tools', 'live');
    expect(other.code, other.stderr + other.stdout).toBe(11);
    expect(other.stderr).toMatch(
      /Replay diverged at call \d \(mcp:fs\/add, [^)]+\): tools\/call add on fs answered result\.content\[0\]\.text = "6" live, the recording has "5"/,
    );
  });
});
