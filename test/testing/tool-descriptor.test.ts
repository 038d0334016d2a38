import { describe, expect, it } from 'vitest';
import { decide } from '../../src/policy/decide.js';
import { parsePolicy } from '../../src/config/policy-schema.js';
import { createToolRegistry } from '../../src/registry/tool-registry.js';
import { buildToolDescriptor, buildToolEntry } from '../../src/testing/index.js';

describe('/testing descriptor builder', () => {
  it('infers capabilities, path arguments and a fingerprint like a real MCP tool', () => {
    const writer = buildToolDescriptor({
      name: 'write_file',
      server: 'fs',
      inputSchema: { type: 'object', properties: { path: { type: 'string' } } },
    });
    expect(writer).toMatchObject({ id: 'mcp:fs/write_file', source: 'mcp', serverName: 'fs' });
    expect(writer.capabilities.writes).toMatchObject({ value: true, source: 'name-heuristic' });
    expect(writer.pathArguments).toEqual(['path']);
    // The fingerprint follows the wire definition.
    expect(buildToolDescriptor({ name: 'write_file', server: 'fs' }).fingerprint).not.toBe(
      writer.fingerprint,
    );
    expect(decide(writer, parsePolicy({ mode: 'read-only' })).decision).toBe('deny');
  });

  it('takes capabilities as an override and an id such as a tool resource id', () => {
    const status = buildToolDescriptor({
      name: 'sync_repo',
      id: 'repo.sync',
      capabilities: { readOnly: true },
    });
    expect(status.id).toBe('repo.sync');
    expect(status.capabilities.readOnly).toMatchObject({ value: true, source: 'override' });
    expect(decide(status, parsePolicy({ mode: 'read-only' })).decision).toBe('allow');
  });

  it('makes entries the tool registry accepts; the default tool echoes its arguments', async () => {
    const registry = createToolRegistry();
    registry.replaceGroup('t', [buildToolEntry({ name: 'echo' })]);
    const result = await registry.getByName('echo')!.execute({ a: 1 }, {});
    expect(result.content).toEqual([{ type: 'text', text: '{"a":1}' }]);
  });
});
