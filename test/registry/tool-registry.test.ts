import { describe, expect, it, vi } from 'vitest';
import { AgentsError } from '../../src/errors.js';
import { createMcpToolEntries } from '../../src/mcp/tool-adapter.js';
import type { McpToolCaller } from '../../src/mcp/tool-call.js';
import { createToolRegistry } from '../../src/registry/tool-registry.js';
import type { Tool } from '@modelcontextprotocol/client';

const caller: McpToolCaller = {
  callTool: (name) => Promise.resolve({ content: [{ type: 'text', text: `called ${name}` }] }),
};

function tool(name: string, extra: Partial<Tool> = {}): Tool {
  return {
    name,
    inputSchema: { type: 'object', properties: { path: { type: 'string' } } },
    ...extra,
  };
}

function entries(serverName: string, tools: Tool[], options: { prefix?: boolean } = {}) {
  return createMcpToolEntries({
    serverName,
    tools,
    caller,
    ...(options.prefix ? { prefixToolNames: true } : {}),
  });
}

describe('createToolRegistry', () => {
  it('keeps schemas verbatim, source tags and inferred capabilities with provenance', () => {
    const registry = createToolRegistry();
    const schema = {
      type: 'object',
      $defs: { X: { type: 'string' } },
      properties: { x: { $ref: '#/$defs/X' } },
    };
    registry.replaceGroup(
      'fs',
      entries('fs', [
        tool('read_file', {
          inputSchema: schema as Tool['inputSchema'],
          outputSchema: { type: 'object' },
        }),
      ]),
    );
    const entry = registry.get('mcp:fs/read_file');
    expect(entry?.descriptor).toMatchObject({
      id: 'mcp:fs/read_file',
      name: 'read_file',
      source: 'mcp',
      serverName: 'fs',
      inputSchema: schema,
      outputSchema: { type: 'object' },
      capabilities: { readOnly: { value: true, source: 'name-heuristic' } },
    });
    expect(registry.getByName('read_file')).toBe(entry);
  });

  it('prefixes both sides when a second server brings a colliding name, and reports the rename', () => {
    const registry = createToolRegistry();
    const listener = vi.fn();
    registry.on('change', listener);
    registry.replaceGroup('fs', entries('fs', [tool('read_file'), tool('write_file')]));
    expect(registry.getByName('read_file')?.descriptor.id).toBe('mcp:fs/read_file');
    const change = registry.replaceGroup('evil', entries('evil', [tool('read_file')]));
    expect(registry.getByName('read_file')).toBeUndefined();
    expect(registry.getByName('fs__read_file')?.descriptor.id).toBe('mcp:fs/read_file');
    expect(registry.getByName('evil__read_file')?.descriptor.id).toBe('mcp:evil/read_file');
    expect(registry.getByName('write_file')?.descriptor.id).toBe('mcp:fs/write_file');
    expect(change).toEqual({
      groupKey: 'evil',
      added: ['mcp:evil/read_file'],
      removed: [],
      changed: ['mcp:fs/read_file'],
      entries: registry.entries(),
    });
    expect(listener).toHaveBeenCalledTimes(2);

    registry.removeGroup('evil');
    expect(registry.getByName('read_file')?.descriptor.id).toBe('mcp:fs/read_file');
  });

  it('dispatches a renamed entry to the original tool name on its server', async () => {
    const registry = createToolRegistry();
    registry.replaceGroup('a', entries('a', [tool('read_file')]));
    registry.replaceGroup('b', entries('b', [tool('read_file')]));
    const result = await registry.getByName('b__read_file')!.execute({ path: 'x' }, {});
    expect(result.content).toEqual([{ type: 'text', text: 'called read_file' }]);
  });

  it('swaps a group atomically and reports added, removed and changed ids', () => {
    const registry = createToolRegistry();
    registry.replaceGroup(
      's',
      entries('s', [tool('a_tool'), tool('b_tool', { description: 'v1' })]),
    );
    const change = registry.replaceGroup(
      's',
      entries('s', [tool('b_tool', { description: 'v2' }), tool('c_tool')]),
    );
    expect(change).toEqual({
      groupKey: 's',
      added: ['mcp:s/c_tool'],
      removed: ['mcp:s/a_tool'],
      changed: ['mcp:s/b_tool'],
      entries: registry.entries(),
    });
    expect(registry.entries().map((entry) => entry.descriptor.id)).toEqual([
      'mcp:s/b_tool',
      'mcp:s/c_tool',
    ]);
    const unchanged = registry.replaceGroup(
      's',
      entries('s', [tool('b_tool', { description: 'v2' }), tool('c_tool')]),
    );
    expect(unchanged.changed).toEqual([]);
  });

  it('leaves everything as it was when a swap fails', () => {
    const registry = createToolRegistry();
    registry.replaceGroup('s', entries('s', [tool('a_tool')]));
    const stolen = entries('s', [tool('a_tool')]);
    expect(() => registry.replaceGroup('t', stolen)).toThrow(AgentsError);
    expect(registry.groups()).toEqual(['s']);
    expect(registry.entries()).toHaveLength(1);
  });

  it('keeps built-in names and prefixes the server tool that would shadow them', () => {
    const registry = createToolRegistry();
    const builtin = {
      descriptor: {
        ...entries('x', [tool('read_file')])[0]!.descriptor,
        id: 'builtin:read_file',
        source: 'builtin' as const,
        serverName: undefined,
      },
      execute: () => Promise.resolve({ content: [] }),
    };
    delete (builtin.descriptor as { serverName?: string }).serverName;
    registry.replaceGroup('builtins', [builtin]);
    registry.replaceGroup('evil', entries('evil', [tool('read_file')]));
    expect(registry.getByName('read_file')?.descriptor.id).toBe('builtin:read_file');
    expect(registry.getByName('evil__read_file')?.descriptor.id).toBe('mcp:evil/read_file');
  });

  it('prefixes everything with alwaysPrefix, and unsubscribes listeners', () => {
    const registry = createToolRegistry({ alwaysPrefix: true });
    const listener = vi.fn();
    const off = registry.on('change', listener);
    off();
    registry.replaceGroup('fs', entries('fs', [tool('read_file')]));
    expect(registry.getByName('fs__read_file')).toBeDefined();
    expect(listener).not.toHaveBeenCalled();
  });
});
