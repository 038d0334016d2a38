import { AIMessage, type ToolMessage } from '@langchain/core/messages';
import { ToolNode } from '@langchain/langgraph/prebuilt';
import { describe, expect, it } from 'vitest';
import { AgentsError, ServerError } from '../../src/errors.js';
import { createMcpToolAdapter, createMcpToolEntries } from '../../src/mcp/tool-adapter.js';
import { listAllTools } from '../../src/mcp/list-tools.js';
import { knownPathArgumentsOf } from '../../src/mcp/path-arguments.js';
import { FIXTURE_NOOP_COUNT } from '../fixtures/fixture-server.js';
import { connectFixture } from '../fixtures/fixture-client.js';

function aiCall(name: string, args: Record<string, unknown>, id = `call_${name}`): AIMessage {
  return new AIMessage({ content: '', tool_calls: [{ id, name, args, type: 'tool_call' }] });
}

async function runNode(node: ToolNode, message: AIMessage): Promise<ToolMessage> {
  const output = (await node.invoke({ messages: [message] })) as { messages: ToolMessage[] };
  expect(output.messages).toHaveLength(1);
  return output.messages[0]!;
}

describe('listAllTools', () => {
  it('reads every page of tools/list', async () => {
    await using pair = await connectFixture({ pageSize: 7 });
    const tools = await listAllTools(pair.client, { serverName: 'fixture' });
    expect(tools.length).toBeGreaterThanOrEqual(FIXTURE_NOOP_COUNT + 10);
    expect(new Set(tools.map((tool) => tool.name)).size).toBe(tools.length);
    expect(tools.map((tool) => tool.name)).toContain(`noop_${FIXTURE_NOOP_COUNT - 1}`);
  });

  it('refuses a server whose pages never end', async () => {
    await using pair = await connectFixture({ pageSize: 1 });
    await expect(
      listAllTools(pair.client, { serverName: 'fixture', maxPages: 3 }),
    ).rejects.toMatchObject({
      code: 'PROTOCOL_ERROR',
      details: { serverName: 'fixture', phase: 'list' },
    });
  });
});

describe('createMcpToolAdapter', () => {
  it('builds descriptors with ids, fingerprints, capabilities and path arguments from overrides', async () => {
    await using pair = await connectFixture();
    const adapter = createMcpToolAdapter({
      serverName: 'fx',
      client: pair.client,
      overrides: {
        write_file: { pathArguments: ['path'] },
        noop_00: { enabled: false },
        echo: { name: 'say' },
      },
    });
    const entries = await adapter.listTools();
    const byId = new Map(entries.map((entry) => [entry.descriptor.id, entry.descriptor]));
    expect(byId.has('mcp:fx/noop_00')).toBe(false);
    expect(byId.get('mcp:fx/echo')?.name).toBe('say');
    expect(byId.get('mcp:fx/write_file')).toMatchObject({
      source: 'mcp',
      serverName: 'fx',
      pathArguments: ['path'],
      capabilities: { writes: { value: true, source: 'name-heuristic' } },
    });
    const lying = byId.get('mcp:fx/delete_everything')!;
    expect(lying.capabilities.readOnly.value).toBe(false);
    expect(lying.capabilities.disagreements[0]).toMatch(/readOnlyHint=true ignored/);
    expect(byId.get('mcp:fx/get_weather')?.outputSchema).toMatchObject({
      required: ['city', 'temperatureC'],
    });
    expect(new Set(entries.map((entry) => entry.descriptor.fingerprint)).size).toBe(entries.length);
  });

  it('executes by original name, validates first, and returns isError results as they are', async () => {
    await using pair = await connectFixture({ tools: 'basic' });
    const adapter = createMcpToolAdapter({ serverName: 'fx', client: pair.client });
    expect(await adapter.execute('add', { a: 2, b: 3 })).toEqual({
      content: [{ type: 'text', text: '5' }],
    });
    const invalid = await adapter.execute('add', { a: 'two', b: 3 });
    expect(invalid.isError).toBe(true);
    expect(invalid.content).toEqual([
      {
        type: 'text',
        text: 'Invalid arguments for tool "add": /a: must be number. Fix these arguments and call the tool again.',
      },
    ]);
    expect((await adapter.execute('fail', { message: 'x' })).isError).toBe(true);
    await expect(adapter.execute('nope', {})).rejects.toSatisfy((error) =>
      AgentsError.hasCode(error, 'TOOL_NOT_FOUND'),
    );
  });

  it('turns a dead connection into a ServerError naming the server, the tool and phase "call"', async () => {
    const pair = await connectFixture({ tools: 'basic' });
    const adapter = createMcpToolAdapter({ serverName: 'fx', client: pair.client });
    await adapter.listTools();
    await pair.close();
    const error: unknown = await adapter
      .execute('add', { a: 1, b: 2 })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ServerError);
    expect(error).toMatchObject({ details: { serverName: 'fx', phase: 'call', toolName: 'add' } });
  });

  it('cancels a call through the abort signal and reports ABORTED', async () => {
    await using pair = await connectFixture();
    const adapter = createMcpToolAdapter({ serverName: 'fx', client: pair.client });
    const controller = new AbortController();
    const pending = adapter.execute('slow', { ms: 10_000 }, { signal: controller.signal });
    setTimeout(() => controller.abort(), 5);
    await expect(pending).rejects.toMatchObject({ code: 'ABORTED', details: { phase: 'call' } });
  });

  it('forwards progress only when a progress callback exists', async () => {
    await using pair = await connectFixture();
    const adapter = createMcpToolAdapter({ serverName: 'fx', client: pair.client });
    const seen: number[] = [];
    await adapter.execute(
      'slow',
      { ms: 6, steps: 3 },
      {},
      { onProgress: (progress) => seen.push(progress.progress) },
    );
    expect(seen).toEqual([1, 2, 3]);
  });

  it('rejects a server that lists one name twice', () => {
    const caller = { callTool: () => Promise.resolve({ content: [] }) };
    const tool = { name: 'dup', inputSchema: { type: 'object' as const } };
    expect(() => createMcpToolEntries({ serverName: 's', tools: [tool, tool], caller })).toThrow(
      /twice/,
    );
  });

  it('adds the known path arguments of a well-known server to what detection finds', () => {
    const caller = { callTool: () => Promise.resolve({ content: [] }) };
    // A schema that says nothing path-like: detection alone finds nothing to rewrite.
    const tool = {
      name: 'move_file',
      inputSchema: {
        type: 'object' as const,
        properties: { source: { type: 'string' }, destination: { type: 'string' } },
      },
    };
    const plain = createMcpToolEntries({
      serverName: 'fs',
      tools: [tool],
      caller,
      detectPathArguments: () => [],
    });
    expect(plain[0]!.descriptor.pathArguments).toEqual([]);
    const table = knownPathArgumentsOf([
      'npx',
      '-y',
      '@modelcontextprotocol/server-filesystem',
      '/tmp',
    ]);
    expect(table).toBeDefined();
    const known = createMcpToolEntries({
      serverName: 'fs',
      tools: [tool],
      caller,
      detectPathArguments: () => ['source'],
      knownPathArguments: (name) => table?.[name],
    });
    expect(known[0]!.descriptor.pathArguments).toEqual(['source', 'destination']);
    expect(knownPathArgumentsOf(['node', 'my-server.js'])).toBeUndefined();
  });
});

describe('adapter tools in ToolNode (in memory)', () => {
  it('gives success, isError, invalid-argument and structured results as ToolMessages', async () => {
    await using pair = await connectFixture();
    const adapter = createMcpToolAdapter({ serverName: 'fx', client: pair.client });
    const node = new ToolNode(await adapter.tools());

    const ok = await runNode(node, aiCall('add', { a: 40, b: 2 }));
    expect(ok).toMatchObject({
      status: 'success',
      content: '42',
      tool_call_id: 'call_add',
      name: 'add',
    });

    const failed = await runNode(node, aiCall('fail', { message: 'boom' }));
    expect(failed.status).toBe('error');
    expect(failed.content).toBe('failed on purpose: boom');
    expect(failed.artifact).toEqual({ isError: true });

    const invalid = await runNode(
      node,
      aiCall('create_order', { customer: { name: '' }, items: [] }),
    );
    expect(invalid.status).toBe('error');
    expect(invalid.content).toContain('/customer/name: must NOT have fewer than 1 characters');
    expect(invalid.content).toContain('/items: must NOT have fewer than 1 items');

    const weather = await runNode(node, aiCall('get_weather', { city: 'Oslo' }));
    expect(weather.content).toBe('Oslo: 21.5 °C');
    expect(weather.artifact).toEqual({ structuredContent: { city: 'Oslo', temperatureC: 21.5 } });

    const stats = await runNode(node, aiCall('get_stats', {}));
    expect(stats.content).toBe('{"count":7}');
  });

  it('returns content on a direct invoke and throws for an error result', async () => {
    await using pair = await connectFixture({ tools: 'basic' });
    const adapter = createMcpToolAdapter({ serverName: 'fx', client: pair.client });
    const tools = await adapter.tools();
    const add = tools.find((tool) => tool.name === 'add');
    const fail = tools.find((tool) => tool.name === 'fail');
    expect(await add!.invoke({ a: 1, b: 2 })).toBe('3');
    // The tool's descriptor is its entry's, built once whichever asks first.
    const entry = (await adapter.listTools()).find((each) => each.descriptor.name === 'add');
    expect((add as unknown as { descriptor: unknown }).descriptor).toBe(entry!.descriptor);
    expect(entry!.descriptor.capabilities.readOnly).toBeDefined();
    await expect(fail!.invoke({ message: 'no' })).rejects.toMatchObject({
      code: 'TOOL_CALL_FAILED',
    });
  });

  it('turns a transport failure into an error ToolMessage and keeps the graph going', async () => {
    const pair = await connectFixture({ tools: 'basic' });
    const adapter = createMcpToolAdapter({ serverName: 'fx', client: pair.client });
    const node = new ToolNode(await adapter.tools());
    await pair.close();
    const message = await runNode(node, aiCall('add', { a: 1, b: 2 }));
    expect(message.status).toBe('error');
    expect(message.content).toMatch(/Tool "add" on server "fx" failed/);
  });
});

describe('path arguments', () => {
  it('detects path arguments from the schema when no override names them', async () => {
    await using pair = await connectFixture({ tools: 'basic' });
    const entries = await createMcpToolAdapter({
      serverName: 'fx',
      client: pair.client,
    }).listTools();
    const writeFile = entries.find((entry) => entry.descriptor.originalName === 'write_file')!;
    expect(writeFile.descriptor.pathArguments).toContain('path');
    expect(writeFile.descriptor.pathArguments).not.toContain('content');
  });
});
