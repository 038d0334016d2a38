import { existsSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import {
  ElicitRequestSchema,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import type { ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { threadSandboxDir } from '../../src/actors/thread-sandbox.js';
import type { PolicyRecord } from '../../src/policy/policy-middleware.js';
import type { ChangeRecord } from '../../src/core/change-record.js';
import { agents, makeProjectRepo } from '../cli/helpers.js';
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

/** A git project with the fixture skill and actor `coder`, removed after the test. */
async function project(prefix: string, options: Parameters<typeof writeServeWorkspace>[1]) {
  const dir = await makeProjectRepo(prefix);
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  await writeServeWorkspace(dir, options);
  return dir;
}

function text(result: unknown): string {
  const content = (result as { content: Array<{ type: string; text?: string }> }).content;
  return content.map((block) => block.text ?? '').join('');
}

function meta<T>(result: unknown, key: string): T | undefined {
  return (result as { _meta?: Record<string, unknown> })._meta?.[key] as T | undefined;
}

describe('agents serve --actor (the real CLI)', () => {
  it(
    "serves over stdio in the thread's sandbox: logical-path writes land there, tracked and kept; SIGTERM stops the upstream",
    async () => {
      // Default model `scripted` with no script file: serving never makes the model.
      const dir = await project('serve-actor-stdio-', { actorYaml: [] });
      const spawned = spawnServe(dir, ['--actor', 'coder', '--thread', 't1', '--policy', 'auto']);
      cleanups.push(spawned.stop);

      const client = new Client({ name: 'ide', version: '1.0.0' });
      await client.connect(new StdioServerTransport(spawned.child.stdout, spawned.child.stdin));
      cleanups.push(() => client.close());
      expect(client.getServerVersion()?.name).toBe('agents-actor-coder');
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toEqual(
        expect.arrayContaining(['write_file', 'read_file', 'echo']),
      );
      expect(tools.find((tool) => tool.name === 'write_file')?.annotations?.readOnlyHint).toBe(
        false,
      );

      const banner = bannerOf(spawned.stderr());
      // The thread's sandbox lives in the workspace's state folder, where `agents sandbox diff
      // --thread` finds it.
      expect(
        banner.sandbox?.startsWith(threadSandboxDir(join(dir, '.agents'), 'coder', 't1')),
      ).toBe(true);
      expect(banner.sandboxNote).toBe('thread t1; kept after exit');
      expect(spawned.stderr()).not.toContain('mode ask');
      const pid = banner.upstreamPid!;
      expect(isAlive(pid)).toBe(true);

      const written = await client.callTool({
        name: 'write_file',
        arguments: { path: 'notes/a.txt', content: 'hi' },
      });
      expect(written.isError, text(written)).not.toBe(true);
      const change = meta<ChangeRecord>(written, 'agents/change');
      expect(change?.toolId).toBe('mcp:fixture/write_file');
      expect(change?.changed).toEqual([{ status: 'A', path: 'notes/a.txt' }]);
      expect(meta<PolicyRecord>(written, 'agents/policy')).toMatchObject({
        outcome: 'allowed',
        rule: 'mode auto',
      });
      expect(await readFile(join(banner.sandbox!, 'notes', 'a.txt'), 'utf8')).toBe('hi');
      expect(existsSync(join(dir, 'notes', 'a.txt'))).toBe(false);

      spawned.child.kill('SIGTERM');
      expect(await spawned.exited).toEqual({ code: 0, signal: null });
      await expect.poll(() => isAlive(pid), { timeout: 10_000 }).toBe(false);
      expect(spawned.stderr()).toContain(`sandbox kept: ${banner.sandbox}`);
      // The thread's sandbox outlives the server, with the change in its history.
      expect(await readFile(join(banner.sandbox!, 'notes', 'a.txt'), 'utf8')).toBe('hi');
      const diff = await agents(
        dir,
        '--workspace',
        join(dir, '.agents'),
        'sandbox',
        'diff',
        '--thread',
        't1',
      );
      expect(diff.stderr).toBe('');
      expect(diff.stdout).toBe('A notes/a.txt\n');
      expect(diff.code).toBe(0);
    },
    SPAWN_TIMEOUT,
  );

  it(
    'serves over HTTP in ask mode: elicitation approves or declines, a client without it is refused, a killed upstream leaves and rejoins tools/list',
    async () => {
      const dir = await project('serve-actor-http-', {
        actorYaml: [],
        // A slow restart leaves a window in which the crashed server's tools are unlisted.
        serverYaml: ['restart: { initialDelayMs: 5000, maxDelayMs: 5000 }'],
      });
      const spawned = spawnServe(dir, ['--actor', 'coder', '--transport', 'http', '--port', '0']);
      cleanups.push(spawned.stop);
      const url = new URL(await waitFor(() => endpointOf(spawned), 'the endpoint URL', spawned));
      expect(url.hostname).toBe('127.0.0.1');
      // Scripts that watch stderr see the URL too (stdout is a pipe here, so it is there as well).
      expect(spawned.stderr()).toContain(`MCP endpoint: ${url.href}\n`);
      expect(spawned.stderr()).toContain(
        'warning: the policy of actor "coder" is in mode ask: write-class tools need approval',
      );
      const banner = bannerOf(spawned.stderr());
      expect(banner.sandboxNote).toBe(
        'temporary: removed on exit; keep it with --keep-sandbox or --thread ID',
      );
      const sandbox = banner.sandbox!;
      expect(existsSync(sandbox)).toBe(true);

      // The IDE: declares elicitation and answers from a queue.
      const answers: ElicitResult[] = [];
      const questions: string[] = [];
      const ide = new Client(
        { name: 'ide', version: '1.0.0' },
        { capabilities: { elicitation: {} } },
      );
      ide.setRequestHandler(ElicitRequestSchema, (request) => {
        questions.push(request.params.message);
        return answers.shift() ?? { action: 'cancel' };
      });
      let listChanged = 0;
      ide.setNotificationHandler(ToolListChangedNotificationSchema, () => {
        listChanged += 1;
      });
      await ide.connect(new StreamableHTTPClientTransport(url));
      cleanups.push(() => ide.close());
      // A plain client: no elicitation.
      const plain = new Client({ name: 'plain', version: '1.0.0' });
      await plain.connect(new StreamableHTTPClientTransport(url));
      cleanups.push(() => plain.close());

      answers.push({ action: 'accept', content: { decision: 'approve' } });
      const approved = await ide.callTool({
        name: 'write_file',
        arguments: { path: 'notes/approved.txt', content: 'yes' },
      });
      expect(approved.isError, text(approved)).not.toBe(true);
      expect(questions[0]).toContain('Arguments: {"path":"notes/approved.txt","content":"yes"}');
      expect(meta<PolicyRecord>(approved, 'agents/policy')).toMatchObject({
        outcome: 'approved',
        decidedBy: 'mcp-client',
      });
      expect(meta<ChangeRecord>(approved, 'agents/change')?.changed).toEqual([
        { status: 'A', path: 'notes/approved.txt' },
      ]);
      expect(await readFile(join(sandbox, 'notes', 'approved.txt'), 'utf8')).toBe('yes');
      expect(existsSync(join(dir, 'notes', 'approved.txt'))).toBe(false);

      answers.push({ action: 'decline' });
      const declined = await ide.callTool({
        name: 'write_file',
        arguments: { path: 'notes/declined.txt', content: 'no' },
      });
      expect(declined.isError).toBe(true);
      expect(text(declined)).toContain('rejected this call of "write_file"');
      expect(text(declined)).toContain('declined in the MCP client');
      expect(existsSync(join(sandbox, 'notes', 'declined.txt'))).toBe(false);

      const refused = await plain.callTool({
        name: 'write_file',
        arguments: { path: 'notes/plain.txt', content: '?' },
      });
      expect(refused.isError).toBe(true);
      expect(text(refused)).toContain(
        'Tool "write_file" needs approval (mode ask: write-class tool needs approval in ask mode), and this MCP client ("plain") cannot be asked',
      );
      expect(text(refused)).toContain('serve with --policy auto');
      expect(existsSync(join(sandbox, 'notes', 'plain.txt'))).toBe(false);
      // Read-only tools run unasked, and read the sandbox.
      const read = await plain.callTool({
        name: 'read_file',
        arguments: { path: 'notes/approved.txt' },
      });
      expect(text(read)).toBe('yes');
      expect(questions).toHaveLength(2);

      // The upstream dies: its tools leave the list (with list_changed), then come back.
      const firstPid = banner.upstreamPid!;
      process.kill(firstPid, 'SIGKILL');
      await expect
        .poll(
          async () => ({
            notified: listChanged > 0,
            tools: (await ide.listTools()).tools.map((tool) => tool.name),
          }),
          { timeout: 3_500 },
        )
        .toEqual({ notified: true, tools: [] });
      const notifiedWhileDown = listChanged;
      await expect
        .poll(async () => (await ide.listTools()).tools.map((tool) => tool.name), {
          timeout: 60_000,
        })
        .toContain('write_file');
      expect(listChanged).toBeGreaterThan(notifiedWhileDown);
      const restarted = /upstream server "fixture" restarted \(pid (\d+)\)/.exec(spawned.stderr());
      expect(restarted, spawned.stderr()).not.toBeNull();
      const secondPid = Number(restarted![1]);
      expect(isAlive(secondPid)).toBe(true);

      spawned.child.kill('SIGTERM');
      expect(await spawned.exited).toEqual({ code: 0, signal: null });
      await expect.poll(() => isAlive(secondPid), { timeout: 10_000 }).toBe(false);
      // Without --thread or --keep-sandbox the sandbox goes with the server.
      expect(existsSync(sandbox)).toBe(false);
    },
    SPAWN_TIMEOUT,
  );
});
