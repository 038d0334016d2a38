/**
 * What the CLI replay tests share: a scripted run recorded in a project with the fixture files
 * skill, and a copy of a cassette whose servers cannot start (a replay that spawned would fail).
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'vitest';
import { formatCassette, parseCassette, type Cassette } from '../../src/testing/index.js';
import { addScriptedActors, agents, putFixtureFilesSkill } from '../cli/helpers.js';

/** The command every offline cassette's servers get: nothing is there. */
export const MISSING_SERVER = '/nonexistent/agents-replay-server';

/** Runs actor `bot` (scripted `turns`, auto approvals) in `dir` with `--record run.jsonl`. */
export async function recordScriptedRun(dir: string, turns: string[]): Promise<Cassette> {
  await putFixtureFilesSkill(dir);
  await addScriptedActors(dir, turns, { mode: 'auto' });
  const run = await agents(dir, 'actor', 'run', 'bot', '--input', 'go', '--record', 'run.jsonl');
  expect(run.code, run.stderr).toBe(0);
  return parseCassette(await readFile(join(dir, 'run.jsonl'), 'utf8'));
}

/** A copy of `cassette` with its servers' commands pointing at {@link MISSING_SERVER}. */
export function offlineCopy(cassette: Cassette): Cassette {
  const copy = parseCassette(formatCassette(cassette));
  for (const entry of copy.entries) {
    if (entry.kind !== 'actor') continue;
    for (const server of Object.values(entry.servers)) server['command'] = MISSING_SERVER;
  }
  return copy;
}

/** Writes {@link offlineCopy} of `cassette` (after `edit`) to `dir/name`; returns the path. */
export async function writeOffline(
  dir: string,
  name: string,
  cassette: Cassette,
  edit: (value: Cassette) => void = () => {},
): Promise<string> {
  const copy = offlineCopy(cassette);
  edit(copy);
  const path = join(dir, name);
  await writeFile(path, formatCassette(copy));
  return path;
}
