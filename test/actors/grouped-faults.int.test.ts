import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AIMessage, ToolMessage } from '@langchain/core/messages';
import type { BaseMessage } from '@langchain/core/messages';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createActor } from '../../src/actors/actor.js';
import type { ActorRunEvent } from '../../src/actors/actor-types.js';
import { createWorkspaceStore } from '../../src/workspace/store.js';
import type { WorkspaceStore } from '../../src/workspace/workspace-types.js';

/*
 * Grouped read-only calls (issue 37) when a server fails under them: a turn's read-only calls
 * of two real servers share one task; one server is SIGKILLed by its own call, another call
 * hangs past its timeout. The siblings still answer, every call gets exactly one ToolMessage
 * in the model's call order, the hung call is cancelled at its server (nothing left running),
 * and the output budget cuts each grouped result on its own.
 */

const FAULT_SERVER = join(import.meta.dirname, '..', 'fixtures', 'fault-server.mjs');
const NOTES_SERVER = join(import.meta.dirname, '..', 'fixtures', 'workspace', 'notes-server.mjs');

type ToolEnd = Extract<ActorRunEvent, { type: 'tool-call-end' }>;

let dir: string;
let store: WorkspaceStore;
beforeEach(async () => {
  dir = await realpath(await mkdtemp(join(tmpdir(), 'agents-grouped-faults-')));
  await writeFile(join(dir, 'note.md'), 'a note\n');
  store = createWorkspaceStore(join(dir, '.agents'));
  await store.put('server', 'faulty', {
    transport: 'stdio',
    command: process.execPath,
    args: [FAULT_SERVER],
    // Its annotations count (crash, hang: readOnlyHint), so its calls join the group.
    trusted: true,
    timeouts: { callMs: 1_500 },
  });
  await store.put('server', 'notes', {
    transport: 'stdio',
    command: process.execPath,
    args: [NOTES_SERVER],
  });
  await store.put('skill', 'both', { mcpServers: ['faulty', 'notes'] });
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function runScript(turns: string[], budget?: { maxBytes: number }) {
  await writeFile(join(dir, 'script.yaml'), [...turns, ''].join('\n'));
  const actor = await createActor({
    config: {
      name: 'grouper',
      skills: ['both'],
      model: 'scripted:script.yaml',
      sandbox: { enabled: false },
      policy: { mode: 'auto' },
      checkpointer: { type: 'memory' },
      ...(budget === undefined ? {} : { budget }),
    },
    workspace: store,
  });
  await actor.activate();
  const ends: ToolEnd[] = [];
  for await (const event of actor.run('go', { threadId: 't' }))
    if (event.type === 'tool-call-end') ends.push(event);
  return { actor, ends };
}

/** Each AI turn's call ids, and the ToolMessage ids that follow it, in order. */
function turnsOf(messages: BaseMessage[]): { calls: string[]; answered: string[] }[] {
  const turns: { calls: string[]; answered: string[] }[] = [];
  for (const message of messages) {
    if (AIMessage.isInstance(message) && (message.tool_calls?.length ?? 0) > 0)
      turns.push({ calls: message.tool_calls!.map((call) => call.id!), answered: [] });
    else if (ToolMessage.isInstance(message)) turns.at(-1)!.answered.push(message.tool_call_id);
  }
  return turns;
}

describe('grouped read-only calls when a server crashes or hangs (#37)', () => {
  it(
    'answers every call once, in call order, and cancels the hung call',
    { timeout: 30_000 },
    async () => {
      const { actor, ends } = await runScript([
        '- tool_calls: [{ name: read_note, args: { path: note.md } }, { name: crash }, { name: get_pid }]',
        '- tool_calls: [{ name: hang }, { name: read_note, args: { path: note.md } }, { name: echo, args: { text: still here } }]',
        '- tool_calls: [{ name: cancellations }]',
        '- content: done',
      ]);
      try {
        const config = { configurable: { thread_id: 't' } };
        // The precondition: each turn ran in one task (the first two: their three calls grouped).
        const steps: number[] = [];
        for await (const snapshot of actor.graph.getStateHistory(config))
          if (snapshot.next.includes('tools')) steps.unshift(snapshot.tasks.length);
        expect(steps).toEqual([1, 1, 1]);
        const state = await actor.graph.getState(config);
        const messages = (state.values as { messages: BaseMessage[] }).messages;
        const turns = turnsOf(messages);
        expect(turns).toHaveLength(3);
        // One ToolMessage per call, in the model's call order (all three calls of a turn grouped).
        for (const turn of turns) expect(turn.answered).toEqual(turn.calls);

        const byName = (name: string) => ends.filter((end) => end.name === name);
        expect(byName('crash').map((end) => end.isError)).toEqual([true]);
        expect(byName('get_pid').map((end) => end.isError)).toEqual([false]);
        expect(byName('read_note').map((end) => [end.isError, end.text])).toEqual([
          [false, 'a note\n'],
          [false, 'a note\n'],
        ]);
        expect(byName('hang').map((end) => end.isError)).toEqual([true]);
        // The crashed server came back for the next turn and answered beside the hung call.
        expect(byName('echo').map((end) => [end.isError, end.text])).toEqual([
          [false, 'still here'],
        ]);
        // The hung call was cancelled at its server when it timed out.
        const seen = JSON.parse(byName('cancellations')[0]!.text) as {
          calls: { tool: string; requestId: unknown }[];
          cancelled: { requestId: unknown }[];
        };
        const hung = seen.calls.find((each) => each.tool === 'hang');
        expect(hung).toBeDefined();
        expect(seen.cancelled.map((each) => each.requestId)).toContain(hung!.requestId);
      } finally {
        await actor.deactivate();
      }
    },
  );

  it('cuts each grouped result to the output budget on its own', { timeout: 30_000 }, async () => {
    const { actor, ends } = await runScript(
      [
        '- tool_calls: [{ name: huge_result, args: { mb: 0.01 } }, { name: echo, args: { text: small } }, { name: read_note, args: { path: note.md } }]',
        '- content: done',
      ],
      { maxBytes: 1_000 },
    );
    try {
      const config = { configurable: { thread_id: 't' } };
      const steps: number[] = [];
      for await (const snapshot of actor.graph.getStateHistory(config))
        if (snapshot.next.includes('tools')) steps.unshift(snapshot.tasks.length);
      // The precondition: the three calls shared one task.
      expect(steps).toEqual([1]);
      const huge = ends.find((end) => end.name === 'huge_result')!;
      expect(huge.isError).toBe(false);
      expect(huge.text.length).toBeLessThan(2_000);
      expect(huge.text.length).toBeGreaterThan(0);
      expect(ends.find((end) => end.name === 'echo')?.text).toBe('small');
      expect(ends.find((end) => end.name === 'read_note')?.text).toBe('a note\n');
      const state = await actor.graph.getState(config);
      const [only] = turnsOf((state.values as { messages: BaseMessage[] }).messages);
      expect(only?.answered).toEqual(only?.calls);
    } finally {
      await actor.deactivate();
    }
  });
});
