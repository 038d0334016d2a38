// examples/snippets/hand-built-graph.ts — run: npx tsx examples/snippets/hand-built-graph.ts
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ToolNode } from '@langchain/langgraph/prebuilt';
import { createMcpToolAdapter, createToolRegistry } from '@agents/langgraph-mcp';
import { createToolPipeline, createToolSet } from '@agents/langgraph-mcp/graph';
import { parsePolicy } from '@agents/langgraph-mcp/policy';

const client = new Client({ name: 'my-app', version: '1.0.0' });
const server = { command: 'npx', args: ['-y', '@modelcontextprotocol/server-everything'] };
await client.connect(new StdioClientTransport(server));
const adapter = createMcpToolAdapter({ serverName: 'everything', client });
const registry = createToolRegistry(); // each tool with its capabilities (read-only or write, and why)
registry.replaceGroup('everything', await adapter.listTools());
// Every call goes through the policy (`ask` would pause the graph for approval of writes).
const pipeline = createToolPipeline({
  policy: { policy: parsePolicy({ mode: 'auto' }, 'my graph') },
});
const toolSet = createToolSet({ registry, pipeline }); // live: follows the registry's changes
const toolNode = new ToolNode(toolSet.tools); // unchanged LangGraph ToolNode: add it to your graph
const echo = toolSet.tools.find((tool) => tool.name.endsWith('echo'));
console.log(
  `ToolNode with ${toolNode.tools.length} tools; echo says:`,
  await echo?.invoke({ message: 'hi' }),
);
toolSet.close();
await client.close(); // stops the server process, so the script ends by itself
