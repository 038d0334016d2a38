import { randomUUID } from 'node:crypto';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agents, agentsProcess, agentsWithStdin, makeCountingModernProject } from './helpers.js';

/** The fixture's executions of `sampled_note`: one line per run, none before it runs. */
async function executions(counter: string): Promise<number> {
  const text = await readFile(counter, 'utf8').catch(() => '');
  return text.split('\n').filter((line) => line.startsWith('note ')).length;
}

// A 2026-07-28 server that asks for a completion (input_required sampling/createMessage)
// before its tool runs: a person writes it (an interrupt, as for elicitation), the actor's model
// writes it (`clientRequests.sampling: model`), or the policy refuses it (`deny`).
describe('a server asking for sampling (MCP 2026-07-28 input_required) in an actor run', () => {
  let dir: string;
  let counterDir: string;
  let counter: string;
  beforeAll(async () => {
    const project = await makeCountingModernProject('agents-sampling-', 'sampling');
    ({ dir, counterDir, counter } = project);
    const { store } = project;
    await writeFile(
      join(dir, 'person.yaml'),
      '- tool_calls: [{ name: sampled_note, args: { topic: tests } }]\n- content: done\n',
    );
    // The model's first turn calls the tools; the same step is what it writes when the server
    // asks it for a completion (a scripted model answers by turn, and tools are never bound).
    await writeFile(
      join(dir, 'model.yaml'),
      '- content: the model wrote this\n' +
        '  tool_calls: [{ name: sampled_note, args: { topic: tests } }, { name: roots_seen }]\n' +
        '- content: done\n',
    );
    await writeFile(
      join(dir, 'deny.yaml'),
      '- tool_calls: [{ name: sampled_note, args: { topic: tests } }, { name: confirm_write, args: { path: b.txt } }]\n' +
        '- content: done\n',
    );
    await store.put('actor', 'person', {
      skills: ['sampling'],
      model: 'scripted:person.yaml',
      policy: { mode: 'auto' },
    });
    await store.put('actor', 'modeler', {
      skills: ['sampling'],
      model: 'scripted:model.yaml',
      policy: { mode: 'auto', clientRequests: { sampling: 'model' } },
    });
    await store.put('actor', 'denier', {
      skills: ['sampling'],
      model: 'scripted:deny.yaml',
      policy: { mode: 'auto', clientRequests: { sampling: 'deny', elicitation: 'deny' } },
    });
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
    await rm(counterDir, { recursive: true, force: true });
  });

  it(
    'a person writes the completion: --no-prompt pauses (8) before the tool runs, resume --answer runs it once with a well-formed result and the echoed state',
    { timeout: 120_000 },
    async () => {
      const thread = `person-${randomUUID()}`;
      const before = await executions(counter);
      const paused = await agents(
        dir,
        ...['actor', 'run', 'person', '--input', 'go', '--thread', thread, '--no-prompt'],
      );
      expect(paused.code, paused.stderr).toBe(8);
      // The server's request, marked as the server's, and the one-field form to answer it.
      expect(paused.stderr).toContain('[system, from the server] You write one-line notes.');
      expect(paused.stderr).toContain('[user] A note about tests.');
      expect(paused.stderr).toContain('text "Completion to send back"');
      expect(await executions(counter)).toBe(before);

      // A new process: only the checkpoint (question and requestState) links it to the first.
      const resumed = await agentsProcess(dir, [
        ...['actor', 'resume', 'person', '--thread', thread],
        ...['--answer', '{"text":"a person wrote this"}', '--no-prompt'],
      ]);
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(resumed.stdout).toContain(
        'noted a person wrote this (role assistant, model person, stop endTurn, state ok)',
      );
      expect(await executions(counter)).toBe(before + 1);

      // On a terminal the same one-field form is asked; declining ends the call unrun.
      const declined = await agentsWithStdin(
        dir,
        'd\n',
        ...['actor', 'run', 'person', '--input', 'go'],
      );
      expect(declined.code, declined.stderr).toBe(0);
      expect(declined.stdout).toContain('[a]nswer, [d]ecline, [c]ancel?');
      expect(declined.stdout).toMatch(
        /Declined by \S+: server "modern" asked for a completion \(sampling\) before running mcp:modern\/sampled_note; the tool did not run\./,
      );
      expect(await executions(counter)).toBe(before + 1);
    },
  );

  it(
    "clientRequests.sampling: model has the actor's model write it without pausing; deny refuses naming server, tool and key",
    { timeout: 120_000 },
    async () => {
      const before = await executions(counter);
      const modeled = await agents(
        dir,
        ...['actor', 'run', 'modeler', '--input', 'go', '--no-prompt'],
      );
      expect(modeled.code, modeled.stderr).toBe(0);
      expect(modeled.stdout).toContain(
        'noted the model wrote this (role assistant, model scripted, stop endTurn, state ok)',
      );
      expect(await executions(counter)).toBe(before + 1);

      const denied = await agents(
        dir,
        ...['actor', 'run', 'denier', '--input', 'go', '--no-prompt'],
      );
      expect(denied.code, denied.stderr).toBe(0);
      expect(denied.stdout).toContain(
        'Refused by actor "denier": server "modern" asked for sampling',
      );
      expect(denied.stdout).toContain('before running tool "sampled_note"');
      expect(denied.stdout).toContain('clientRequests.sampling is deny; the tool did not run.');
      expect(denied.stdout).toContain('clientRequests.elicitation is deny; the tool did not run.');
      expect(await executions(counter)).toBe(before + 1);
    },
  );

  it('agents audit shows every question: who asked, what, and who answered or refused it', async () => {
    const audit = await agents(dir, 'audit');
    expect(audit.code, audit.stderr).toBe(0);
    const lines = audit.stdout.split('\n');
    const line = (pattern: RegExp): string | undefined => lines.find((text) => pattern.test(text));
    const from =
      'mcp:modern/sampled_note  sampling/createMessage from server "modern" (round 1, note)';
    expect(line(new RegExp(`${escape(from)} put to a person`))).toBeDefined();
    expect(line(new RegExp(`${escape(from)} answered by person \\([^)]+\\)`))).toBeDefined();
    expect(line(new RegExp(`${escape(from)} declined by person`))).toMatch(/ERROR Declined by/);
    expect(line(new RegExp(`${escape(from)} answered by model \\(scripted\\)`))).toBeDefined();
    expect(line(/sampling\/createMessage from server "modern" .* refused by policy/)).toMatch(
      /ERROR Refused by actor "denier".*clientRequests\.sampling is deny/,
    );
    expect(
      line(
        /mcp:modern\/confirm_write {2}elicitation\/create from server "modern" \(round 1, confirm\) refused by policy \(actor "denier"\)/,
      ),
    ).toBeDefined();
    expect(
      line(
        /mcp:modern\/roots_seen {2}roots\/list from server "modern" \(round 1, roots\) answered by client \(sandbox root\)/,
      ),
    ).toBeDefined();
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
