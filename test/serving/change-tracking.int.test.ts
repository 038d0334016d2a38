import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ToolMessage } from '@langchain/core/messages';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { toStructuredTool } from '../../src/mcp/structured-tool.js';
import type { McpToolArtifact } from '../../src/mcp/content.js';
import { createChangeTrackingMiddleware } from '../../src/pipeline/change-tracking.js';
import { createPathRewriteMiddleware } from '../../src/pipeline/path-rewrite.js';
import { composeMiddleware } from '../../src/core/tool-middleware.js';
import type { ChangeRecord } from '../../src/core/change-record.js';
import type { ToolEntry } from '../../src/core/tool-descriptor.js';
import { createSandbox } from '../../src/sandbox/git/local-sandbox.js';
import type { LocalSandbox } from '../../src/sandbox/git/local-sandbox.js';
import { createMcpServer } from '../../src/serving/mcp-server.js';
import { capabilities, descriptor } from './helpers.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function repo(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'serve-track-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  execFileSync('git', ['init', '-q', dir]);
  await writeFile(join(dir, 'README.md'), 'hello\n');
  execFileSync('git', ['-C', dir, 'add', '-A']);
  execFileSync('git', [
    '-C',
    dir,
    '-c',
    'user.name=t',
    '-c',
    'user.email=t@e',
    'commit',
    '-qm',
    'init',
  ]);
  return dir;
}

/** A write-class tool that writes `path` (a sandbox path after rewriting) with `content`. */
function writeEntry(): ToolEntry {
  return {
    descriptor: descriptor('write_file', {
      id: 'custom:write_file',
      capabilities: capabilities('write'),
      pathArguments: ['path'],
      inputSchema: {
        type: 'object',
        properties: { path: { type: 'string' }, content: { type: 'string' } },
        required: ['path', 'content'],
      },
    }),
    async execute(args) {
      const target = String(args['path']);
      await mkdir(dirname(target), { recursive: true });
      await writeFile(target, String(args['content']));
      return { content: [{ type: 'text', text: `wrote ${target}` }] };
    },
  };
}

describe('a write through the MCP server', () => {
  it('is change-tracked in the sandbox exactly like the same call from a graph', async () => {
    const source = await repo();
    const sandbox: LocalSandbox = await createSandbox({ source });
    cleanups.push(() => sandbox.close());
    const entry = writeEntry();
    const middleware = [
      createPathRewriteMiddleware(sandbox.paths),
      createChangeTrackingMiddleware(sandbox),
    ];

    // From a graph: the converter over the composed handler, as ToolNode would call it.
    const handler = composeMiddleware(middleware, (request) =>
      entry.execute(request.args, request.context, request.capabilities),
    );
    const tool = toStructuredTool(entry.descriptor, handler);
    const message: unknown = await tool.invoke({
      type: 'tool_call',
      id: 'call-1',
      name: 'write_file',
      args: { path: 'docs/graph.md', content: 'g' },
    });
    expect(message).toBeInstanceOf(ToolMessage);
    const graphRecord = ((message as ToolMessage).artifact as McpToolArtifact)._meta?.[
      'agents/change'
    ] as ChangeRecord;

    // Over MCP: the same entries and middleware served.
    const server = createMcpServer({ entries: () => [entry], middleware });
    const client = new Client({ name: 'host', version: '1.0.0' });
    const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
    await server.connect(serverTransport);
    await client.connect(clientTransport);
    cleanups.push(async () => {
      await client.close();
      await server.close();
    });
    const result = await client.callTool({
      name: 'write_file',
      arguments: { path: 'docs/mcp.md', content: 'm' },
    });
    const mcpRecord = result._meta?.['agents/change'] as ChangeRecord;

    expect(graphRecord.changed).toEqual([{ status: 'A', path: 'docs/graph.md' }]);
    expect(mcpRecord.changed).toEqual([{ status: 'A', path: 'docs/mcp.md' }]);
    expect(mcpRecord.toolId).toBe(graphRecord.toolId);
    // The MCP call's snapshot follows the graph's: one history in one sandbox.
    expect(mcpRecord.parent).toBe(graphRecord.snapshot);
    expect(sandbox.head).toBe(mcpRecord.snapshot);
    // Paths in the result text are logical, the files are in the sandbox, the source is untouched.
    expect(result.content).toEqual([{ type: 'text', text: 'wrote docs/mcp.md' }]);
    expect(existsSync(join(sandbox.root, 'docs', 'mcp.md'))).toBe(true);
    expect(existsSync(join(source, 'docs'))).toBe(false);
    // A path that escapes the sandbox is refused as tool error content, not a protocol error.
    const escape = await client.callTool({
      name: 'write_file',
      arguments: { path: '../outside.txt', content: 'x' },
    });
    expect(escape.isError).toBe(true);
    expect(existsSync(join(dirname(sandbox.root), 'outside.txt'))).toBe(false);
  });
});
