import { randomUUID } from 'node:crypto';
import { access, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { STATE_DIR_ENV } from '../../src/sandbox/state-dir.js';
import {
  FAILED_START_CASES,
  failingProject,
  listTree,
  markedProcesses,
} from '../helpers/failed-start.js';
import { agents } from './helpers.js';

const EXIT_CODE_OF: Record<string, number> = {
  CONFIG_INVALID: 3,
  CONFIG_NOT_FOUND: 3,
  SERVER_START_FAILED: 5,
  SANDBOX_FAILED: 7,
  REVISION_NOT_FOUND: 4,
};

describe('agents actor run: sandboxes of failed starts and of runs without --thread', () => {
  let stateDir: string;
  let previous: string | undefined;
  const projects: string[] = [];
  beforeEach(async () => {
    stateDir = await mkdtemp(join(tmpdir(), 'agents-cli-failed-start-state-'));
    previous = process.env[STATE_DIR_ENV];
    process.env[STATE_DIR_ENV] = stateDir;
  });
  afterEach(async () => {
    if (previous === undefined) delete process.env[STATE_DIR_ENV];
    else process.env[STATE_DIR_ENV] = previous;
    await rm(stateDir, { recursive: true, force: true });
    for (const dir of projects.splice(0)) await rm(dir, { recursive: true, force: true });
  });

  for (const failure of FAILED_START_CASES) {
    it(`${failure.kind}: exits with its code and leaves the state folder as it was`, async () => {
      const mark = randomUUID();
      const { dir } = await failingProject(failure, mark);
      projects.push(dir);
      const before = await listTree(stateDir);
      const run = await agents(dir, 'actor', 'run', 'bot', '--input', 'go');
      expect(run.code, run.stderr).toBe(EXIT_CODE_OF[failure.code]);
      expect(await listTree(stateDir)).toEqual(before);
      expect(await markedProcesses(mark)).toEqual([]);
    });
  }

  it('removes the sandbox of a finished run without --thread, keeps it with --keep-sandbox, and keeps a named thread', async () => {
    const { dir } = await failingProject({ ...FAILED_START_CASES[0]!, actor: {} }, randomUUID());
    projects.push(dir);
    const before = await listTree(stateDir);

    const plain = await agents(dir, 'actor', 'run', 'bot', '--input', 'go');
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stderr).toContain('sandbox removed');
    expect(await listTree(stateDir)).toEqual(before);

    const kept = await agents(dir, 'actor', 'run', 'bot', '--input', 'go', '--keep-sandbox');
    expect(kept.code, kept.stderr).toBe(0);
    const sandbox = /sandbox: (\S+)/.exec(kept.stderr)?.[1] ?? '';
    expect(sandbox).not.toBe('');
    await access(sandbox);
    expect(sandbox.startsWith(stateDir)).toBe(true);

    const named = await agents(dir, 'actor', 'run', 'bot', '--input', 'go', '--thread', 'mine');
    expect(named.code, named.stderr).toBe(0);
    const checkpoints = await agents(dir, 'checkpoints', '--thread', 'mine', '--json');
    expect(checkpoints.code, checkpoints.stderr).toBe(0);
  });

  it('says in --help what keeps a sandbox', async () => {
    const help = await agents(tmpdir(), 'actor', 'run', '--help');
    expect(help.stdout + help.stderr).toMatch(/removed at the end unless --keep-sandbox/);
  });
});
