import type { CallToolResult, Tool } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { createMcpToolEntries } from '../../src/mcp/tool-adapter.js';
import type { McpToolCaller } from '../../src/mcp/tool-call.js';

function recordingCaller(): McpToolCaller & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    callTool(name): Promise<CallToolResult> {
      calls.push(name);
      return Promise.resolve({ content: [{ type: 'text', text: `ran ${name}` }] });
    },
  };
}

describe('createMcpToolEntries: argument validation compiled on first call', () => {
  const tools: Tool[] = [
    {
      name: 'get_order',
      inputSchema: {
        type: 'object',
        properties: { id: { type: 'string' } },
        required: ['id'],
      },
    },
    {
      name: 'broken_schema',
      inputSchema: { type: 'object', properties: { a: { $ref: '#/$defs/Missing' } } },
    },
  ];

  it('validates from the very first call and keeps validating', async () => {
    const caller = recordingCaller();
    const [order] = createMcpToolEntries({ serverName: 's', tools, caller });
    const first = await order!.execute({ id: 7 }, {});
    expect(first.isError).toBe(true);
    expect(JSON.stringify(first.content)).toContain('/id');
    expect(caller.calls).toEqual([]);
    const second = await order!.execute({}, {});
    expect(second.isError).toBe(true);
    expect(JSON.stringify(second.content)).toContain('id: is required');
    expect((await order!.execute({ id: 'A-1' }, {})).isError).toBeUndefined();
    expect(caller.calls).toEqual(['get_order']);
  });

  it('records a schema that cannot compile on the descriptor once it is first called', async () => {
    const caller = recordingCaller();
    const entries = createMcpToolEntries({ serverName: 's', tools, caller });
    const broken = entries[1]!;
    expect(broken.descriptor.warnings ?? []).toEqual([]);
    await broken.execute({ a: 1 }, {});
    await broken.execute({ a: 2 }, {});
    expect(broken.descriptor.warnings).toHaveLength(1);
    expect(broken.descriptor.warnings?.[0]).toMatch(/could not be compiled/);
    // Not validated here, so the server (which validates too) got both calls.
    expect(caller.calls).toEqual(['broken_schema', 'broken_schema']);
  });

  it('warns when the inputSchema is not an object at all, before any call', () => {
    const entries = createMcpToolEntries({
      serverName: 's',
      tools: [{ name: 'odd', inputSchema: 'nope' as unknown as Tool['inputSchema'] }],
      caller: recordingCaller(),
    });
    expect(entries[0]!.descriptor.warnings).toEqual([
      'inputSchema is not an object; arguments are not validated',
    ]);
  });

  it('builds each descriptor when first read, once, and calls with the listed name', async () => {
    const detected: string[] = [];
    const caller = recordingCaller();
    const entries = createMcpToolEntries({
      serverName: 's',
      tools,
      caller,
      detectPathArguments: (schema) => {
        detected.push(Object.keys(schema.properties ?? {}).join(','));
        return [];
      },
    });
    // Listing built no descriptor: the detector (part of each descriptor) has not run.
    expect(detected).toEqual([]);
    const order = entries[0]!;
    expect((await order.execute({ id: 'A-1' }, {})).isError).toBeUndefined();
    expect(caller.calls).toEqual(['get_order']);
    const descriptor = order.descriptor;
    expect(detected).toEqual(['id']);
    expect(descriptor).toMatchObject({ id: 'mcp:s/get_order', name: 'get_order' });
    expect(descriptor.fingerprint).toMatch(/^[0-9a-f]{64}$/);
    expect(order.descriptor).toBe(descriptor);
    expect(detected).toEqual(['id']);
  });
});
