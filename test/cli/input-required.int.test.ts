import { randomUUID } from 'node:crypto';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agents, agentsProcess, agentsWithStdin, makeCountingModernProject } from './helpers.js';

/** The fixture's executions of `confirm_write`: one line per run, none before it runs. */
async function executions(counter: string): Promise<string[]> {
  const text = await readFile(counter, 'utf8').catch(() => '');
  return text.split('\n').filter((line) => line !== '');
}

// A 2026-07-28 server that asks (input_required, elicitation) before its tool runs: the
// question becomes a LangGraph interrupt, answered on the terminal or from a new process.
describe('a server question (MCP 2026-07-28 input_required) in an actor run', () => {
  let dir: string;
  let counterDir: string;
  let counter: string;
  beforeAll(async () => {
    const project = await makeCountingModernProject('agents-input-', 'asking');
    ({ dir, counterDir, counter } = project);
    const { store } = project;
    await writeFile(
      join(dir, 'script.yaml'),
      '- tool_calls: [{ name: confirm_write, args: { path: a.txt } }]\n- content: done\n',
    );
    // `auto`: no approval in the way; the only pause is the server's question.
    await store.put('actor', 'asker', {
      skills: ['asking'],
      model: 'scripted:script.yaml',
      policy: { mode: 'auto' },
    });
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
    await rm(counterDir, { recursive: true, force: true });
  });

  it(
    '--no-prompt pauses with exit 8 before the tool runs; resume --answer from a new process runs it exactly once with the answer',
    { timeout: 300_000 },
    async () => {
      const thread = `ask-${randomUUID()}`;
      const before = (await executions(counter)).length;
      const paused = await agents(
        dir,
        ...['actor', 'run', 'asker', '--input', 'go', '--thread', thread, '--no-prompt'],
      );
      expect(paused.code, paused.stderr).toBe(8);
      // The server's question (it sees the sandbox path) and how to answer it.
      expect(paused.stderr).toMatch(/Write \S*\/sandbox\/\S*a\.txt\?/);
      expect(paused.stderr).toContain(`agents actor resume asker --thread ${thread} --answer JSON`);
      expect(await executions(counter)).toHaveLength(before);

      const resumed = await agentsProcess(dir, [
        'actor',
        'resume',
        'asker',
        '--thread',
        thread,
        '--answer',
        '{"confirm":true}',
        '--no-prompt',
      ]);
      expect(resumed.code, resumed.stderr).toBe(0);
      // A new process: only the checkpoint (question and requestState) links it to the first.
      // "wrote" only when the answer (confirm: true) reached the tool.
      expect(resumed.stdout).toMatch(/wrote \S*a\.txt/);
      expect(await executions(counter)).toHaveLength(before + 1);

      // Answered once: the thread no longer waits.
      const again = await agents(
        dir,
        ...['actor', 'resume', 'asker', '--thread', thread, '--answer', '{}', '--no-prompt'],
      );
      expect(again.code).not.toBe(0);
      expect(await executions(counter)).toHaveLength(before + 1);
    },
  );

  it(
    'asks on stdin like an approval: the answer reaches the tool, which runs once; declining gets asked again, and a closed stdin pauses (8)',
    { timeout: 300_000 },
    async () => {
      const before = (await executions(counter)).length;
      const refused = await agentsWithStdin(
        dir,
        'a\nno\n',
        'actor',
        'run',
        'asker',
        '--input',
        'go',
      );
      expect(refused.code, refused.stderr).toBe(0);
      expect(refused.stdout).toContain('[a]nswer, [d]ecline, [c]ancel?');
      expect(refused.stdout).toContain('not written');
      expect(await executions(counter)).toHaveLength(before);

      const accepted = await agentsWithStdin(
        dir,
        'a\nyes\n',
        'actor',
        'run',
        'asker',
        '--input',
        'go',
      );
      expect(accepted.code, accepted.stderr).toBe(0);
      expect(accepted.stdout).toMatch(/wrote \S*a\.txt/);
      expect(await executions(counter)).toHaveLength(before + 1);

      // The fixture asks again after a decline; stdin has ended by then: the run pauses.
      const thread = `closed-${randomUUID()}`;
      const closed = await agentsWithStdin(
        dir,
        'd\n',
        'actor',
        'run',
        'asker',
        '--input',
        'go',
        '--thread',
        thread,
      );
      expect(closed.code, closed.stderr).toBe(8);
      expect(closed.stderr).toContain('(round 2)');
      expect(closed.stderr).toContain(`--thread ${thread} --decline`);
      expect(await executions(counter)).toHaveLength(before + 1);
    },
  );
});
