/**
 * The reference actor graph in-process (no dev server): the same graph the Studio test drives,
 * compiled with a MemorySaver, so failures here point at the graph rather than the server.
 */
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { AIMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import { Command, MemorySaver } from '@langchain/langgraph';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createStudioActor,
  parseWriteRequest,
  scriptedReply,
  type StudioActor,
} from '../../graphs/studio-actor.js';
import { readSandboxState } from '../../src/core/sandbox-state.js';
import { isProcessGroupAlive } from '../../src/servers/process-group.js';

describe('scripted model of the reference actor', () => {
  it('asks for write_file on a user turn and answers after the tool result', () => {
    expect(parseWriteRequest('write docs/a.md: two\nlines')).toEqual({
      path: 'docs/a.md',
      content: 'two\nlines',
    });
    expect(parseWriteRequest('just text')).toEqual({ path: 'notes.md', content: 'just text' });
    const call = scriptedReply([new HumanMessage('write a.md: x')], 'write_file');
    expect(AIMessage.isInstance(call) && call.tool_calls).toEqual([
      expect.objectContaining({ name: 'write_file', args: { path: 'a.md', content: 'x' } }),
    ]);
    const answer = scriptedReply(
      [
        new HumanMessage('write a.md: x'),
        call,
        new ToolMessage({ content: 'ok', tool_call_id: 'call_1' }),
      ],
      'write_file',
    );
    expect(answer.text).toBe('Wrote a.md.');
  });
});

describe('reference actor graph (in-process)', () => {
  let actor: StudioActor | undefined;
  afterEach(async () => {
    await actor?.close();
    actor = undefined;
  });

  it('writes through the filesystem MCP server into the sandbox, records the change, and forks', async () => {
    actor = await createStudioActor();
    const graph = actor.builder.compile({ checkpointer: new MemorySaver() });
    const config = { configurable: { thread_id: 't1' } };
    const result = await graph.invoke(
      { messages: [new HumanMessage('write hello.txt: hi there')] },
      config,
    );
    expect(result.messages.at(-1)?.text).toBe('Wrote hello.txt.');
    expect(readFileSync(path.join(actor.sandbox.root, 'hello.txt'), 'utf8')).toBe('hi there');
    const { changeLog, sandboxHead } = readSandboxState(result);
    expect(changeLog).toEqual([
      expect.objectContaining({
        toolId: 'mcp:fs/write_file',
        changed: [{ status: 'A', path: 'hello.txt' }],
      }),
    ]);
    expect(sandboxHead).toBe(changeLog[0]!.snapshot);

    // Fork at the checkpoint that is about to run the tools, with edited arguments.
    const history = [];
    for await (const snapshot of graph.getStateHistory(config)) history.push(snapshot);
    const beforeTools = history.find((snapshot) => snapshot.next.includes('tools'))!;
    const aiMessage = (beforeTools.values as { messages: AIMessage[] }).messages.at(-1)!;
    const edited = new AIMessage({
      id: aiMessage.id!,
      content: '',
      tool_calls: [{ ...aiMessage.tool_calls![0]!, args: { path: 'fork.txt', content: 'forked' } }],
    });
    const forked = await graph.updateState(beforeTools.config, { messages: [edited] }, 'agent');
    const forkResult = await graph.invoke(null, forked);
    expect(forkResult.messages.at(-1)?.text).toBe('Wrote fork.txt.');
    expect(readSandboxState(forkResult).changeLog.map((record) => record.changed)).toEqual([
      [{ status: 'A', path: 'fork.txt' }],
    ]);
  });

  it('with a policy in ask mode, pauses write_file on an interrupt and resumes with edited arguments', async () => {
    actor = await createStudioActor({ policy: { mode: 'ask' }, name: 'approvals' });
    expect(actor.graph.name).toBe('approvals');
    expect(actor.policy?.mode).toBe('ask');
    const graph = actor.builder.compile({ checkpointer: new MemorySaver() });
    const config = { configurable: { thread_id: 'a1' } };
    const paused = await graph.invoke(
      { messages: [new HumanMessage('write draft.md: first try')] },
      config,
    );
    const interrupts =
      (paused as { __interrupt__?: Array<{ value: unknown }> }).__interrupt__ ?? [];
    expect(interrupts).toHaveLength(1);
    expect(interrupts[0]!.value).toMatchObject({
      kind: 'agents/tool-approval',
      toolId: 'mcp:fs/write_file',
      args: { path: 'draft.md', content: 'first try' },
    });
    expect(existsSync(path.join(actor.sandbox.root, 'draft.md'))).toBe(false);

    const resumed = await graph.invoke(
      new Command({ resume: { type: 'edit', args: { path: 'final.md', content: 'edited' } } }),
      config,
    );
    expect(readFileSync(path.join(actor.sandbox.root, 'final.md'), 'utf8')).toBe('edited');
    expect(existsSync(path.join(actor.sandbox.root, 'draft.md'))).toBe(false);
    expect(readSandboxState(resumed).changeLog.map((record) => record.changed)).toEqual([
      [{ status: 'A', path: 'final.md' }],
    ]);
    // Approving pinned the tool's fingerprint (first approval).
    expect(actor.pins?.get('mcp:fs/write_file')?.fingerprint).toEqual(expect.any(String));
  });

  it('close() stops the server process group and removes the sandbox and temp repo', async () => {
    actor = await createStudioActor();
    const pid = actor.server.pid;
    const root = actor.sandbox.root;
    const tempDirs = [...actor.tempDirs];
    expect(pid).toEqual(expect.any(Number));
    expect(isProcessGroupAlive(pid!)).toBe(true);
    await actor.close();
    expect(isProcessGroupAlive(pid!)).toBe(false);
    expect(existsSync(root)).toBe(false);
    expect(tempDirs.length).toBeGreaterThan(0);
    for (const dir of tempDirs) expect(existsSync(dir)).toBe(false);
  });
});
