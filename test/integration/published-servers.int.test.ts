import { mkdtemp, readFile, realpath, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { AIMessage, type ToolMessage } from '@langchain/core/messages';
import { ToolNode } from '@langchain/langgraph/prebuilt';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, describe, expect, it } from 'vitest';
import { createMcpToolAdapter } from '../../src/mcp/tool-adapter.js';

const require = createRequire(import.meta.url);
// Resolve each package's bin (dist/index.js) from its package.json, not a guessed path.
function binOf(packageName: string): string {
  const manifestPath = require.resolve(`${packageName}/package.json`);
  const manifest = require(manifestPath) as { bin: Record<string, string> };
  return join(dirname(manifestPath), Object.values(manifest.bin)[0]!);
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function spawnClient(args: string[]): Promise<Client> {
  const client = new Client({ name: 'published-servers-test', version: '1.0.0' });
  await client.connect(
    new StdioClientTransport({ command: process.execPath, args, stderr: 'pipe' }),
  );
  cleanups.push(() => client.close());
  return client;
}

describe('@modelcontextprotocol/server-everything over stdio', () => {
  it('lists its tools and calls echo and get-sum through the adapter and ToolNode', async () => {
    const client = await spawnClient([binOf('@modelcontextprotocol/server-everything'), 'stdio']);
    const adapter = createMcpToolAdapter({ serverName: 'everything', client });
    const entries = await adapter.listTools();
    const names = entries.map((entry) => entry.descriptor.originalName);
    expect(names).toEqual(expect.arrayContaining(['echo', 'get-sum']));
    for (const entry of entries) expect(entry.descriptor.name).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);

    const echo = await adapter.execute('echo', { message: 'hello' });
    expect(JSON.stringify(echo.content)).toContain('hello');

    const node = new ToolNode(await adapter.tools());
    const sumName = entries.find((entry) => entry.descriptor.originalName === 'get-sum')!.descriptor
      .name;
    const output = (await node.invoke({
      messages: [
        new AIMessage({
          content: '',
          tool_calls: [
            { id: 's1', name: sumName, args: { a: 2, b: 40 }, type: 'tool_call' },
            { id: 's2', name: sumName, args: { a: 'x' }, type: 'tool_call' },
          ],
        }),
      ],
    })) as { messages: ToolMessage[] };
    const [good, bad] = output.messages;
    expect(good?.status).toBe('success');
    expect(JSON.stringify(good?.content)).toContain('42');
    expect(bad?.status).toBe('error');
    expect(JSON.stringify(bad?.content)).toMatch(/Invalid arguments for tool/);
  });
});

describe('@modelcontextprotocol/server-filesystem over stdio', () => {
  it('writes and reads a file in an allowed temp dir, with read/write capabilities inferred', async () => {
    const dir = await realpath(await mkdtemp(join(tmpdir(), 'published-fs-')));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const client = await spawnClient([binOf('@modelcontextprotocol/server-filesystem'), dir]);
    const adapter = createMcpToolAdapter({ serverName: 'fs', client });
    const entries = await adapter.listTools();
    const byName = new Map(
      entries.map((entry) => [entry.descriptor.originalName, entry.descriptor]),
    );
    expect(byName.get('write_file')?.capabilities.writes.value).toBe(true);
    expect(byName.get('list_directory')?.capabilities.readOnly.value).toBe(true);

    const target = join(dir, 'hello.txt');
    const written = await adapter.execute('write_file', {
      path: target,
      content: 'from the adapter',
    });
    expect(written.isError).not.toBe(true);
    expect(await readFile(target, 'utf8')).toBe('from the adapter');
    const listed = await adapter.execute('list_directory', { path: dir });
    expect(JSON.stringify(listed.content)).toContain('hello.txt');
  });
});
