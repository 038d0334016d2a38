/**
 * The stacks being compared, each built over one shared SDK client: the raw SDK call, our
 * adapter's tool (direct and through `ToolNode`), `@langchain/mcp-adapters` (direct and through
 * the same `ToolNode`), and a local `tool()` through `ToolNode` (ToolNode's own cost).
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { AIMessage, ToolMessage } from '@langchain/core/messages';
import { tool, type StructuredToolInterface } from '@langchain/core/tools';
import { ToolNode } from '@langchain/langgraph/prebuilt';
import { loadMcpTools } from '@langchain/mcp-adapters';
import { z } from 'zod';
import { createMcpToolAdapter } from '../src/mcp/tool-adapter.js';
import type { Contender } from './harness.js';

/** Stack names, in table order. */
export const STACK = {
  raw: 'raw SDK callTool',
  oursDirect: 'ours direct invoke',
  oursToolNode: 'ours via ToolNode',
  peerDirect: 'peer direct invoke',
  peerToolNode: 'peer via ToolNode',
  localToolNode: 'local tool() via ToolNode',
} as const;

/** Finds a tool by its MCP name, allowing a server prefix (`bench__echo`). */
export function findTool<T extends { name: string }>(tools: readonly T[], toolName: string): T {
  const found =
    tools.find((each) => each.name === toolName) ??
    tools.find((each) => each.name.endsWith(`__${toolName}`) || each.name.endsWith(`_${toolName}`));
  if (found === undefined) {
    throw new Error(
      `tool "${toolName}" not found among: ${tools.map((each) => each.name).join(', ')}`,
    );
  }
  return found;
}

let callCounter = 0;

/** A ToolNode input holding one tool call. A fresh message per call, as a model would send. */
export function toolCallInput(
  toolName: string,
  args: Record<string, unknown>,
): { messages: AIMessage[] } {
  callCounter++;
  return {
    messages: [
      new AIMessage({
        content: '',
        tool_calls: [{ id: `call_${callCounter}`, name: toolName, args, type: 'tool_call' }],
      }),
    ],
  };
}

/** The text content of a ToolNode output's last message (for correctness checks). */
export function toolNodeText(output: unknown): string {
  const messages =
    typeof output === 'object' && output !== null && 'messages' in output
      ? (output as { messages: unknown }).messages
      : Array.isArray(output)
        ? output
        : undefined;
  const last: unknown = Array.isArray(messages) ? messages.at(-1) : undefined;
  if (!ToolMessage.isInstance(last))
    throw new Error(`ToolNode returned no ToolMessage: ${String(output)}`);
  return last.text;
}

/** Text of a raw MCP result. */
export function resultText(result: unknown): string {
  const content = (result as CallToolResult).content;
  const first = Array.isArray(content) ? content[0] : undefined;
  return first !== undefined && first.type === 'text' ? first.text : '';
}

/** Text of a LangChain tool's direct `invoke` output (string, or [content, artifact]). */
export function invokeText(output: unknown): string {
  if (typeof output === 'string') return output;
  if (ToolMessage.isInstance(output)) return output.text;
  if (Array.isArray(output)) {
    const [content] = output as unknown[];
    if (typeof content === 'string') return content;
    if (Array.isArray(content)) {
      const first: unknown = content[0];
      if (typeof first === 'object' && first !== null && 'text' in first) {
        return String((first as { text: unknown }).text);
      }
    }
  }
  if (typeof output === 'object' && output !== null && 'content' in output)
    return resultText(output);
  return JSON.stringify(output);
}

/** The tools of every stack for one connected client. */
export interface Stacks {
  ours: StructuredToolInterface[];
  peer: StructuredToolInterface[];
  oursNode: ToolNode;
  peerNode: ToolNode;
  localNode: ToolNode;
}

/** The local echo tool: ToolNode's own cost with no MCP at all. */
export const localEcho = tool(async ({ text }: { text: string }) => text, {
  name: 'echo',
  description: 'Returns the text it was given.',
  schema: z.object({ text: z.string() }),
});

/** Builds every stack's tools over `client` (discovery is not timed here). */
export async function buildStacks(client: Client, serverName = 'bench'): Promise<Stacks> {
  const adapter = createMcpToolAdapter({ serverName, client });
  const ours = await adapter.tools();
  const peer = await loadMcpTools(serverName, client);
  return {
    ours,
    peer,
    oursNode: new ToolNode(ours),
    peerNode: new ToolNode(peer),
    localNode: new ToolNode([localEcho]),
  };
}

/** The six contenders for one MCP tool and argument set. */
export function contendersFor(
  client: Client,
  stacks: Stacks,
  toolName: string,
  args: Record<string, unknown>,
): Contender[] {
  const ours = findTool(stacks.ours, toolName);
  const peer = findTool(stacks.peer, toolName);
  return [
    { name: STACK.raw, call: () => client.callTool({ name: toolName, arguments: args }) },
    { name: STACK.oursDirect, call: () => ours.invoke(args) },
    {
      name: STACK.oursToolNode,
      call: () => stacks.oursNode.invoke(toolCallInput(ours.name, args)),
    },
    { name: STACK.peerDirect, call: () => peer.invoke(args) },
    {
      name: STACK.peerToolNode,
      call: () => stacks.peerNode.invoke(toolCallInput(peer.name, args)),
    },
    { name: STACK.localToolNode, call: () => stacks.localNode.invoke(toolCallInput('echo', args)) },
  ];
}

/**
 * Calls every stack once and checks it returned `expected`, so a benchmark never times a
 * failing call. Throws with the stack name on a mismatch.
 */
export async function verifyEcho(client: Client, stacks: Stacks, text: string): Promise<void> {
  const args = { text };
  const ours = findTool(stacks.ours, 'echo');
  const peer = findTool(stacks.peer, 'echo');
  const outputs: Array<[string, string]> = [
    [STACK.raw, resultText(await client.callTool({ name: 'echo', arguments: args }))],
    [STACK.oursDirect, invokeText(await ours.invoke(args))],
    [
      STACK.oursToolNode,
      toolNodeText(await stacks.oursNode.invoke(toolCallInput(ours.name, args))),
    ],
    [STACK.peerDirect, invokeText(await peer.invoke(args))],
    [
      STACK.peerToolNode,
      toolNodeText(await stacks.peerNode.invoke(toolCallInput(peer.name, args))),
    ],
    [STACK.localToolNode, toolNodeText(await stacks.localNode.invoke(toolCallInput('echo', args)))],
  ];
  for (const [name, output] of outputs) {
    if (output !== text) {
      throw new Error(
        `${name} returned ${output.length} chars, expected ${text.length}: ${output.slice(0, 120)}`,
      );
    }
  }
}
