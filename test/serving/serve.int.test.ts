import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MultiServerMCPClient } from '@langchain/mcp-adapters';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { runMcpClient } from '../../src/cli/commands/mcp-client.js';
import { createMcpToolAdapter } from '../../src/mcp/tool-adapter.js';
import type { ChangeRecord } from '../../src/core/change-record.js';
import { makeProjectRepo } from '../cli/helpers.js';
import { createFixtureServer } from '../fixtures/fixture-server.js';
import {
  bannerOf,
  endpointOf,
  isAlive,
  SPAWN_TIMEOUT,
  spawnServe,
  waitFor,
  writeServeWorkspace,
} from './cli-helpers.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A git project holding the `fixture` skill, removed after the test. */
async function project(prefix: string): Promise<string> {
  const dir = await makeProjectRepo(prefix);
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  await writeServeWorkspace(dir);
  return dir;
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

describe('agents serve --skill as a process', () => {
  it(
    'serves over stdio: JSON-RPC only on stdout, byte-equal schemas, approved writes tracked in a sandbox, exit on stdin EOF',
    async () => {
      const dir = await project('serve-skill-stdio-');
      const spawned = spawnServe(dir, ['--skill', 'fixture']);
      cleanups.push(spawned.stop);

      // The skill runs under the default policy (mode ask): this host can be asked, and approves.
      const client = new Client(
        { name: 'stdio-test', version: '1.0.0' },
        { capabilities: { elicitation: {} } },
      );
      const asked: string[] = [];
      client.setRequestHandler(ElicitRequestSchema, (request) => {
        asked.push(request.params.message);
        return { action: 'accept', content: { decision: 'approve' } };
      });
      // The SDK's newline framing, pointed the other way: read the child's stdout, write its stdin.
      await client.connect(new StdioServerTransport(spawned.child.stdout, spawned.child.stdin));
      cleanups.push(() => client.close());
      expect(client.getServerVersion()?.name).toBe('agents-skill-fixture');
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

      const banner = bannerOf(spawned.stderr());
      expect(banner.sandboxNote).toBe('temporary: removed on exit; keep it with --keep-sandbox');
      const sandbox = banner.sandbox!;
      const result = await client.callTool({
        name: 'write_file',
        arguments: { path: 'notes/a.txt', content: 'hi' },
      });
      expect(result.isError).not.toBe(true);
      expect(asked).toHaveLength(1);
      expect(asked[0]).toContain('"write_file" (mcp:fixture/write_file on server "fixture")');
      const change = result._meta?.['agents/change'] as ChangeRecord | undefined;
      expect(change?.changed).toEqual([{ status: 'A', path: 'notes/a.txt' }]);
      expect(change?.toolId).toBe('mcp:fixture/write_file');
      expect(change?.snapshot).not.toBe(change?.parent);
      // The write landed in the sandbox, never in the project.
      expect(await readFile(join(sandbox, 'notes', 'a.txt'), 'utf8')).toBe('hi');
      expect(existsSync(join(dir, 'notes', 'a.txt'))).toBe(false);
      expect(await readFile(join(dir, 'README.md'), 'utf8')).toBe('hello\n');

      // A read-class tool runs unasked and is not tracked (no snapshot, no record).
      const read = await client.callTool({ name: 'read_file', arguments: { path: 'notes/a.txt' } });
      expect(tools.find((tool) => tool.name === 'read_file')?.annotations?.readOnlyHint).toBe(true);
      expect(read.content).toEqual([{ type: 'text', text: 'hi' }]);
      expect(read._meta?.['agents/change']).toBeUndefined();
      expect(asked).toHaveLength(1);
      const failing = await client.callTool({ name: 'fail', arguments: {} });
      expect(failing.isError).toBe(true);

      for (const line of spawned.stdoutLines) {
        const message = JSON.parse(line) as JSONRPCMessage;
        expect(message.jsonrpc).toBe('2.0');
      }
      const pid = banner.upstreamPid!;
      expect(isAlive(pid)).toBe(true);

      spawned.child.stdin.end();
      const exit = await spawned.exited;
      expect(exit).toEqual({ code: 0, signal: null });
      expect(spawned.stderr()).toContain('stopping (stdin closed)');
      await expect.poll(() => isAlive(pid), { timeout: 10_000 }).toBe(false);
      // A clean shutdown removes the sandbox it served from.
      expect(existsSync(sandbox)).toBe(false);
    },
    SPAWN_TIMEOUT,
  );

  it(
    'serves over HTTP to our client and to @langchain/mcp-adapters, and stops upstream on SIGTERM',
    async () => {
      const dir = await project('serve-skill-http-');
      const spawned = spawnServe(dir, [
        '--skill',
        'fixture',
        '--transport',
        'http',
        '--token',
        't0ken',
        '--policy',
        'auto',
      ]);
      cleanups.push(spawned.stop);
      const url = await waitFor(() => endpointOf(spawned), 'the endpoint URL', spawned);
      expect(new URL(url).hostname).toBe('127.0.0.1');
      expect(spawned.stderr()).not.toContain('mode ask');

      const unauthorized = await fetch(url, {
        method: 'POST',
        body: '{}',
        headers: { 'content-type': 'application/json' },
      });
      expect(unauthorized.status).toBe(401);

      const report = await runMcpClient(new URL(url), {
        token: 't0ken',
        only: ['echo', 'add', 'fail', 'write_file'],
      });
      expect(report.tools).toContain('write_file');
      expect(report.calls.map((call) => [call.tool, call.outcome])).toEqual([
        ['echo', 'ok'],
        ['add', 'ok'],
        ['fail', 'tool-error'],
        ['write_file', 'ok'],
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

      const { upstreamPid: pid, sandbox } = bannerOf(spawned.stderr());
      expect(isAlive(pid!)).toBe(true);
      spawned.child.kill('SIGTERM');
      const exit = await spawned.exited;
      expect(exit).toEqual({ code: 0, signal: null });
      await expect.poll(() => isAlive(pid!), { timeout: 10_000 }).toBe(false);
      expect(existsSync(sandbox!)).toBe(false);
      // With --policy auto the write ran unasked, in the sandbox: the project is untouched.
      const status = execFileSync('git', ['status', '--porcelain', '--untracked-files=all'], {
        cwd: dir,
        encoding: 'utf8',
      });
      expect(
        status.split('\n').filter((line) => line !== '' && !line.includes('.agents/')),
      ).toEqual([]);
    },
    SPAWN_TIMEOUT,
  );
});
