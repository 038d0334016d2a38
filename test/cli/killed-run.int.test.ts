import { access, readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { findThreadSandboxes, threadSandboxDir } from '../../src/actors/thread-sandbox.js';
import {
  addFixtureFilesSkill,
  addScriptedActors,
  agentsProcess,
  makeProjectRepo,
} from './helpers.js';

/*
 * Issue 38 item 9: a run killed part-way is never taken as finished. The kill comes from the
 * run itself at a named boundary (AGENTS_TEST_KILL_AT, src/core/kill-point.ts), so the test
 * does not race a timer.
 */

const THREAD = 'killed-run';

async function sandboxFile(dir: string, file: string): Promise<string | undefined> {
  const location = (await findThreadSandboxes(join(dir, '.agents'), THREAD))[0];
  if (location === undefined) return undefined;
  const marker = JSON.parse(
    await readFile(join(location.sandboxDir, 'run', 'sandbox.json'), 'utf8'),
  ) as { root: string };
  return readFile(join(marker.root, file), 'utf8').catch(() => undefined);
}

describe('a run killed part-way (SIGKILL at a named boundary), then --continue', () => {
  let dir: string;

  beforeEach(async () => {
    dir = await makeProjectRepo('agents-killed-run-');
    await addFixtureFilesSkill(dir);
    await addScriptedActors(
      dir,
      [
        '- tool_calls: [{ name: write_file, args: { path: a.txt, content: "A1" } }]',
        '- tool_calls: [{ name: append_then_wait, args: { path: count.txt, line: "ran", ms: 0 } }]',
        '- content: done',
      ],
      { mode: 'auto' },
    );
  });

  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const killedRun = (killAt: string) =>
    agentsProcess(dir, ['actor', 'run', 'bot', '--input', 'go', '--thread', THREAD], undefined, {
      AGENTS_TEST_KILL_AT: killAt,
    });
  const resume = () =>
    agentsProcess(dir, [
      'actor',
      'resume',
      'bot',
      '--thread',
      THREAD,
      '--continue',
      '--keep-sandbox',
      '--json',
    ]);
  const endsOf = (stdout: string): string[] =>
    stdout
      .trim()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { type: string; name?: string })
      .filter((event) => event.type === 'tool-call-end')
      .map((event) => event.name ?? '');

  it(
    'killed before its second call is sent (the first completed): --continue runs the rest, the first call never again',
    { timeout: 60_000 },
    async () => {
      const run = await killedRun('before-send:2');
      // Precondition: the run died at the kill point, after the first call.
      expect(run.code, run.stderr).toBeNull();
      expect(run.stdout).toContain('write_file');
      expect(await sandboxFile(dir, 'count.txt')).toBeUndefined();

      const resumed = await resume();
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(resumed.stderr).not.toContain('nothing to continue');
      expect(endsOf(resumed.stdout), resumed.stdout).toEqual(['append_then_wait']);
      expect(await sandboxFile(dir, 'count.txt')).toBe('ran\n');
      expect(await sandboxFile(dir, 'a.txt')).toBe('A1');
    },
  );

  it(
    'killed before its first model call completed: the input is kept and --continue runs the whole run once',
    { timeout: 60_000 },
    async () => {
      const run = await killedRun('before-model:1');
      expect(run.code, run.stderr).toBeNull();
      expect(run.stdout).not.toContain('write_file');

      const resumed = await resume();
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(resumed.stderr).toContain('the model turn that did not finish runs again');
      expect(endsOf(resumed.stdout), resumed.stdout).toEqual(['write_file', 'append_then_wait']);
      expect(await sandboxFile(dir, 'count.txt')).toBe('ran\n');
      expect(await sandboxFile(dir, 'a.txt')).toBe('A1');
    },
  );

  it(
    'killed while it made the sandbox: the next run removes the half-made sandbox and runs (#38 item 10)',
    { timeout: 60_000 },
    async () => {
      const run = await killedRun('sandbox-create:1');
      expect(run.code, run.stderr).toBeNull();
      // Precondition: a half-made sandbox (store, no marker) is left in the thread's folder.
      const sandboxDir = join(threadSandboxDir(join(dir, '.agents'), 'bot', THREAD), 'sandbox');
      expect((await readdir(sandboxDir)).sort()).toContain('run');
      await expect(access(join(sandboxDir, 'run', 'sandbox.json'))).rejects.toThrow();
      const again = await agentsProcess(dir, [
        'actor',
        'run',
        'bot',
        '--input',
        'go',
        '--thread',
        THREAD,
        '--keep-sandbox',
        '--json',
      ]);
      expect(again.stderr).not.toContain('the folder is not empty');
      expect(again.code, again.stderr).toBe(0);
      expect(endsOf(again.stdout)).toEqual(['write_file', 'append_then_wait']);
      expect(await sandboxFile(dir, 'count.txt')).toBe('ran\n');
    },
  );
});
