// examples/snippets/hand-built-graph.ts — run: npx tsx examples/snippets/hand-built-graph.ts
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ToolNode } from '@langchain/langgraph/prebuilt';
import { createMcpToolAdapter } from '@agents/langgraph-mcp';

const client = new Client({ name: 'my-app', version: '1.0.0' });
const server = { command: 'npx', args: ['-y', '@modelcontextprotocol/server-everything'] };
await client.connect(new StdioClientTransport(server));
const adapter = createMcpToolAdapter({ serverName: 'everything', client });
const tools = await adapter.tools(); // StructuredTools, with descriptors and capabilities
const toolNode = new ToolNode(tools); // unchanged LangGraph ToolNode: add it to your graph
const echo = tools.find((tool) => tool.name.endsWith('echo'));
console.log(
  `ToolNode with ${toolNode.tools.length} tools; echo says:`,
  await echo?.invoke({ message: 'hi' }),
);
await client.close(); // stops the server process, so the script ends by itself
