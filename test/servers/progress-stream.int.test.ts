import { AIMessage, type BaseMessage, type ToolMessage } from '@langchain/core/messages';
import { MessagesAnnotation, StateGraph } from '@langchain/langgraph';
import { ToolNode } from '@langchain/langgraph/prebuilt';
import { afterEach, describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  toStructuredTool,
  type ToolProgressEvent,
  type ToolRetryEvent,
} from '../../src/mcp/structured-tool.js';
import { createManagedServer, type ManagedServer } from '../../src/servers/managed-server.js';
import { faultServerConfig } from './fixture.js';

let server: ManagedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function isProgressEvent(value: unknown): value is ToolProgressEvent {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as { type?: unknown }).type === 'tool-progress'
  );
}

describe('server progress reaches the LangGraph stream', () => {
  it("a graph run with streamMode 'custom' receives the slow tool's progress as custom events", async () => {
    server = createManagedServer(faultServerConfig('progress', 'normal'));
    await server.start();
    const tools = server
      .entries()
      .map((entry) =>
        toStructuredTool(entry.descriptor, (request) =>
          entry.execute(request.args, request.context, request.capabilities),
        ),
      );
    const slowName = server.entries().find((entry) => entry.descriptor.originalName === 'slow')
      ?.descriptor.name;
    expect(slowName).toBeDefined();

    const graph = new StateGraph(MessagesAnnotation)
      .addNode('tools', new ToolNode(tools))
      .addEdge('__start__', 'tools')
      .addEdge('tools', '__end__')
      .compile();
    const input: { messages: BaseMessage[] } = {
      messages: [
        new AIMessage({
          content: '',
          tool_calls: [{ id: 'call_slow', name: slowName!, args: { ms: 200 } }],
        }),
      ],
    };

    const custom: unknown[] = [];
    const values: Array<{ messages: BaseMessage[] }> = [];
    for await (const [mode, chunk] of await graph.stream(input, {
      streamMode: ['custom', 'values'],
    })) {
      if (mode === 'custom') custom.push(chunk);
      else values.push(chunk as { messages: BaseMessage[] });
    }

    const progress = custom.filter(isProgressEvent);
    expect(progress.map((event) => [event.progress, event.total, event.message])).toEqual([
      [0, 200, 'started'],
      [100, 200, 'half-way'],
    ]);
    expect(progress[0]).toMatchObject({
      toolName: slowName,
      toolId: 'mcp:progress/slow',
      toolCallId: 'call_slow',
      serverName: 'progress',
    });
    const last = values.at(-1)!.messages.at(-1) as ToolMessage;
    expect(last.content).toBe('slept 200');
  });

  it('a read-only call retried after its server restarted is a tool-retry event in the stream (#26)', async () => {
    const marker = join(await mkdtemp(join(tmpdir(), 'agents-crash-once-')), 'crashed');
    server = createManagedServer(
      faultServerConfig('flaky', `crash-once=${marker}`, { trusted: true }),
    );
    await server.start();
    const tools = server
      .entries()
      .map((entry) =>
        toStructuredTool(entry.descriptor, (request) =>
          entry.execute(request.args, request.context, request.capabilities),
        ),
      );
    const echo = server.entries().find((entry) => entry.descriptor.originalName === 'echo')!
      .descriptor.name;
    const graph = new StateGraph(MessagesAnnotation)
      .addNode('tools', new ToolNode(tools))
      .addEdge('__start__', 'tools')
      .addEdge('tools', '__end__')
      .compile();
    const custom: unknown[] = [];
    let last: ToolMessage | undefined;
    for await (const [mode, chunk] of await graph.stream(
      {
        messages: [
          new AIMessage({
            content: '',
            tool_calls: [{ id: 'call_echo', name: echo, args: { text: 'again' } }],
          }),
        ],
      },
      { streamMode: ['custom', 'values'] },
    )) {
      if (mode === 'custom') custom.push(chunk);
      else last = (chunk as { messages: BaseMessage[] }).messages.at(-1) as ToolMessage;
    }
    expect(existsSync(marker)).toBe(true);
    const retries = custom.filter(
      (event) => (event as { type?: string }).type === 'tool-retry',
    ) as ToolRetryEvent[];
    expect(retries).toHaveLength(1);
    expect(retries[0]).toMatchObject({
      toolName: echo,
      toolCallId: 'call_echo',
      serverName: 'flaky',
      reason: 'server-restarted',
    });
    expect(retries[0]!.message).toContain('was restarted');
    expect(last?.status).not.toBe('error');
    expect(JSON.stringify(last?.content)).toContain('again');
  });

  it('without a stream writer, a direct call installs no progress callback and still succeeds', async () => {
    server = createManagedServer(faultServerConfig('no-writer', 'normal'));
    await server.start();
    const entry = server
      .entries()
      .find((candidate) => candidate.descriptor.originalName === 'slow')!;
    const seen: unknown[] = [];
    const tool = toStructuredTool(entry.descriptor, (request) => {
      seen.push(request.capabilities?.onProgress);
      return entry.execute(request.args, request.context, request.capabilities);
    });
    expect(await tool.invoke({ ms: 20 })).toBe('slept 20');
    expect(seen).toEqual([undefined]);
  });
});
