import { ToolNode } from '@langchain/langgraph/prebuilt';
import { describe, expect, it } from 'vitest';

/**
 * The two protected `ToolNode` methods `pipeline/tool-node.ts` (TrackedToolNode) overrides: no
 * public hook does their job (the state update in the tools step, person-only errors reaching the
 * caller). This test pins their shape, so a LangGraph release that renames them or changes how
 * `run` reaches `runTool` fails here by name, not silently in the change log.
 */
describe('the LangGraph ToolNode internals TrackedToolNode relies on', () => {
  const proto = ToolNode.prototype as unknown as Record<string, unknown>;

  it('has run(input, config) and runTool(call, config, state)', () => {
    expect(typeof proto['run']).toBe('function');
    expect(typeof proto['runTool']).toBe('function');
    expect((proto['run'] as (...args: unknown[]) => unknown).length).toBe(2);
    expect((proto['runTool'] as (...args: unknown[]) => unknown).length).toBe(3);
  });

  it('runs every tool call through this.runTool, so an override sees each call', async () => {
    const node = new ToolNode([]);
    const seen: string[] = [];
    Object.assign(node, {
      runTool: (call: { id: string; name: string }) => {
        seen.push(call.name);
        return Promise.resolve({ content: 'ok', tool_call_id: call.id });
      },
    });
    const { AIMessage } = await import('@langchain/core/messages');
    await node.invoke([
      new AIMessage({
        content: '',
        tool_calls: [
          { id: 'a', name: 'first', args: {} },
          { id: 'b', name: 'second', args: {} },
        ],
      }),
    ]);
    expect(seen).toEqual(['first', 'second']);
  });
});
