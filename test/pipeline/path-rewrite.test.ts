import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  createPathRewriteMiddleware,
  PATH_REFUSED_META_KEY,
} from '../../src/pipeline/path-rewrite.js';
import { composeMiddleware, type ToolCallHandler } from '../../src/core/tool-middleware.js';
import type { ToolDescriptor } from '../../src/core/tool-descriptor.js';
import { createPathMap } from '../../src/sandbox/path-map.js';

let scratch: string;
let root: string;
let repo: string;
let client: Client;
let server: McpServer;
const calls: string[] = [];

beforeEach(async () => {
  scratch = realpathSync(mkdtempSync(join(tmpdir(), 'path-rewrite-')));
  root = join(scratch, 'wt');
  repo = join(scratch, 'repo');
  mkdirSync(root);
  mkdirSync(repo);
  calls.length = 0;
  // A real MCP server whose tools do real file I/O at the paths they are given.
  server = new McpServer({ name: 'files', version: '1.0.0' });
  server.registerTool(
    'write_file',
    { inputSchema: { path: z.string(), content: z.string() } },
    async ({ path, content }) => {
      calls.push(`write_file ${path}`);
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, content);
      return { content: [{ type: 'text', text: `Successfully wrote to ${path}` }] };
    },
  );
  server.registerTool('where', { inputSchema: {}, outputSchema: { cwd: z.string() } }, async () => {
    calls.push('where');
    return {
      content: [{ type: 'text', text: `working in ${root}` }],
      structuredContent: { cwd: `${root}/src` },
    };
  });
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  client = new Client({ name: 'test', version: '1.0.0' });
  await Promise.all([server.connect(serverTransport), client.connect(clientTransport)]);
});

afterEach(async () => {
  await client.close();
  await server.close();
  rmSync(scratch, { recursive: true, force: true });
});

function descriptor(name: string, pathArguments: string[]): ToolDescriptor {
  const verdict = { value: false, source: 'default' as const, reason: 'test' };
  return {
    id: `mcp:files/${name}`,
    name,
    originalName: name,
    source: 'mcp',
    description: name,
    inputSchema: { type: 'object' },
    capabilities: {
      readOnly: verdict,
      writes: verdict,
      destructive: verdict,
      openWorld: verdict,
      disagreements: [],
    },
    pathArguments,
    fingerprint: name,
  };
}

function chain(): ToolCallHandler {
  const paths = createPathMap(root, { aliases: [repo] });
  return composeMiddleware(
    [createPathRewriteMiddleware(paths)],
    async (request) =>
      (await client.callTool({
        name: request.descriptor.originalName,
        arguments: request.args,
      })) as CallToolResult,
  );
}

describe('createPathRewriteMiddleware', () => {
  it('sends sandbox paths to the server, keeps content byte-identical, and returns logical paths', async () => {
    const content = `this file names ${repo}/src and ${root}/src and ../../etc/passwd\n\u00e9\u0000`;
    const result = await chain()({
      descriptor: descriptor('write_file', ['path']),
      args: { path: 'src/notes.md', content },
      context: {},
    });
    expect(result).toEqual({
      content: [{ type: 'text', text: 'Successfully wrote to src/notes.md' }],
    });
    expect(calls).toEqual([`write_file ${join(root, 'src/notes.md')}`]);
    expect(readFileSync(join(root, 'src/notes.md'), 'utf8')).toBe(content);
    expect(existsSync(join(repo, 'src'))).toBe(false);
  });

  it('maps the real repo path into the sandbox too', async () => {
    await chain()({
      descriptor: descriptor('write_file', ['path']),
      args: { path: `${repo}/a.txt`, content: 'a' },
      context: {},
    });
    expect(readFileSync(join(root, 'a.txt'), 'utf8')).toBe('a');
    expect(existsSync(join(repo, 'a.txt'))).toBe(false);
  });

  it('turns an escape into an error result the model sees, without calling the server', async () => {
    const result = await chain()({
      descriptor: descriptor('write_file', ['path']),
      args: { path: '../outside.txt', content: 'x' },
      context: {},
    });
    expect(result.isError).toBe(true);
    expect(result.content).toEqual([
      {
        type: 'text',
        text: `Path "../outside.txt" (argument "path") was refused: it escapes the project with "..". Use a path relative to the project root (for example "src/main.py").`,
      },
    ]);
    expect(result._meta?.[PATH_REFUSED_META_KEY]).toMatchObject({
      code: 'PATH_OUTSIDE_SANDBOX',
      argument: 'path',
    });
    expect(calls).toEqual([]);
    expect(existsSync(join(scratch, 'outside.txt'))).toBe(false);
  });

  it('skips the argument walk for tools without path arguments but still maps results back', async () => {
    const paths = createPathMap(root);
    const seen: unknown[] = [];
    const args = { path: '../../not-a-path-argument' };
    const handler = composeMiddleware(
      [createPathRewriteMiddleware(() => paths)],
      async (request) => {
        seen.push(request.args);
        return (await client.callTool({ name: 'where', arguments: {} })) as CallToolResult;
      },
    );
    const result = await handler({ descriptor: descriptor('where', []), args, context: {} });
    expect(seen[0]).toBe(args);
    expect(result.content).toEqual([{ type: 'text', text: 'working in .' }]);
    expect(result.structuredContent).toEqual({ cwd: 'src' });
  });
});
