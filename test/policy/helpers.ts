import { createHash } from 'node:crypto';
import { AIMessage } from '@langchain/core/messages';
import type { BaseMessage } from '@langchain/core/messages';
import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import { END, MessagesAnnotation, START, Send, StateGraph } from '@langchain/langgraph';
import type { BaseCheckpointSaver } from '@langchain/langgraph';
import { ToolNode } from '@langchain/langgraph/prebuilt';
import type { StructuredToolInterface } from '@langchain/core/tools';
import { inferCapabilities } from '../../src/mcp/capabilities.js';
import type { ToolDescriptor } from '../../src/core/tool-descriptor.js';

/** A wire tool definition, as an MCP server would list it. */
export interface WireTool {
  name: string;
  description?: string;
  inputSchema?: Record<string, unknown>;
  annotations?: ToolAnnotations;
}

/** Builds a descriptor the way the adapter does: capabilities from name + annotations only. */
export function descriptorFor(
  serverName: string,
  tool: WireTool,
  options: { trusted?: boolean } = {},
): ToolDescriptor {
  const inputSchema = tool.inputSchema ?? {
    type: 'object',
    properties: { path: { type: 'string' }, content: { type: 'string' } },
  };
  const canonical = JSON.stringify({
    name: tool.name,
    description: tool.description ?? '',
    inputSchema,
    annotations: tool.annotations ?? {},
  });
  return {
    id: `mcp:${serverName}/${tool.name}`,
    name: tool.name,
    originalName: tool.name,
    source: 'mcp',
    serverName,
    description: tool.description ?? '',
    inputSchema: inputSchema as ToolDescriptor['inputSchema'],
    ...(tool.annotations === undefined ? {} : { annotations: tool.annotations }),
    capabilities: inferCapabilities({
      name: tool.name,
      ...(tool.annotations === undefined ? {} : { annotations: tool.annotations }),
      ...(options.trusted === undefined ? {} : { trusted: options.trusted }),
    }),
    pathArguments: ['path'],
    fingerprint: createHash('sha256').update(canonical).digest('hex'),
  };
}

/** The scripted model: emits the given tool calls once, then a final answer. */
export function scriptedGraph(
  tools: StructuredToolInterface[],
  calls: Array<{ name: string; args: Record<string, unknown>; id: string }>,
  checkpointer: BaseCheckpointSaver,
  options: { sendPerCall?: boolean } = {},
) {
  const agent = (state: { messages: BaseMessage[] }) => {
    const alreadyCalled = state.messages.some((message) => message.getType() === 'ai');
    if (alreadyCalled) return { messages: [new AIMessage('done')] };
    return {
      messages: [
        new AIMessage({
          content: '',
          tool_calls: calls.map((call) => ({ ...call, type: 'tool_call' as const })),
        }),
      ],
    };
  };
  const route = (state: { messages: BaseMessage[] }) => {
    const last = state.messages.at(-1);
    if (last === undefined || !(last instanceof AIMessage) || (last.tool_calls?.length ?? 0) === 0)
      return END;
    // One task per tool call: a paused approval then never re-runs its siblings on resume.
    if (options.sendPerCall === true)
      return last.tool_calls!.map((call) => new Send('tools', { ...state, lg_tool_call: call }));
    return 'tools';
  };
  return new StateGraph(MessagesAnnotation)
    .addNode('agent', agent)
    .addNode('tools', new ToolNode(tools))
    .addEdge(START, 'agent')
    .addConditionalEdges('agent', route, ['tools', END])
    .addEdge('tools', 'agent')
    .compile({ checkpointer });
}

/** The `__interrupt__` values of a graph's invoke output (typed graphs do not declare the key). */
export function interruptsOf(output: unknown): unknown[] {
  if (typeof output !== 'object' || output === null || !('__interrupt__' in output)) return [];
  const list = output.__interrupt__;
  return Array.isArray(list)
    ? list.map((item: unknown) =>
        typeof item === 'object' && item !== null && 'value' in item ? item.value : undefined,
      )
    : [];
}

/** A message's content as text (string content as is, block content as JSON). */
export function contentText(message: { content: unknown } | undefined): string {
  const content = message?.content;
  return typeof content === 'string' ? content : JSON.stringify(content ?? null);
}
