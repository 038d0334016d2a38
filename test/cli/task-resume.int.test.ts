import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startModernFixtureProcess, type FixtureProcess } from '../fixtures/fixture-process.js';
import { addScriptedActors, agents, agentsProcess, makeProjectRepo } from './helpers.js';

/*
 * Issue 38 item 11: an actor run killed while a tool call works as an MCP task (the 2026 fixture
 * over HTTP, so the task outlives the worker) follows the same task on `--continue`: the tool
 * starts once, and the task's result reaches the thread.
 */

const cleanup: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const undo of cleanup.reverse()) await undo();
});

const SCRIPT = ['- tool_calls: [{ name: slow_count, args: { text: "sheep" } }]', '- content: done'];

describe('actor run killed in an MCP task, then --continue (#38 item 11)', () => {
  it('polls the noted task instead of calling the tool again', { timeout: 60_000 }, async () => {
    const counterDir = await mkdtemp(join(tmpdir(), 'agents-task-resume-'));
    cleanup.push(() => rm(counterDir, { recursive: true, force: true }));
    const counter = join(counterDir, 'executions.txt');
    const server: FixtureProcess = await startModernFixtureProcess([], {
      MODERN_FIXTURE_TASKS: '1',
      MODERN_FIXTURE_COUNTER: counter,
      // Slow enough polls that the task is still working when the worker is killed.
      MODERN_FIXTURE_POLL_MS: '300',
    });
    cleanup.push(() => server.close());
    const dir = await makeProjectRepo('agents-task-resume-');
    cleanup.push(() => rm(dir, { recursive: true, force: true }));
    expect((await agents(dir, 'server', 'add', 'remote', '--url', server.url.href)).code).toBe(0);
    const skill = await agents(dir, 'skill', 'add', 'files', '--server', 'remote', '--no-validate');
    expect(skill.code, skill.stderr).toBe(0);
    await addScriptedActors(dir, SCRIPT, { mode: 'auto' });

    const run = await agentsProcess(
      dir,
      ['actor', 'run', 'bot', '--input', 'go', '--thread', 't1', '--keep-sandbox'],
      undefined,
      { AGENTS_TEST_KILL_AT: 'task-noted' },
    );
    // Preconditions: the run died at the kill point, after the server started the task once.
    expect(run.code, `${run.stdout}${run.stderr}`).toBeNull();
    expect(await readFile(counter, 'utf8')).toBe('start slow_count\n');

    const resumed = await agentsProcess(dir, [
      'actor',
      'resume',
      'bot',
      '--thread',
      't1',
      '--continue',
      '--keep-sandbox',
    ]);
    expect(resumed.code, resumed.stderr).toBe(0);
    // Said before running: the call follows its noted task (named), it is not called again.
    expect(resumed.stderr).toMatch(
      /became tasks on their server before the process stopped and follow the server's task \(tasks\/get\) instead of calling the tool again: slow_count \(\S+, task task-\d+-[a-z0-9]+\)/,
    );
    expect(resumed.stderr).not.toContain('never completed');
    expect(await readFile(counter, 'utf8')).toBe('start slow_count\n');
    // The task's result reached the thread: the model got it and the run went on to its answer.
    expect(resumed.stdout).toContain('← slow_count: counted sheep');
    expect(resumed.stdout).toContain('done');
  });
});
