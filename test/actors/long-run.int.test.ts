import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AIMessage, ToolMessage } from '@langchain/core/messages';
import type { BaseMessage } from '@langchain/core/messages';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createActor } from '../../src/actors/actor.js';
import type { ActorRunEvent } from '../../src/actors/actor-types.js';
import { ExitCode } from '../../src/cli/exit-codes.js';
import { createWorkspaceStore } from '../../src/workspace/store.js';
import type { WorkspaceStore } from '../../src/workspace/workspace-types.js';
import { agents, makeProjectRepo } from '../cli/helpers.js';

/**
 * A YAML model script of `turns` tool-calling turns (every fifth one with `parallel` calls at
 * once), then a final answer. Built-in read tools only: no server process, so the figures are
 * the graph's and the checkpointer's.
 */
function longScript(turns: number, parallel = 10): string {
  const lines: string[] = [];
  for (let turn = 0; turn < turns; turn++) {
    const count = turn % 5 === 4 ? parallel : 1;
    const calls = Array.from(
      { length: count },
      (_, index) => `{ name: read_file, args: { path: README.md }, id: t${turn}_${index} }`,
    );
    lines.push(`- tool_calls: [${calls.join(', ')}]`);
  }
  lines.push('- content: all read');
  return `${lines.join('\n')}\n`;
}

/** The number of tool calls `longScript(turns, parallel)` makes. */
function callsOf(turns: number, parallel = 10): number {
  let calls = 0;
  for (let turn = 0; turn < turns; turn++) calls += turn % 5 === 4 ? parallel : 1;
  return calls;
}

async function collect(events: AsyncIterable<ActorRunEvent>): Promise<ActorRunEvent[]> {
  const all: ActorRunEvent[] = [];
  for await (const event of events) all.push(event);
  return all;
}

/** Bytes the SQLite checkpointer holds for one thread: checkpoint blobs plus task writes. */
function storedBytes(file: string, threadId: string): number {
  const { db } = SqliteSaver.fromConnString(file);
  try {
    const checkpoints = db
      .prepare(
        'SELECT COALESCE(SUM(LENGTH(checkpoint) + LENGTH(metadata)), 0) AS bytes FROM checkpoints WHERE thread_id = ?',
      )
      .get(threadId) as { bytes: number };
    const writes = db
      .prepare('SELECT COALESCE(SUM(LENGTH(value)), 0) AS bytes FROM writes WHERE thread_id = ?')
      .get(threadId) as { bytes: number };
    return checkpoints.bytes + writes.bytes;
  } finally {
    db.close();
  }
}

describe('long runs (scripted model, built-in tools, SQLite checkpointer)', () => {
  let dir: string;
  let store: WorkspaceStore;
  beforeEach(async () => {
    dir = await makeProjectRepo('agents-long-run-');
    store = createWorkspaceStore(join(dir, '.agents'));
    await store.put('skill', 'reader', { tools: ['read_file'] });
    await writeFile(join(dir, 'long.yaml'), longScript(60));
    await store.put('actor', 'long', {
      skills: ['reader'],
      model: 'scripted:long.yaml',
      sandbox: { enabled: false },
    });
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('finishes 60 tool-calling turns (some with 10 parallel calls) through createActor', async () => {
    await using actor = await createActor({ name: 'long', workspace: store, threadId: 'long-1' });
    await actor.activate();
    const events = await collect(actor.run('read a lot'));
    const ends = events.filter((event) => event.type === 'tool-call-end');
    expect(ends).toHaveLength(callsOf(60));
    expect(ends.every((event) => event.type === 'tool-call-end' && !event.isError)).toBe(true);
    expect(events.at(-1)).toEqual({ type: 'message', text: 'all read' });
    const state = await actor.graph.getState({ configurable: { thread_id: 'long-1' } });
    expect(state.next).toEqual([]);
    // The state read back from the checkpointer (messages rebuilt from per-step writes) has
    // every call's result, right after its AI message, in the order the calls were made.
    const messages: BaseMessage[] = state.values.messages;
    const order = messages.map((message) =>
      AIMessage.isInstance(message)
        ? (message.tool_calls ?? []).map((call) => call.id).join(',')
        : ToolMessage.isInstance(message)
          ? message.tool_call_id
          : message.type,
    );
    const expected = ['human'];
    for (let turn = 0; turn < 60; turn++) {
      const ids = Array.from(
        { length: turn % 5 === 4 ? 10 : 1 },
        (_, index) => `t${turn}_${index}`,
      );
      expected.push(ids.join(','), ...ids);
    }
    expected.push('');
    expect(order).toEqual(expected);
  }, 120_000);

  it('finishes the same run through `agents actor run` with exit code 0', async () => {
    const result = await agents(
      dir,
      'actor',
      'run',
      'long',
      '--input',
      'read a lot',
      '--thread',
      'cli-1',
    );
    expect(result.stderr).not.toContain('Recursion limit');
    expect(result.code).toBe(ExitCode.Ok);
    expect(result.stdout.match(/^← read_file/gm)).toHaveLength(callsOf(60));
    expect(result.stdout).toContain('all read');
  }, 120_000);

  it('stops cleanly at maxTurns with a resumable thread, and continues from where it stopped', async () => {
    await writeFile(join(dir, 'eight.yaml'), longScript(8));
    await store.put('actor', 'eight', {
      skills: ['reader'],
      model: 'scripted:eight.yaml',
      sandbox: { enabled: false },
      maxTurns: 5,
    });
    await using actor = await createActor({ name: 'eight', workspace: store, threadId: 'stop-1' });
    await actor.activate();
    const first = await collect(actor.run('read'));
    expect(first.at(-1)).toMatchObject({ type: 'turn-limit', turns: 5, maxTurns: 5 });
    expect(first.filter((event) => event.type === 'tool-call-end')).toHaveLength(callsOf(5));
    const paused = await actor.graph.getState({ configurable: { thread_id: 'stop-1' } });
    expect(paused.next).toEqual(['agent']);
    // Every call of the five turns has its result saved: nothing runs twice on continue.
    const pausedMessages: BaseMessage[] = paused.values.messages;
    expect(pausedMessages.filter((message) => message.type === 'tool')).toHaveLength(callsOf(5));

    const rest = await collect(actor.resume({ type: 'continue' }, { threadId: 'stop-1' }));
    const restCalls = rest.filter((event) => event.type === 'tool-call-end');
    expect(restCalls).toHaveLength(callsOf(8) - callsOf(5));
    expect(rest.at(-1)).toEqual({ type: 'message', text: 'all read' });
  }, 60_000);

  it('`--max-turns 5` exits with code 9 and names the command that continues', async () => {
    const stopped = await agents(
      dir,
      'actor',
      'run',
      'long',
      '--input',
      'read',
      '--thread',
      'cli-stop',
      '--max-turns',
      '5',
    );
    expect(stopped.code).toBe(ExitCode.TurnLimit);
    expect(stopped.stdout).toContain('stopped after 5 model turns');
    expect(stopped.stderr).toContain('agents actor resume long --thread cli-stop --continue');

    const resumed = await agents(
      dir,
      'actor',
      'resume',
      'long',
      '--thread',
      'cli-stop',
      '--continue',
      '--max-turns',
      '100',
    );
    expect(resumed.code).toBe(ExitCode.Ok);
    expect(resumed.stdout).toContain('all read');

    const nothingLeft = await agents(
      dir,
      'actor',
      'resume',
      'long',
      '--thread',
      'cli-stop',
      '--continue',
    );
    expect(nothingLeft.code).toBe(ExitCode.NotFound);
    expect(nothingLeft.stderr).toContain('finished its last run, so there is nothing to continue');
  }, 120_000);

  it('runs 20 parallel calls without a MaxListenersExceededWarning', async () => {
    const calls = Array.from(
      { length: 20 },
      (_, index) => `{ name: read_file, args: { path: README.md }, id: p${index} }`,
    );
    await writeFile(
      join(dir, 'wide.yaml'),
      `- tool_calls: [${calls.join(', ')}]\n- content: wide\n`,
    );
    await store.put('actor', 'wide', {
      skills: ['reader'],
      model: 'scripted:wide.yaml',
      sandbox: { enabled: false },
      checkpointer: { type: 'memory' },
    });
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(`${warning.name}: ${warning.message}`);
    process.on('warning', onWarning);
    try {
      await using actor = await createActor({ name: 'wide', workspace: store });
      await actor.activate();
      // A caller's signal, as the CLI passes: LangGraph combines it into each step's signal.
      const events = await collect(actor.run('wide', { signal: new AbortController().signal }));
      expect(events.filter((event) => event.type === 'tool-call-end')).toHaveLength(20);
      // Warnings are emitted on the next tick.
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings.filter((text) => text.includes('MaxListenersExceeded'))).toEqual([]);
  }, 60_000);

  it('rejects a --max-turns that is not a positive whole number', async () => {
    const result = await agents(dir, 'actor', 'run', 'long', '--input', 'x', '--max-turns', '0');
    expect(result.code).toBe(ExitCode.Usage);
    expect(result.stderr).toContain('--max-turns 0');
  });

  it('stores checkpoints in bytes proportional to the calls, not to calls × history', async () => {
    // 100 calls: 40 single-call turns and 10 turns of 6 parallel calls.
    await writeFile(join(dir, 'hundred.yaml'), longScript(50, 6));
    await store.put('actor', 'hundred', {
      skills: ['reader'],
      model: 'scripted:hundred.yaml',
      sandbox: { enabled: false },
    });
    expect(callsOf(50, 6)).toBe(100);
    await using actor = await createActor({
      name: 'hundred',
      workspace: store,
      threadId: 'bytes-1',
    });
    await actor.activate();
    await collect(actor.run('read'));
    await actor.deactivate();
    const bytes = storedBytes(join(dir, '.agents', 'checkpoints.sqlite'), 'bytes-1');
    // Generous bound (the benchmark keeps the tight figure): 16 KB per call. Before each task
    // carried only its call, and messages were stored once, this run stored several MB.
    expect(bytes).toBeGreaterThan(0);
    expect(bytes / 100).toBeLessThan(16_384);
  }, 120_000);

  it('`agents thread compact` keeps the newest checkpoints readable, listable and resumable', async () => {
    await writeFile(join(dir, 'twenty.yaml'), longScript(20, 3));
    await store.put('actor', 'twenty', { skills: ['reader'], model: 'scripted:twenty.yaml' });
    const run = await agents(dir, 'actor', 'run', 'twenty', '--input', 'go', '--thread', 'c-1');
    expect(run.code).toBe(ExitCode.Ok);
    const file = join(dir, '.agents', 'checkpoints.sqlite');
    const readMessages = async () => {
      await using actor = await createActor({ name: 'twenty', workspace: store, threadId: 'c-1' });
      await actor.activate();
      const state = await actor.graph.getState({ configurable: { thread_id: 'c-1' } });
      const messages: BaseMessage[] = state.values.messages;
      return messages.map((message) => `${message.type}:${message.text}`);
    };
    const before = await readMessages();
    const bytesBefore = storedBytes(file, 'c-1');

    const compact = await agents(
      dir,
      'thread',
      'compact',
      '--thread',
      'c-1',
      '--keep',
      '10',
      '--vacuum',
      '--json',
    );
    expect(compact.stderr).toBe('');
    expect(compact.code).toBe(ExitCode.Ok);
    expect(JSON.parse(compact.stdout)).toMatchObject({ after: 10, reseeded: 1 });
    expect(storedBytes(file, 'c-1')).toBeLessThan(bytesBefore);
    // The newest state is rebuilt exactly from what was kept.
    expect(await readMessages()).toEqual(before);
    const listed = await agents(dir, 'checkpoints', '--thread', 'c-1', '--json');
    expect(listed.code).toBe(ExitCode.Ok);
    expect(JSON.parse(listed.stdout)).toHaveLength(10);
    // The thread goes on from the kept state.
    const again = await agents(
      dir,
      'actor',
      'run',
      'twenty',
      '--input',
      'again',
      '--thread',
      'c-1',
    );
    expect(again.code).toBe(ExitCode.Ok);
    expect(again.stdout).toContain('all read');
  }, 120_000);
});
