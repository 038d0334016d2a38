/**
 * The MCP server every benchmark stack talks to: the same server, the same transport, so the
 * only difference between stacks is the client-side adapter. Built on the SDK's low-level
 * `Server` with plain JSON Schemas so that server-side cost is small and identical for all.
 *
 * Tools: `echo {text}` (read-only), `add {a, b}` (read-only), `read_file {path}` (read-only,
 * path argument), `write_file {path, content}` (write), plus `extraTools` generated tools
 * `tool_0000 …` for discovery benchmarks.
 *
 * Run as a script (`tsx bench/bench-server.ts [--extra-tools N]`) it serves over stdio.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';

/** Options for {@link createBenchServer}. */
export interface BenchServerOptions {
  /** How many generated tools to add on top of the four real ones (default 0). */
  extraTools?: number;
}

function baseTools(): Tool[] {
  return [
    {
      name: 'echo',
      description: 'Returns the text it was given.',
      inputSchema: {
        type: 'object',
        properties: { text: { type: 'string', description: 'Text to return.' } },
        required: ['text'],
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    {
      name: 'add',
      description: 'Adds two numbers.',
      inputSchema: {
        type: 'object',
        properties: { a: { type: 'number' }, b: { type: 'number' } },
        required: ['a', 'b'],
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    {
      name: 'read_file',
      description: 'Reads a UTF-8 file at an absolute path.',
      inputSchema: {
        type: 'object',
        properties: { path: { type: 'string', description: 'Absolute file path.' } },
        required: ['path'],
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    {
      name: 'write_file',
      description: 'Writes a UTF-8 file at an absolute path.',
      inputSchema: {
        type: 'object',
        properties: {
          path: { type: 'string', description: 'Absolute file path.' },
          content: { type: 'string' },
        },
        required: ['path', 'content'],
      },
      annotations: { readOnlyHint: false, destructiveHint: true, openWorldHint: false },
    },
  ];
}

function generatedTool(index: number): Tool {
  const name = `tool_${String(index).padStart(4, '0')}`;
  return {
    name,
    description: `Generated tool number ${index}; looks up a record by id and returns it.`,
    inputSchema: {
      type: 'object',
      properties: {
        id: { type: 'string', description: 'Record id.' },
        limit: { type: 'integer', minimum: 1, maximum: 100 },
        tags: { type: 'array', items: { type: 'string' } },
      },
      required: ['id'],
    },
    annotations: { readOnlyHint: index % 2 === 0 },
  };
}

function text(value: string, isError = false): CallToolResult {
  return { content: [{ type: 'text', text: value }], ...(isError ? { isError: true } : {}) };
}

function stringArg(args: Record<string, unknown> | undefined, key: string): string {
  const value = args?.[key];
  if (typeof value !== 'string') throw new Error(`argument "${key}" must be a string`);
  return value;
}

/** Builds (does not connect) the benchmark server. */
export function createBenchServer(options: BenchServerOptions = {}): Server {
  const tools = baseTools();
  for (let index = 0; index < (options.extraTools ?? 0); index++) tools.push(generatedTool(index));
  const server = new Server(
    { name: 'bench-server', version: '1.0.0' },
    { capabilities: { tools: { listChanged: false } } },
  );
  // One page of up to 100 tools, as real servers page large lists.
  server.setRequestHandler(ListToolsRequestSchema, (request) => {
    const start = Number(request.params?.cursor ?? '0');
    const page = tools.slice(start, start + 100);
    const next = start + 100 < tools.length ? String(start + 100) : undefined;
    return next === undefined ? { tools: page } : { tools: page, nextCursor: next };
  });
  server.setRequestHandler(CallToolRequestSchema, async (request): Promise<CallToolResult> => {
    const args = request.params.arguments;
    try {
      switch (request.params.name) {
        case 'echo':
          return text(stringArg(args, 'text'));
        case 'add':
          return text(String(Number(args?.['a']) + Number(args?.['b'])));
        case 'read_file':
          return text(await readFile(stringArg(args, 'path'), 'utf8'));
        case 'write_file':
          await writeFile(stringArg(args, 'path'), stringArg(args, 'content'));
          return text(`wrote ${stringArg(args, 'path')}`);
        default:
          if (/^tool_\d{4}$/.test(request.params.name))
            return text(`record ${stringArg(args, 'id')}`);
          return text(`unknown tool ${request.params.name}`, true);
      }
    } catch (error) {
      return text(error instanceof Error ? error.message : String(error), true);
    }
  });
  return server;
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const flag = process.argv.indexOf('--extra-tools');
  const extraTools = flag >= 0 ? Number(process.argv[flag + 1]) : 0;
  const server = createBenchServer({ extraTools });
  await server.connect(new StdioServerTransport());
}
