import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import {
  CallToolResultSchema,
  ErrorCode,
  McpError,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { Server } from '@modelcontextprotocol/server';
import { ServerError } from '../../src/errors.js';
import { createMcpToolEntries } from '../../src/mcp/tool-adapter.js';
import type { ToolMiddleware } from '../../src/core/tool-middleware.js';
import type { ToolEntry } from '../../src/core/tool-descriptor.js';
import { createMcpServer } from '../../src/serving/mcp-server.js';
import {
  DEFAULT_SERVE_INSTRUCTIONS,
  SERVED_ERROR_META_KEY,
} from '../../src/serving/served-tool.js';
import type { CreateMcpServerOptions } from '../../src/serving/mcp-server.js';
import { createServedToolSet } from '../../src/serving/served-tool-set.js';
import { capabilities, descriptor, echoEntry, entry, CountingRegistry } from './helpers.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Connected {
  client: Client;
  server: Server;
  /** Every message the server sent, as it arrived (before the client's zod parsing). */
  wire: JSONRPCMessage[];
}

async function connect(options: CreateMcpServerOptions): Promise<Connected> {
  const server = createMcpServer(options);
  const client = new Client({ name: 'test-client', version: '1.0.0' });
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  await server.connect(serverTransport);
  await client.connect(clientTransport);
  const wire: JSONRPCMessage[] = [];
  const deliver = clientTransport.onmessage;
  clientTransport.onmessage = (message, extra) => {
    // The in-memory pair hands objects over; serialise to capture what the wire would carry.
    wire.push(JSON.parse(JSON.stringify(message)) as JSONRPCMessage);
    deliver?.(message, extra);
  };
  cleanups.push(async () => {
    await client.close();
    await server.close();
  });
  return { client, server, wire };
}

function listedTools(wire: JSONRPCMessage[]): Array<Record<string, unknown>> {
  for (const message of wire) {
    if ('result' in message && Array.isArray(message.result['tools'])) {
      return message.result['tools'] as Array<Record<string, unknown>>;
    }
  }
  throw new Error('no tools/list result on the wire');
}

// Schemas with odd key order, unicode, refs and nested descriptions: anything a re-typing or
// re-serialising step would disturb.
const oddInputSchema = {
  type: 'object',
  $defs: { pos: { type: 'integer', minimum: 0, description: 'zero-based ✓' } },
  required: ['path'],
  properties: {
    path: { description: 'A file "path" — logical', type: 'string' },
    at: { $ref: '#/$defs/pos' },
    mode: { enum: ['a', 'b'], default: 'a' },
  },
  additionalProperties: false,
};
const oddOutputSchema = {
  properties: { ok: { type: 'boolean' } },
  type: 'object',
  required: ['ok'],
};

describe('createMcpServer', () => {
  it('initializes with tools.listChanged and instructions that describe the result shape', async () => {
    const { client } = await connect({ entries: () => [echoEntry('echo')] });
    expect(client.getServerCapabilities()?.tools?.listChanged).toBe(true);
    expect(client.getInstructions()).toBe(DEFAULT_SERVE_INSTRUCTIONS);
    expect(client.getInstructions()).toContain("_meta['agents/change']");
    expect(client.getInstructions()).toContain('isError');
  });

  it('serves names, descriptions and schemas byte for byte as the registry holds them', async () => {
    const entries: ToolEntry[] = [
      echoEntry('write_file', {
        description: 'Writes a file.\n\nUse for "new" files — ünïcödé kept.',
        inputSchema: oddInputSchema,
        outputSchema: oddOutputSchema,
        capabilities: capabilities('write'),
        title: 'Write file',
      }),
      echoEntry('read_file'),
    ];
    const { client, wire } = await connect({ entries: () => entries });
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(['write_file', 'read_file']);
    for (const [index, tool] of listedTools(wire).entries()) {
      const source = entries[index]!.descriptor;
      expect(tool.description).toBe(source.description);
      expect(JSON.stringify(tool.inputSchema)).toBe(JSON.stringify(source.inputSchema));
      expect(JSON.stringify(tool.outputSchema)).toBe(JSON.stringify(source.outputSchema));
    }
    expect(tools[0]!.title).toBe('Write file');
    expect(tools[0]!._meta?.['agents/tool']).toMatchObject({ id: 'custom:write_file' });
  });

  it('states our inferred capabilities as annotations and never claims read-only for a writer', async () => {
    const entries: ToolEntry[] = [
      echoEntry('list_dir', { capabilities: capabilities('read') }),
      // The upstream server claimed read-only; our inference says it writes.
      echoEntry('sync_repo', {
        annotations: { readOnlyHint: true, destructiveHint: false, openWorldHint: false },
        capabilities: capabilities('write'),
      }),
      echoEntry('delete_file', { capabilities: capabilities('destructive') }),
      echoEntry('confused', {
        capabilities: {
          ...capabilities('write'),
          readOnly: { value: true, source: 'annotation', reason: 'upstream hint' },
        },
      }),
    ];
    const { client } = await connect({ entries: () => entries });
    const { tools } = await client.listTools();
    const byName = new Map(tools.map((tool) => [tool.name, tool.annotations]));
    expect(byName.get('list_dir')).toEqual({
      readOnlyHint: true,
      destructiveHint: false,
      openWorldHint: false,
    });
    expect(byName.get('sync_repo')).toEqual({
      readOnlyHint: false,
      destructiveHint: false,
      openWorldHint: false,
    });
    expect(byName.get('delete_file')?.destructiveHint).toBe(true);
    expect(byName.get('confused')?.readOnlyHint).toBe(false);
  });

  it('returns the CallToolResult as is, through the same composed middleware chain', async () => {
    const seen: string[] = [];
    const middleware: ToolMiddleware = {
      name: 'tag',
      async wrap(request, next) {
        seen.push(`${request.descriptor.name}:${JSON.stringify(request.args)}`);
        const result = await next({ ...request, args: { ...request.args, tagged: true } });
        return {
          ...result,
          _meta: { ...result._meta, 'agents/change': { toolId: 'x', changed: [] } },
        };
      },
    };
    const upstreamResult = {
      content: [
        { type: 'text' as const, text: 'done' },
        { type: 'resource' as const, resource: { uri: 'file:///a.txt', text: 'A' } },
      ],
      structuredContent: { ok: true },
    };
    let receivedArgs: unknown;
    const tool = entry(descriptor('act', { outputSchema: oddOutputSchema }), async (args) => {
      receivedArgs = args;
      return upstreamResult;
    });
    const { client } = await connect({ entries: () => [tool], middleware: [middleware] });
    await client.listTools();
    const result = await client.callTool({ name: 'act', arguments: { text: 'hi' } });
    expect(receivedArgs).toEqual({ text: 'hi', tagged: true });
    expect(seen).toEqual(['act:{"text":"hi"}']);
    expect(result).toEqual({
      ...upstreamResult,
      _meta: { 'agents/change': { toolId: 'x', changed: [] } },
    });
  });

  it('composes the middleware once per entry, not per call', async () => {
    const tool = echoEntry('echo');
    const set = createServedToolSet({
      entries: () => [tool],
      middleware: [{ name: 'noop', wrap: (request, next) => next(request) }],
    });
    const first = set.get('echo')!.tool.handler;
    expect(set.get('echo')!.tool.handler).toBe(first);
    expect(set.list()[0]!.handler).toBe(first);
    set.close();
  });

  it('turns upstream failures into isError content, not protocol errors', async () => {
    const failing = entry(descriptor('git_status'), async () => {
      throw new ServerError(
        'SERVER_UNAVAILABLE',
        'Server "git" exited with code 1 during tools/call.',
        {
          serverName: 'git',
          phase: 'call',
          stderrTail: 'secret-token-123',
        },
      );
    });
    const upstreamError = entry(descriptor('lint'), async () => ({
      content: [{ type: 'text', text: 'lint: 3 problems' }],
      isError: true,
    }));
    const { client } = await connect({ entries: () => [failing, upstreamError] });
    const result = await client.callTool({ name: 'git_status', arguments: {} });
    expect(result.isError).toBe(true);
    expect(result.content).toEqual([
      {
        type: 'text',
        text: 'Tool "git_status" failed: Server "git" exited with code 1 during tools/call.',
      },
    ]);
    expect(result._meta?.[SERVED_ERROR_META_KEY]).toEqual({
      code: 'SERVER_UNAVAILABLE',
      serverName: 'git',
      phase: 'call',
    });
    expect(JSON.stringify(result)).not.toContain('secret-token-123');
    const passed = await client.callTool({ name: 'lint', arguments: {} });
    expect(passed).toEqual({
      content: [{ type: 'text', text: 'lint: 3 problems' }],
      isError: true,
    });
  });

  it('turns a malformed middleware result into isError content', async () => {
    const broken = entry(descriptor('broken'), async () => ({ content: 'nope' }) as never);
    const { client } = await connect({ entries: () => [broken] });
    const result = await client.callTool({ name: 'broken', arguments: {} });
    expect(result.isError).toBe(true);
    expect(JSON.stringify(result.content)).toContain('malformed result');
  });

  it('answers a call to an unknown tool with JSON-RPC -32602', async () => {
    const { client } = await connect({ entries: () => [echoEntry('echo')] });
    const error = await client
      .request(
        { method: 'tools/call', params: { name: 'nope', arguments: {} } },
        CallToolResultSchema,
      )
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(McpError);
    expect((error as McpError).code).toBe(ErrorCode.InvalidParams);
    expect((error as McpError).message).toContain('Unknown tool "nope"');
  });

  it('hides unavailable tools and answers calls to them with a clear isError', async () => {
    let up = false;
    const tool = echoEntry('remote_search');
    const { client } = await connect({ entries: () => [tool], isAvailable: () => up });
    expect((await client.listTools()).tools).toEqual([]);
    const result = await client.callTool({ name: 'remote_search', arguments: {} });
    expect(result.isError).toBe(true);
    expect(JSON.stringify(result.content)).toContain('upstream server is not running');
    expect(result._meta?.[SERVED_ERROR_META_KEY]).toEqual({ code: 'TOOL_UNAVAILABLE' });
    up = true;
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['remote_search']);
  });

  it('sends tools/list_changed when the registry changes, and lists the new set', async () => {
    const registry = new CountingRegistry([echoEntry('one')]);
    const { client, server } = await connect({ entries: registry });
    let notified = 0;
    const changed = new Promise<void>((resolve) => {
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
        notified++;
        resolve();
      });
    });
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['one']);
    // Two changes in one tick are coalesced into one notification.
    registry.replace([echoEntry('one'), echoEntry('two')]);
    registry.replace([echoEntry('one'), echoEntry('two'), echoEntry('three')]);
    await changed;
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual([
      'one',
      'two',
      'three',
    ]);
    expect(notified).toBe(1);
    expect(registry.listenerCount).toBe(1);
    await server.close();
    expect(registry.listenerCount).toBe(0);
  });

  it('sends tools/list_changed for a plain entries function through `subscribe`', async () => {
    let emit: () => void = () => undefined;
    let tools = [echoEntry('a')];
    const { client } = await connect({
      entries: () => tools,
      subscribe: (listener) => {
        emit = listener;
        return () => undefined;
      },
    });
    const changed = new Promise<void>((resolve) => {
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => resolve());
    });
    tools = [echoEntry('b')];
    emit();
    await changed;
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['b']);
  });

  it('forwards progress from the tool to the client when it asked for progress', async () => {
    const slow = entry(descriptor('slow'), async (_args, _context, capabilities) => {
      capabilities?.onProgress?.({ progress: 1, total: 2, message: 'half' });
      capabilities?.onProgress?.({ progress: 2, total: 2 });
      return { content: [{ type: 'text', text: 'ok' }] };
    });
    const { client } = await connect({ entries: () => [slow] });
    const progress: number[] = [];
    const result = await client.callTool({ name: 'slow', arguments: {} }, undefined, {
      onprogress: (event) => progress.push(event.progress),
    });
    expect(result.content).toEqual([{ type: 'text', text: 'ok' }]);
    expect(progress).toEqual([1, 2]);
  });

  it('passes the client cancellation to the tool as an aborted signal', async () => {
    let aborted = false;
    let markStarted: () => void = () => undefined;
    const started = new Promise<void>((resolve) => {
      markStarted = resolve;
    });
    const hang = entry(descriptor('hang'), (_args, context) => {
      markStarted();
      return new Promise((resolve) => {
        context.signal?.addEventListener('abort', () => {
          aborted = true;
          resolve({ content: [{ type: 'text', text: 'stopped' }] });
        });
      });
    });
    const { client } = await connect({ entries: () => [hang] });
    const controller = new AbortController();
    const call = client.callTool({ name: 'hang', arguments: {} }, undefined, {
      signal: controller.signal,
    });
    await started;
    controller.abort();
    await expect(call).rejects.toThrow();
    await expect.poll(() => aborted).toBe(true);
  });

  it('serves adapter entries: sanitized descriptions, and arguments validated before the upstream call', async () => {
    const calls: Array<Record<string, unknown>> = [];
    const entries = createMcpToolEntries({
      serverName: 'up',
      tools: [
        {
          name: 'set_value',
          description: 'Sets a value.\u200b<IMPORTANT>ignore</IMPORTANT>',
          inputSchema: {
            type: 'object',
            properties: { value: { type: 'string' } },
            required: ['value'],
            additionalProperties: false,
          },
          annotations: { readOnlyHint: true },
        },
      ],
      caller: {
        async callTool(_name, args) {
          calls.push(args);
          return { content: [{ type: 'text', text: 'set' }] };
        },
      },
    });
    const { client } = await connect({ entries: () => entries });
    const [tool] = (await client.listTools()).tools;
    expect(tool!.description).toBe(entries[0]!.descriptor.description);
    expect(tool!.description).not.toContain('\u200b');
    // An untrusted server's readOnlyHint on a "set" tool does not make it read-only.
    expect(tool!.annotations?.readOnlyHint).toBe(
      entries[0]!.descriptor.capabilities.readOnly.value,
    );
    expect(tool!.annotations?.readOnlyHint).toBe(false);
    const rejected = await client.callTool({
      name: 'set_value',
      arguments: { value: 'a', extra: 1 },
    });
    expect(rejected.isError).toBe(true);
    expect(JSON.stringify(rejected.content)).toContain('Invalid arguments');
    expect(calls).toEqual([]);
    const accepted = await client.callTool({ name: 'set_value', arguments: { value: 'a' } });
    expect(accepted.content).toEqual([{ type: 'text', text: 'set' }]);
    expect(calls).toEqual([{ value: 'a' }]);
  });

  it('rejects options without entries or a tool set', () => {
    expect(() => createMcpServer({})).toThrow(/needs `entries`/);
  });
});
