// examples/snippets/errors-throw.ts — run: npx tsx examples/snippets/errors-throw.ts
import assert from 'node:assert/strict';
import { AIMessage } from '@langchain/core/messages';
import type { ToolMessage } from '@langchain/core/messages';
import { ToolNode } from '@langchain/langgraph/prebuilt';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { createMcpToolAdapter } from '@agents/langgraph-mcp';

// A server whose tool answers with an `isError` result, in process for the example.
const server = new McpServer({ name: 'calc', version: '1.0.0' });
server.registerTool('divide', { inputSchema: { a: z.number(), b: z.number() } }, ({ a, b }) =>
  b === 0
    ? { isError: true, content: [{ type: 'text', text: 'division by zero' }] }
    : { content: [{ type: 'text', text: String(a / b) }] },
);
const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
await server.connect(serverSide);
const client = new Client({ name: 'my-app', version: '1.0.0' });
await client.connect(clientSide);

const adapter = createMcpToolAdapter({ serverName: 'calc', client, errors: 'throw' });
// or per tool: toStructuredTool(descriptor, handler, { errors: 'throw' })
const tools = await adapter.tools();

// ToolNode answers as with @langchain/mcp-adapters: `Error: ...\n Please fix your mistakes.`
const call = { id: 'call-1', name: 'divide', args: { a: 1, b: 0 } };
const { messages } = await new ToolNode(tools).invoke({
  messages: [new AIMessage({ content: '', tool_calls: [call] })],
});
const [answer] = messages as ToolMessage[];
console.log(answer?.status, JSON.stringify(answer?.text));
assert.equal(answer?.status, 'error');
assert.match(answer?.text ?? '', /^Error: .*division by zero\n Please fix your mistakes\.$/);

// A direct call throws (AgentsError TOOL_CALL_FAILED) instead of returning the error result.
await assert.rejects(tools[0]!.invoke({ a: 1, b: 0 }), { code: 'TOOL_CALL_FAILED' });
await client.close(); // nothing left open: the script ends by itself
console.log('errors throw ok');
