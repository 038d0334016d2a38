import { describe, expect, it } from 'vitest';
import type { ToolMessage } from '@langchain/core/messages';
import { AIMessage } from '@langchain/core/messages';
import { ToolNode } from '@langchain/langgraph/prebuilt';
import type { Tool } from '@modelcontextprotocol/client';
import { parsePolicy } from '../../src/config/policy-schema.js';
import type { ToolMiddleware } from '../../src/core/tool-middleware.js';
import { createMcpToolEntries } from '../../src/mcp/tool-adapter.js';
import type { McpToolCaller } from '../../src/mcp/tool-call.js';
import { createToolPipeline } from '../../src/pipeline/tool-pipeline.js';
import { createToolSet } from '../../src/pipeline/tool-set.js';
import { createToolRegistry } from '../../src/registry/tool-registry.js';

/** What the "server" received: proof a call reached it (or did not). */
function recordingCaller(): McpToolCaller & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    callTool: (name) => {
      calls.push(name);
      return Promise.resolve({ content: [{ type: 'text', text: `called ${name}` }] });
    },
  };
}

const tool = (name: string): Tool => ({
  name,
  inputSchema: { type: 'object', properties: { path: { type: 'string' } } },
});

function callMessage(name: string, id: string): AIMessage {
  return new AIMessage({ content: '', tool_calls: [{ id, name, args: { path: 'a.txt' } }] });
}

async function runToolNode(node: ToolNode, message: AIMessage): Promise<ToolMessage> {
  const result = (await node.invoke({ messages: [message] })) as { messages: ToolMessage[] };
  return result.messages[0]!;
}

describe('createToolSet', () => {
  it('follows the registry: a ToolNode built before a change runs the tool added after it', async () => {
    // Pins LangGraph's ToolNode finding a tool by name in the array it was given on each call
    // (not a map built in the constructor): the live tool set relies on it. If a LangGraph
    // release changes that, this test fails.
    const caller = recordingCaller();
    const registry = createToolRegistry();
    registry.replaceGroup(
      'fs',
      createMcpToolEntries({ serverName: 'fs', tools: [tool('read_file')], caller }),
    );
    const toolSet = createToolSet({ registry, pipeline: createToolPipeline() });
    const node = new ToolNode(toolSet.tools);
    expect(toolSet.tools.map((t) => t.name)).toEqual(['read_file']);
    const seen: string[][] = [];
    toolSet.onChange((tools) => seen.push(tools.map((t) => t.name)));

    // The server's list_changed: a new tool appears, another goes.
    registry.replaceGroup(
      'fs',
      createMcpToolEntries({ serverName: 'fs', tools: [tool('list_directory')], caller }),
    );
    expect(toolSet.version).toBe(1);
    expect(seen).toEqual([['list_directory']]);
    const added = await runToolNode(node, callMessage('list_directory', 'c1'));
    expect(added.text).toBe('called list_directory');
    const gone = await runToolNode(node, callMessage('read_file', 'c2'));
    expect(gone.status).toBe('error');
    expect(caller.calls).toEqual(['list_directory']);

    // After close the set no longer follows the registry.
    toolSet.close();
    registry.replaceGroup(
      'fs',
      createMcpToolEntries({ serverName: 'fs', tools: [tool('read_file')], caller }),
    );
    expect(toolSet.tools.map((t) => t.name)).toEqual(['list_directory']);
    expect(toolSet.version).toBe(1);
  });

  it('runs every call through the pipeline: a read-only policy refuses a write, the server never sees it', async () => {
    const caller = recordingCaller();
    const registry = createToolRegistry();
    registry.replaceGroup(
      'fs',
      createMcpToolEntries({
        serverName: 'fs',
        tools: [tool('read_file'), tool('write_file')],
        caller,
      }),
    );
    const passed: string[] = [];
    const recorder: ToolMiddleware = {
      name: 'recorder',
      wrap: (request, next) => {
        passed.push(request.descriptor.id);
        return next(request);
      },
    };
    const toolSet = createToolSet({
      registry,
      pipeline: createToolPipeline({
        outer: [recorder],
        policy: { policy: parsePolicy({ mode: 'read-only' }, 'the test') },
      }),
    });
    const node = new ToolNode(toolSet.tools);
    const write = await runToolNode(node, callMessage('write_file', 'w1'));
    const read = await runToolNode(node, callMessage('read_file', 'r1'));
    expect(passed).toEqual(['mcp:fs/write_file', 'mcp:fs/read_file']);
    expect(write.status).toBe('error');
    expect(write.text).toMatch(/read-only/i);
    expect(read.text).toBe('called read_file');
    expect(caller.calls).toEqual(['read_file']);
    toolSet.close();
  });
});
