// examples/snippets/hand-built-graph.ts — run: npx tsx examples/snippets/hand-built-graph.ts
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ToolNode } from '@langchain/langgraph/prebuilt';
import { createMcpToolAdapter } from '@agents/langgraph-mcp';

const client = new Client({ name: 'my-app', version: '1.0.0' });
await client.connect(
  new StdioClientTransport({
    command: 'npx',
    args: ['-y', '@modelcontextprotocol/server-everything'],
  }),
);
try {
  const adapter = createMcpToolAdapter({ serverName: 'everything', client });
  const tools = await adapter.tools(); // StructuredTools, with descriptors and capabilities
  const toolNode = new ToolNode(tools); // unchanged LangGraph ToolNode: add it to your graph
  const echo = tools.find((tool) => tool.name.endsWith('echo'));
  console.log(`${tools.length} tools; echo says:`, await echo?.invoke({ message: 'hi' }));
  console.log('ToolNode ready:', toolNode.name);
} finally {
  await client.close(); // stops the server process: the script exits by itself
}
