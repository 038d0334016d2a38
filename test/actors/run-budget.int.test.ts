import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createActor } from '../../src/actors/actor.js';
import type { ActorRunEvent } from '../../src/actors/actor-types.js';
import { ExitCode } from '../../src/cli/exit-codes.js';
import { createWorkspaceStore } from '../../src/workspace/store.js';
import type { WorkspaceStore } from '../../src/workspace/workspace-types.js';
import { agents, makeProjectRepo } from '../cli/helpers.js';

/** `turns` tool-calling turns of one `read_file` call each (the fifth: five parallel calls). */
function script(turns: number): string {
  const lines: string[] = [];
  for (let turn = 0; turn < turns; turn++) {
    const count = turn === 4 ? 5 : 1;
    const calls = Array.from(
      { length: count },
      (_, index) => `{ name: read_file, args: { path: README.md }, id: t${turn}_${index} }`,
    );
    lines.push(`- tool_calls: [${calls.join(', ')}]`);
  }
  lines.push('- content: all read');
  return `${lines.join('\n')}\n`;
}

async function collect(events: AsyncIterable<ActorRunEvent>): Promise<ActorRunEvent[]> {
  const all: ActorRunEvent[] = [];
  for await (const event of events) all.push(event);
  return all;
}

const callsIn = (events: readonly ActorRunEvent[]) =>
  events.filter((event) => event.type === 'tool-call-end').length;

describe('run budgets: maxToolCalls and maxTimeMs', () => {
  let dir: string;
  let store: WorkspaceStore;
  beforeEach(async () => {
    dir = await makeProjectRepo('agents-budget-');
    store = createWorkspaceStore(join(dir, '.agents'));
    await store.put('skill', 'reader', { tools: ['read_file'] });
    await writeFile(join(dir, 'eight.yaml'), script(8));
    await store.put('actor', 'eight', {
      skills: ['reader'],
      model: 'scripted:eight.yaml',
      sandbox: { enabled: false },
      maxToolCalls: 6,
    });
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('pauses at the YAML maxToolCalls after the turn that reaches it, and continues afresh', async () => {
    await using actor = await createActor({ name: 'eight', workspace: store, threadId: 'b-1' });
    await actor.activate();
    const first = await collect(actor.run('read'));
    // Turns of 1, 1, 1, 1, 5 calls: 4 < 6, then the fifth turn's calls all run (9 in all).
    expect(callsIn(first)).toBe(9);
    expect(first.at(-1)).toMatchObject({ type: 'turn-limit', limit: 'tool-calls', toolCalls: 9 });
    const paused = await actor.graph.getState({ configurable: { thread_id: 'b-1' } });
    expect(paused.next).toEqual(['agent']);

    const rest = await collect(actor.resume({ type: 'continue' }, { threadId: 'b-1' }));
    expect(callsIn(rest)).toBe(3);
    expect(rest.at(-1)).toEqual({ type: 'message', text: 'all read' });
  }, 60_000);

  it('takes maxToolCalls and maxTimeMs from createActor over the YAML, and stops on time', async () => {
    await using fewer = await createActor({
      name: 'eight',
      workspace: store,
      threadId: 'b-2',
      maxToolCalls: 2,
    });
    await fewer.activate();
    const two = await collect(fewer.run('read'));
    expect(callsIn(two)).toBe(2);
    expect(two.at(-1)).toMatchObject({ type: 'turn-limit', limit: 'tool-calls' });

    await writeFile(join(dir, 'many.yaml'), script(60));
    await store.put('actor', 'many', {
      skills: ['reader'],
      model: 'scripted:many.yaml',
      sandbox: { enabled: false },
    });
    // 1 ms: spent within the first turns (each writes checkpoints), long before 60 turns end.
    await using timed = await createActor({
      name: 'many',
      workspace: store,
      threadId: 'b-3',
      maxTimeMs: 1,
    });
    await timed.activate();
    const stopped = await collect(timed.run('read'));
    const last = stopped.at(-1);
    expect(last).toMatchObject({ type: 'turn-limit', limit: 'time' });
    expect(last?.type === 'turn-limit' ? last.message : '').toContain('maxTimeMs 1)');
    expect(callsIn(stopped)).toBeLessThan(64);
  }, 60_000);

  it('refuses a bad budget in createActor with INVALID_ARGUMENTS', async () => {
    await expect(
      createActor({ name: 'eight', workspace: store, maxTime: '10 minutes' }),
    ).rejects.toMatchObject({
      code: 'INVALID_ARGUMENTS',
      message: expect.stringContaining('maxTime'),
    });
    await expect(
      createActor({ name: 'eight', workspace: store, maxTimeMs: 0 }),
    ).rejects.toMatchObject({
      code: 'INVALID_ARGUMENTS',
      message: expect.stringContaining('maxTimeMs 0'),
    });
    await expect(
      createActor({ name: 'eight', workspace: store, maxTimeMs: 1_000, maxTime: '1s' }),
    ).rejects.toMatchObject({
      code: 'INVALID_ARGUMENTS',
      message: expect.stringContaining('both'),
    });
    await expect(
      createActor({ name: 'eight', workspace: store, maxToolCalls: 0 }),
    ).rejects.toMatchObject({ code: 'INVALID_ARGUMENTS' });
  });

  it('reads the deprecated maxTime (a duration) as maxTimeMs, with a warning naming the value to write', async () => {
    await store.put('actor', 'old', {
      skills: ['reader'],
      model: 'scripted:eight.yaml',
      sandbox: { enabled: false },
      maxTime: '90s',
    });
    const warnings: string[] = [];
    await using actor = await createActor({
      name: 'old',
      workspace: store,
      onWarning: (message) => warnings.push(message),
    });
    expect(actor.name).toBe('old');
    expect(warnings).toEqual([expect.stringContaining('write maxTimeMs: 90000')]);
    expect(warnings[0]).toContain(store.file('actor', 'old'));
    const both = { skills: ['reader'], model: 'scripted:eight.yaml', maxTime: 90, maxTimeMs: 5 };
    await store.put('actor', 'both', { ...both, sandbox: { enabled: false } });
    await expect(createActor({ name: 'both', workspace: store })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENTS',
      message: expect.stringContaining('keep only maxTimeMs'),
    });
  });

  it('`--max-tool-calls` exits with code 9 and --continue goes on; a bad --max-time is a usage error', async () => {
    const stopped = await agents(
      dir,
      'actor',
      'run',
      'eight',
      '--input',
      'read',
      '--thread',
      'cli-b',
      '--max-tool-calls',
      '3',
    );
    expect(stopped.code).toBe(ExitCode.TurnLimit);
    expect(stopped.stdout).toContain('stopped after 3 tool calls (maxToolCalls 3)');
    expect(stopped.stderr).toContain('agents actor resume eight --thread cli-b --continue');

    const resumed = await agents(
      dir,
      'actor',
      'resume',
      'eight',
      '--thread',
      'cli-b',
      '--continue',
      '--max-tool-calls',
      '100',
      '--max-time',
      '10m',
    );
    expect(resumed.code).toBe(ExitCode.Ok);
    expect(resumed.stdout).toContain('all read');

    const bad = await agents(dir, 'actor', 'run', 'eight', '--input', 'x', '--max-time', '10x');
    expect(bad.code).toBe(ExitCode.Usage);
    expect(bad.stderr).toContain('--max-time 10x');
  }, 120_000);
});
