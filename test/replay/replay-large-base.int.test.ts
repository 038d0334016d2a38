/**
 * A project larger than the base budget (256 KiB) is recorded with its base as a listing of
 * content ids, not its files: the cassette stays small, a cassette replay still checks every
 * tree, and a replay with live servers asks for the project (`--base DIR`) and checks it.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, stat, writeFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Cassette } from '../../src/testing/index.js';
import { agents, makeProjectRepo } from '../cli/helpers.js';
import { recordScriptedRun } from './helpers.js';

let dir: string;
let cassette: Cassette;
const PROJECT_BYTES = 400 * 1024;

beforeAll(async () => {
  dir = await makeProjectRepo('replay-large-base-');
  await mkdir(join(dir, 'src'));
  for (let index = 0; index < 400; index++) {
    const line = `export const value${index} = ${index};\n`;
    await writeFile(join(dir, 'src', `m${index}.ts`), line.repeat(Math.ceil(1024 / line.length)));
  }
  execFileSync('git', ['add', '-A'], { cwd: dir });
  execFileSync('git', ['commit', '-qm', 'project'], { cwd: dir });
  cassette = await recordScriptedRun(dir, [
    '- tool_calls: [{ name: write_file, args: { path: src/m1.ts, content: changed } }]',
    '- content: done',
  ]);
});

afterAll(async () => {
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

describe('a large base', () => {
  it('is listed by content id; replays offline, and with live tools from --base DIR', async () => {
    const base = cassette.entries.find((entry) => entry.kind === 'base')!;
    expect(base.files).toEqual([]);
    expect(base.listing?.length).toBeGreaterThanOrEqual(401);
    expect(base.listing?.find((file) => file.path === 'src/m1.ts')?.id).toMatch(/^[0-9a-f]{40}/);
    const size = (await stat(join(dir, 'run.jsonl'))).size;
    expect(size).toBeLessThan(PROJECT_BYTES / 4);

    const end = cassette.entries.find((entry) => entry.kind === 'end')!;
    const offline = await agents(dir, 'thread', 'replay', 'run.jsonl', '--json');
    expect(offline.code, offline.stderr + offline.stdout).toBe(0);
    const report = JSON.parse(offline.stdout) as { tree: string; treesChecked: number };
    expect(report.tree).toBe(end.tree);
    expect(report.treesChecked).toBe(1);

    const refused = await agents(dir, 'thread', 'replay', 'run.jsonl', '--tools', 'live');
    expect(refused.code).toBe(3);
    expect(refused.stderr).toMatch(/holds its base \(\d+ files\) as content ids only.*--base DIR/);
    // The run wrote in its sandbox only: the project folder is still the recorded base.
    const live = await agents(
      dir,
      ...['thread', 'replay', 'run.jsonl', '--tools', 'live', '--base', '.'],
    );
    expect(live.code, live.stderr + live.stdout).toBe(0);
    expect(live.stdout).toContain(`tree: ${end.tree}`);
  });
});
