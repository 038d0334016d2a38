/**
 * Record a real run (the fixture server as a process over stdio, a scripted model), then replay
 * it with no server started and no model, and tamper with the cassette: a changed argument and a
 * changed result each give their documented divergence.
 */
import { mkdtemp, readFile, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AIMessage, HumanMessage, type BaseMessage } from '@langchain/core/messages';
import type { StructuredToolInterface } from '@langchain/core/tools';
import { END, MessagesValue, START, StateGraph, StateSchema } from '@langchain/langgraph';
import { ToolNode } from '@langchain/langgraph/prebuilt';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMcpToolAdapter } from '../../src/mcp/tool-adapter.js';
import {
  CASSETTE_FORMAT_VERSION,
  createCassetteRecorder,
  createRecordingTransport,
  createScriptedModel,
  parseCassette,
  RecordingChatModel,
  replayCassette,
  type Cassette,
  type McpExchangeEntry,
} from '../../src/testing/index.js';
import { fixtureStdioArgs } from '../fixtures/fixture-process.js';

let workDir: string;
let cassetteText: string;
let recordedMessages: BaseMessage[];
let serverMessagesSeen = 0;

/** The graph shape `replayCassette` rebuilds: agent ⇄ ToolNode over the adapter's tools. */
function agentGraph(
  model: { invoke(messages: BaseMessage[]): Promise<unknown> },
  tools: StructuredToolInterface[],
) {
  const State = new StateSchema({ messages: MessagesValue });
  return new StateGraph(State)
    .addNode('agent', async (state) => ({
      messages: [(await model.invoke(state.messages)) as AIMessage],
    }))
    .addNode('tools', new ToolNode(tools))
    .addEdge(START, 'agent')
    .addConditionalEdges('agent', (state) => {
      const last = state.messages.at(-1);
      return last instanceof AIMessage && (last.tool_calls?.length ?? 0) > 0 ? 'tools' : END;
    })
    .addEdge('tools', 'agent')
    .compile();
}

beforeAll(async () => {
  workDir = await realpath(await mkdtemp(join(tmpdir(), 'replay-int-')));
  const recorder = createCassetteRecorder({ pathAliases: [{ path: workDir, as: '.' }] });
  const client = new Client({ name: 'replay-int', version: '1.0.0' });
  const stdio = new StdioClientTransport({
    command: process.execPath,
    args: fixtureStdioArgs(['--tools', 'basic']),
    cwd: workDir,
    stderr: 'pipe',
  });
  await client.connect(createRecordingTransport(stdio, { recorder, server: 'fixture' }));
  try {
    const tools = await createMcpToolAdapter({ serverName: 'fixture', client }).tools();
    const scripted = await createScriptedModel({
      steps: [
        {
          tool_calls: [
            { name: 'write_file', args: { path: 'notes/hello.txt', content: 'hi' }, id: 'c1' },
            { name: 'add', args: { a: 2, b: 3 }, id: 'c2' },
          ],
        },
        { tool_calls: [{ name: 'read_file', args: { path: 'notes/hello.txt' }, id: 'c3' }] },
        { content: 'done' },
      ],
    });
    const model = new RecordingChatModel({ model: scripted, recorder }).bindTools(tools);
    const state = await agentGraph(model, tools).invoke({
      messages: [new HumanMessage('write a note, add 2 and 3, read the note')],
    });
    recordedMessages = state.messages;
  } finally {
    await client.close();
  }
  const path = join(workDir, 'run.cassette.jsonl');
  await recorder.save(path);
  cassetteText = await readFile(path, 'utf8');
  serverMessagesSeen = parseCassette(cassetteText).entries.length;
});

afterAll(async () => {
  if (workDir !== undefined) await rm(workDir, { recursive: true, force: true });
});

function tampered(change: (entries: Cassette['entries']) => void): Cassette {
  const cassette = parseCassette(cassetteText);
  change(cassette.entries);
  return cassette;
}

function addCall(entries: Cassette['entries']): McpExchangeEntry {
  const found = entries.find(
    (entry): entry is McpExchangeEntry =>
      entry.kind === 'mcp' &&
      entry.method === 'tools/call' &&
      (entry.params as { name: string }).name === 'add',
  );
  expect(found, 'the recording holds the add call').toBeDefined();
  return found!;
}

describe('record and replay through a hand-built graph', () => {
  it('records model turns and the MCP exchanges, with logical paths only', () => {
    const cassette = parseCassette(cassetteText);
    expect(cassette.header.version).toBe(CASSETTE_FORMAT_VERSION);
    const kinds = cassette.entries.map((entry) =>
      entry.kind === 'mcp' ? `${entry.method}` : entry.kind,
    );
    expect(kinds.filter((kind) => kind === 'model')).toHaveLength(3);
    expect(kinds).toContain('tools/list');
    expect(kinds.filter((kind) => kind === 'tools/call')).toHaveLength(3);
    expect(cassetteText).not.toContain(workDir);
    expect(cassetteText).toContain('wrote ./notes/hello.txt');
    expect(serverMessagesSeen).toBeGreaterThan(5);
  });

  it('replays with no server and no model to the same final messages', async () => {
    const run = await replayCassette({ cassette: parseCassette(cassetteText) });
    expect(run.divergence).toBeUndefined();
    expect(run.turns).toBe(3);
    const contents = (messages: BaseMessage[]) =>
      messages.map((message) => JSON.stringify(message.content).replaceAll(workDir, '.'));
    expect(contents(run.messages)).toEqual(contents(recordedMessages));
    expect(run.messages.at(-1)?.content).toBe('done');
  });

  it('a tampered argument diverges at that exchange, naming the tool and the argument', async () => {
    const cassette = tampered((entries) => {
      const params = addCall(entries).params as { arguments: { b: number } };
      params.arguments.b = 4;
    });
    const seq = addCall(cassette.entries).seq;
    await expect(replayCassette({ cassette })).rejects.toMatchObject({
      code: 'REPLAY_DIVERGED',
      details: {
        kind: 'argument',
        step: `fixture exchange ${seq}`,
        tool: 'add',
        path: 'arguments.b',
        expected: 4,
        actual: 3,
      },
    });
  });

  it('a tampered result diverges at the next model turn, naming the message', async () => {
    const cassette = tampered((entries) => {
      const result = addCall(entries).result as { content: Array<{ text: string }> };
      expect(result.content[0]!.text).toBe('5');
      result.content[0]!.text = '6';
    });
    const failure = await replayCassette({ cassette }).catch((error: unknown) => error);
    expect(failure).toMatchObject({
      code: 'REPLAY_DIVERGED',
      details: { kind: 'model-input', step: 'model turn 2', expected: '5', actual: '6' },
    });
    expect((failure as Error).message).toMatch(/model turn 2: the messages in differ.*input\[3\]/);
  });

  it('a cassette cut short diverges with the request the recording lacks', async () => {
    const cassette = tampered((entries) => {
      entries.splice(entries.indexOf(addCall(entries)), 1);
    });
    await expect(replayCassette({ cassette })).rejects.toMatchObject({
      details: { kind: 'unrecorded-request', tool: 'add', server: 'fixture' },
    });
  });
});
