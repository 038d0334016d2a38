import { AIMessage, type ToolMessage } from '@langchain/core/messages';
import { ToolNode } from '@langchain/langgraph/prebuilt';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { afterEach, describe, expect, it } from 'vitest';
import { toStructuredTool } from '../../src/mcp/structured-tool.js';
import { createManagedServer, type ManagedServer } from '../../src/servers/managed-server.js';

let server: ManagedServer | undefined;
afterEach(async () => {
  await server?.close();
});

/** The tools a graph binds for the next model turn: built from the server's current set. */
function bindTools(managed: ManagedServer) {
  return managed
    .entries()
    .map((entry) =>
      toStructuredTool(entry.descriptor, (request) =>
        entry.execute(request.args, request.context, request.capabilities),
      ),
    );
}

async function runToolNode(
  tools: ReturnType<typeof bindTools>,
  name: string,
): Promise<ToolMessage> {
  const node = new ToolNode(tools, { handleToolErrors: true });
  const message = new AIMessage({ content: '', tool_calls: [{ id: 'call_1', name, args: {} }] });
  const output = (await node.invoke({ messages: [message] })) as { messages: ToolMessage[] };
  return output.messages[0]!;
}

describe('tool refresh seen through a real ToolNode run', () => {
  it('a tool added at run time is callable in the next turn; a removed one gives the model a clear error', async () => {
    const mcp = new McpServer({ name: 'graph-fixture', version: '1.0.0' });
    mcp.registerTool('first', { description: 'First', inputSchema: {} }, () => ({
      content: [{ type: 'text', text: 'first ran' }],
    }));
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await mcp.connect(serverSide);
    server = createManagedServer(
      { name: 'g', transport: 'stdio', command: 'unused', args: [], trusted: false },
      {
        transportFactory: () => ({
          transport: clientSide,
          target: 'in-memory',
          close: () => clientSide.close(),
        }),
        refreshDebounceMs: 10,
      },
    );
    await server.start();
    const turnOne = bindTools(server);
    expect(turnOne.map((tool) => tool.name)).toEqual(['first']);

    const changed = new Promise<void>((resolve) => server!.on('tools-changed', () => resolve()));
    const second = mcp.registerTool('second', { description: 'Second', inputSchema: {} }, () => ({
      content: [{ type: 'text', text: 'second ran' }],
    }));
    await changed;
    const turnTwo = bindTools(server);
    expect(turnTwo.map((tool) => tool.name).sort()).toEqual(['first', 'second']);
    expect((await runToolNode(turnTwo, 'second')).content).toBe('second ran');

    const removed = new Promise<void>((resolve) => server!.on('tools-changed', () => resolve()));
    second.remove();
    await removed;
    // The model still holds turn two's tools: the call reaches the server object, which refuses it.
    const message = await runToolNode(turnTwo, 'second');
    expect(message.status).toBe('error');
    expect(
      typeof message.content === 'string' ? message.content : JSON.stringify(message.content),
    ).toContain('no longer available');
    expect(bindTools(server).map((tool) => tool.name)).toEqual(['first']);
  });
});
