import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AIMessage, HumanMessage, type BaseMessage, ToolMessage } from '@langchain/core/messages';
import { END, MessagesValue, START, StateGraph, StateSchema } from '@langchain/langgraph';
import { ToolNode } from '@langchain/langgraph/prebuilt';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMcpToolAdapter } from '../../src/mcp/tool-adapter.js';
import { fixtureStdioArgs } from '../fixtures/fixture-process.js';

let client: Client;
let workDir: string;

beforeAll(async () => {
  workDir = await mkdtemp(join(tmpdir(), 'toolnode-graph-'));
  client = new Client({ name: 'toolnode-graph-test', version: '1.0.0' });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: fixtureStdioArgs(),
      cwd: workDir,
      stderr: 'pipe',
    }),
  );
});

afterAll(async () => {
  await client?.close();
  if (workDir !== undefined) await rm(workDir, { recursive: true, force: true });
});

// Scripted "model": one AIMessage of tool calls per turn, then a final answer. No LLM.
const script: AIMessage[] = [
  new AIMessage({
    content: '',
    tool_calls: [
      {
        id: 'c1',
        name: 'write_file',
        args: { path: 'notes/hello.txt', content: 'hi from the graph' },
        type: 'tool_call',
      },
      { id: 'c2', name: 'add', args: { a: 2, b: 3 }, type: 'tool_call' },
    ],
  }),
  new AIMessage({
    content: '',
    tool_calls: [
      { id: 'c3', name: 'fail', args: { message: 'on purpose' }, type: 'tool_call' },
      { id: 'c4', name: 'add', args: { a: 'two', b: 3 }, type: 'tool_call' },
      { id: 'c5', name: 'get_weather', args: { city: 'Oslo' }, type: 'tool_call' },
    ],
  }),
  new AIMessage({
    content: '',
    tool_calls: [
      { id: 'c6', name: 'read_file', args: { path: 'notes/hello.txt' }, type: 'tool_call' },
    ],
  }),
  new AIMessage({ content: 'done' }),
];

describe('a StateGraph with ToolNode over adapter tools (fixture over stdio)', () => {
  it('runs scripted tool calls, including an isError call and a bad-argument call, to the end', async () => {
    const tools = await createMcpToolAdapter({ serverName: 'fixture', client }).tools();
    const State = new StateSchema({ messages: MessagesValue });
    let turn = 0;
    const graph = new StateGraph(State)
      .addNode('agent', () => ({ messages: [script[turn++]!] }))
      .addNode('tools', new ToolNode(tools))
      .addEdge(START, 'agent')
      .addConditionalEdges('agent', (state) => {
        const last = state.messages.at(-1);
        return last instanceof AIMessage && (last.tool_calls?.length ?? 0) > 0 ? 'tools' : END;
      })
      .addEdge('tools', 'agent')
      .compile();

    const final = await graph.invoke({ messages: [new HumanMessage('go')] });
    const messages: BaseMessage[] = final.messages;
    expect(messages.at(-1)?.content).toBe('done');
    const toolMessages = new Map(
      messages
        .filter((message): message is ToolMessage => message instanceof ToolMessage)
        .map((message) => [message.tool_call_id, message]),
    );
    expect(toolMessages.size).toBe(6);
    expect(toolMessages.get('c1')?.status).toBe('success');
    expect(toolMessages.get('c2')).toMatchObject({ status: 'success', content: '5' });
    expect(toolMessages.get('c3')).toMatchObject({
      status: 'error',
      content: 'failed on purpose: on purpose',
    });
    expect(toolMessages.get('c4')?.status).toBe('error');
    expect(toolMessages.get('c4')?.content).toContain('/a: must be number');
    expect(toolMessages.get('c5')?.artifact).toEqual({
      structuredContent: { city: 'Oslo', temperatureC: 21.5 },
    });
    expect(toolMessages.get('c6')).toMatchObject({
      status: 'success',
      content: 'hi from the graph',
    });
    expect(await readFile(join(workDir, 'notes/hello.txt'), 'utf8')).toBe('hi from the graph');
  });
});
