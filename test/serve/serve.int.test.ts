import { spawn } from 'node:child_process';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { MultiServerMCPClient } from '@langchain/mcp-adapters';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { runMcpClient } from '../../src/cli/commands/mcp-client.js';
import { createMcpToolAdapter } from '../../src/mcp/tool-adapter.js';
import type { ChangeRecord } from '../../src/registry/tool-descriptor.js';
import { createFixtureServer } from '../fixtures/fixture-server.js';

const serveFixture = fileURLToPath(new URL('./fixtures/serve-fixture.ts', import.meta.url));
const SPAWN_TIMEOUT = 120_000;

interface Spawned {
  child: ChildProcessWithoutNullStreams;
  stderr: () => string;
  stdoutLines: string[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A temp folder removed after the test (sandboxes go in one, so a killed child leaves none). */
async function tempDir(prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

function spawnServe(args: string[], env: Record<string, string> = {}): Spawned {
  const child = spawn(process.execPath, ['--import', 'tsx', serveFixture, ...args], {
    cwd: process.cwd(),
    env: { ...process.env, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const stdoutLines: string[] = [];
  let partial = '';
  child.stdout.on('data', (chunk: Buffer) => {
    partial += chunk.toString();
    const lines = partial.split('\n');
    partial = lines.pop() ?? '';
    stdoutLines.push(...lines);
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  cleanups.push(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
  });
  return { child, stderr: () => stderr, stdoutLines, exited };
}

async function waitFor<T>(
  read: () => T | undefined,
  what: string,
  spawned: Spawned,
  ms = 90_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = read();
    if (value !== undefined) return value;
    if (spawned.child.exitCode !== null)
      throw new Error(`serve exited before ${what}: ${spawned.stderr()}`);
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}: ${spawned.stderr()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function upstreamPid(spawned: Spawned): number | undefined {
  const match = /upstream pid (\d+)/.exec(spawned.stderr());
  return match === null ? undefined : Number(match[1]);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The descriptors our adapter builds for the fixture's basic tools, in process. */
async function fixtureDescriptors(): Promise<
  Map<string, { description: string; inputSchema: unknown }>
> {
  const server = createFixtureServer({ tools: 'basic' });
  const client = new Client({ name: 'reference', version: '1.0.0' });
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  await server.connect(serverTransport);
  await client.connect(clientTransport);
  try {
    const entries = await createMcpToolAdapter({ serverName: 'fixture', client }).listTools();
    return new Map(entries.map((entry) => [entry.descriptor.name, entry.descriptor]));
  } finally {
    await client.close();
    await server.close();
  }
}

describe('agents serve as a process', () => {
  it(
    'serves over stdio: JSON-RPC only on stdout, byte-equal schemas, change-tracked writes, exit on stdin EOF',
    async () => {
      const source = await tempDir('serve-src-');
      await writeFile(join(source, 'README.md'), 'hello\n');
      const sandboxBase = await tempDir('serve-sandboxes-');
      const spawned = spawnServe(['--skill', 'fixture'], {
        SERVE_FIXTURE_SANDBOX_SOURCE: source,
        SERVE_FIXTURE_SANDBOX_BASE: sandboxBase,
      });

      // The SDK's newline framing, pointed the other way: read the child's stdout, write its stdin.
      const transport = new StdioServerTransport(spawned.child.stdout, spawned.child.stdin);
      const client = new Client({ name: 'stdio-test', version: '1.0.0' });
      await client.connect(transport);
      expect(client.getInstructions()).toContain("_meta['agents/change']");

      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name).sort()).toEqual(
        ['add', 'delete_file', 'echo', 'fail', 'list_directory', 'read_file', 'write_file'].sort(),
      );
      const reference = await fixtureDescriptors();
      const listLine = spawned.stdoutLines.find((line) => line.includes('"tools":['));
      const wireTools = (
        JSON.parse(listLine!) as { result: { tools: Array<Record<string, unknown>> } }
      ).result.tools;
      for (const tool of wireTools) {
        const descriptor = reference.get(String(tool['name']));
        expect(descriptor, String(tool['name'])).toBeDefined();
        expect(tool['description']).toBe(descriptor!.description);
        expect(JSON.stringify(tool['inputSchema'])).toBe(JSON.stringify(descriptor!.inputSchema));
      }
      const writeTool = tools.find((tool) => tool.name === 'write_file')!;
      expect(writeTool.annotations?.readOnlyHint).toBe(false);

      const result = await client.callTool({
        name: 'write_file',
        arguments: { path: 'notes/a.txt', content: 'hi' },
      });
      expect(result.isError).not.toBe(true);
      const change = result._meta?.['agents/change'] as ChangeRecord | undefined;
      expect(change?.changed).toEqual([{ status: 'A', path: 'notes/a.txt' }]);
      expect(change?.toolId).toBe('mcp:fixture/write_file');
      expect(change?.snapshot).not.toBe(change?.parent);
      // The write landed in the sandbox, never in the source folder.
      expect(existsSync(join(source, 'notes', 'a.txt'))).toBe(false);
      expect(await readFile(join(source, 'README.md'), 'utf8')).toBe('hello\n');

      // A read-class tool is not tracked (no snapshot, no record).
      const read = await client.callTool({ name: 'read_file', arguments: { path: 'notes/a.txt' } });
      expect(tools.find((tool) => tool.name === 'read_file')?.annotations?.readOnlyHint).toBe(true);
      expect(read.content).toEqual([{ type: 'text', text: 'hi' }]);
      expect(read._meta?.['agents/change']).toBeUndefined();
      const failing = await client.callTool({ name: 'fail', arguments: {} });
      expect(failing.isError).toBe(true);

      for (const line of spawned.stdoutLines) {
        const message = JSON.parse(line) as JSONRPCMessage;
        expect(message.jsonrpc).toBe('2.0');
      }
      const pid = await waitFor(() => upstreamPid(spawned), 'the upstream pid', spawned);
      expect(isAlive(pid)).toBe(true);

      spawned.child.stdin.end();
      const exit = await spawned.exited;
      expect(exit).toEqual({ code: 0, signal: null });
      expect(spawned.stderr()).toContain('stopping (stdin closed)');
      await expect.poll(() => isAlive(pid), { timeout: 10_000 }).toBe(false);
      // A clean shutdown removes the sandbox it served from.
      expect(await readdir(sandboxBase)).toEqual([]);
      await client.close();
    },
    SPAWN_TIMEOUT,
  );

  it(
    'serves over HTTP to our client and to @langchain/mcp-adapters, and stops upstream on SIGTERM',
    async () => {
      const cwd = await tempDir('serve-http-');
      const sandboxBase = await tempDir('serve-sandboxes-');
      const spawned = spawnServe(
        ['--actor', 'fixture', '--transport', 'http', '--token', 't0ken'],
        { SERVE_FIXTURE_SANDBOX_SOURCE: cwd, SERVE_FIXTURE_SANDBOX_BASE: sandboxBase },
      );
      const url = await waitFor(
        () =>
          spawned.stdoutLines.map((line) => /^MCP endpoint: (\S+)$/.exec(line)?.[1]).find(Boolean),
        'the endpoint URL',
        spawned,
      );
      expect(new URL(url).hostname).toBe('127.0.0.1');

      const unauthorized = await fetch(url, {
        method: 'POST',
        body: '{}',
        headers: { 'content-type': 'application/json' },
      });
      expect(unauthorized.status).toBe(401);

      const report = await runMcpClient(new URL(url), {
        token: 't0ken',
        only: ['echo', 'add', 'fail'],
      });
      expect(report.tools).toContain('write_file');
      expect(report.calls.map((call) => [call.tool, call.outcome])).toEqual([
        ['echo', 'ok'],
        ['add', 'ok'],
        ['fail', 'tool-error'],
      ]);

      const peer = new MultiServerMCPClient({
        mcpServers: {
          agents: { transport: 'http', url, headers: { authorization: 'Bearer t0ken' } },
        },
      });
      try {
        const tools = await peer.getTools();
        const echo = tools.find((tool) => tool.name.endsWith('echo'));
        expect(echo).toBeDefined();
        const output: unknown = await echo!.invoke({ text: 'round trip' });
        // The fixture's echo answers with the length of what it got.
        expect(JSON.stringify(output)).toContain('received 10 characters');
      } finally {
        await peer.close();
      }

      const pid = await waitFor(() => upstreamPid(spawned), 'the upstream pid', spawned);
      spawned.child.kill('SIGTERM');
      const exit = await spawned.exited;
      expect(exit).toEqual({ code: 0, signal: null });
      await expect.poll(() => isAlive(pid), { timeout: 10_000 }).toBe(false);
      expect(await readdir(sandboxBase)).toEqual([]);
    },
    SPAWN_TIMEOUT,
  );
});
