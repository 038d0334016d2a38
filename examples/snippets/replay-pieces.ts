// examples/snippets/replay-pieces.ts — run: npx tsx examples/snippets/replay-pieces.ts
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { HumanMessage, type BaseMessage } from '@langchain/core/messages';
import { ToolNode } from '@langchain/langgraph/prebuilt';
import { Client } from '@modelcontextprotocol/client';
import { createMcpToolAdapter } from '@agents/langgraph-mcp/adapter';
import {
  createReplayTransport,
  readCassette,
  ReplayChatModel,
} from '@agents/langgraph-mcp/testing';

const cassette = await readCassette(join(import.meta.dirname, 'cassettes', 'write-a-note.jsonl'));
const transport = createReplayTransport({ cassette, server: 'files' });
const client = new Client({ name: 'my-app', version: '1.0.0' }); // the client the recording used
await client.connect(transport); // answered from the cassette
const tools = await createMcpToolAdapter({ serverName: 'files', client }).tools();
const model = new ReplayChatModel({ cassette }); // answers turn N with turn N
const bound = model.bindTools(tools);

// A loop of your own instead of a graph: the model, then its tool calls, until it stops calling.
const messages: BaseMessage[] = [new HumanMessage('write "hi" into notes.md, then read it back')];
for (;;) {
  const reply = await bound.invoke(messages);
  messages.push(reply);
  if ((reply.tool_calls?.length ?? 0) === 0) break;
  messages.push(...(await new ToolNode(tools).invoke({ messages })).messages);
}
await client.close();
assert.equal(messages.at(-1)?.content, 'done');
assert.equal(transport.divergence, undefined);
assert.deepEqual(transport.unused(), []); // every recorded exchange was asked for
assert.deepEqual(model.unused(), []); // and every model turn
console.log('replay pieces ok');
