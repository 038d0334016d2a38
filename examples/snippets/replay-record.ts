// examples/snippets/replay-record.ts — run: npx tsx examples/snippets/replay-record.ts [CASSETTE]
import assert from 'node:assert/strict';
import { mkdtemp, readFile, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AIMessage, HumanMessage } from '@langchain/core/messages';
import { END, MessagesValue, START, StateGraph, StateSchema } from '@langchain/langgraph';
import { ToolNode } from '@langchain/langgraph/prebuilt';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { createMcpToolAdapter } from '@agents/langgraph-mcp/adapter';
import {
  createCassetteRecorder,
  createRecordingTransport,
  createScriptedModel,
  RecordingChatModel,
} from '@agents/langgraph-mcp/testing';

// Where to write (examples/snippets/cassettes/write-a-note.jsonl is this script's own recording).
const workDir = await realpath(await mkdtemp(join(tmpdir(), 'my-project-')));
const cassettePath = process.argv[2] ?? join(workDir, 'write-a-note.jsonl');
// Offline stand-in for your chat model (any LangChain chat model records the same way).
const myChatModel = await createScriptedModel({
  steps: [
    { tool_calls: [{ id: 'c1', name: 'write_file', args: { path: 'notes.md', content: 'hi' } }] },
    { tool_calls: [{ id: 'c2', name: 'read_text_file', args: { path: 'notes.md' } }] },
    { content: 'done' },
  ],
});

const recorder = createCassetteRecorder({ pathAliases: [{ path: workDir, as: '.' }] });
const client = new Client({ name: 'my-app', version: '1.0.0' });
const fs = ['-y', '@modelcontextprotocol/server-filesystem', workDir];
await client.connect(
  createRecordingTransport(new StdioClientTransport({ command: 'npx', args: fs, cwd: workDir }), {
    recorder,
    server: 'files', // the name a replay asks for
  }),
);
try {
  const tools = await createMcpToolAdapter({ serverName: 'files', client }).tools();
  const model = new RecordingChatModel({ model: myChatModel, recorder }).bindTools(tools);
  // The graph shape replayCassette rebuilds: agent ⇄ ToolNode until the model stops calling tools.
  const graph = new StateGraph(new StateSchema({ messages: MessagesValue }))
    .addNode('agent', async (state) => ({ messages: [await model.invoke(state.messages)] }))
    .addNode('tools', new ToolNode(tools))
    .addEdge(START, 'agent')
    .addConditionalEdges('agent', (state) => {
      const last = state.messages.at(-1);
      return last instanceof AIMessage && (last.tool_calls?.length ?? 0) > 0 ? 'tools' : END;
    })
    .addEdge('tools', 'agent')
    .compile();
  const input = [new HumanMessage('write "hi" into notes.md, then read it back')];
  const { messages } = await graph.invoke({ messages: input });
  assert.equal(messages.at(-1)?.content, 'done');
} finally {
  await client.close(); // stops the server; an open stream is recorded up to here
}
await recorder.save(cassettePath);

// Model turns and MCP exchanges, one JSON object a line; no machine path (the sandbox is '.').
const text = await readFile(cassettePath, 'utf8');
const lines = text
  .trimEnd()
  .split('\n')
  .map((line) => JSON.parse(line) as Record<string, unknown>);
console.log(lines.slice(1).map((line) => line['method'] ?? `model turn ${String(line['turn'])}`));
assert.equal(lines.filter((line) => line['kind'] === 'model').length, 3);
assert.equal(lines.filter((line) => line['method'] === 'tools/call').length, 2);
assert.ok(!text.includes(workDir), 'the cassette holds logical paths only');
await rm(workDir, { recursive: true, force: true });
const kept = process.argv[2] !== undefined;
console.log(
  kept ? `cassette: ${cassettePath}` : 'cassette checked and removed (name a path to keep it)',
);
console.log('replay record ok');
