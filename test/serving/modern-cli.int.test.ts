import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import type { PolicyRecord } from '../../src/policy/policy-middleware.js';
import { makeProjectRepo } from '../cli/helpers.js';
import { FIXTURE_SERVER_PATH, TSX_LOADER } from '../fixtures/fixture-process.js';
import {
  bannerOf,
  endpointOf,
  SPAWN_TIMEOUT,
  spawnServe,
  waitFor,
  writeServeWorkspace,
} from './cli-helpers.js';

// The real `agents serve` (spawned as a host would) answers SDK v2 clients on 2026-07-28: over
// stdio the opening message picks the revision; over HTTP both share one endpoint.

const MODERN = '2026-07-28';
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function project(prefix: string): Promise<string> {
  const dir = await makeProjectRepo(prefix);
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  // The actor keeps its default policy: mode ask, so write-class tools need approval.
  await writeServeWorkspace(dir, { actorYaml: [] });
  return dir;
}

function text(result: unknown): string {
  const content = (result as { content: Array<{ type: string; text?: string }> }).content;
  return content.map((block) => block.text ?? '').join('');
}

/** An SDK v2 client that approves or declines every approval question, and records them. */
function ide(mode: 'auto' | { pin: string }, decisions: string[], questions: string[]): Client {
  const client = new Client(
    { name: 'ide', version: '1.0.0' },
    { versionNegotiation: { mode }, capabilities: { elicitation: { form: {} } } },
  );
  client.setRequestHandler('elicitation/create', (request) => {
    questions.push((request.params as { message: string }).message);
    const decision = decisions.shift();
    return decision === undefined
      ? { action: 'decline' }
      : { action: 'accept', content: { decision } };
  });
  return client;
}

describe('agents serve (the real CLI) and SDK v2 clients on 2026-07-28', () => {
  it(
    'over stdio: a pinned client lists and calls tools, and an approval is an input_required round trip',
    async () => {
      const dir = await project('serve-modern-stdio-');
      const spawned = spawnServe(dir, ['--actor', 'coder']);
      cleanups.push(spawned.stop);
      const decisions = ['approve', 'reject'];
      const questions: string[] = [];
      const client = ide({ pin: MODERN }, decisions, questions);
      // The server-side stdio transport over the child's pipes is a client's pipe pair too.
      await client.connect(new StdioServerTransport(spawned.child.stdout, spawned.child.stdin));
      cleanups.push(() => client.close());
      expect(client.getNegotiatedProtocolVersion()).toBe(MODERN);
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toContain('write_file');

      const sandbox = bannerOf(spawned.stderr()).sandbox!;
      const approved = await client.callTool({
        name: 'write_file',
        arguments: { path: 'notes/a.txt', content: 'hi' },
      });
      expect(approved.isError, text(approved)).not.toBe(true);
      expect(questions[0]).toContain('Arguments: {"path":"notes/a.txt","content":"hi"}');
      expect(
        (approved._meta as Record<string, unknown> | undefined)?.['agents/policy'],
      ).toMatchObject({
        outcome: 'approved',
        decidedBy: 'mcp-client',
      } satisfies Partial<PolicyRecord>);
      expect(await readFile(join(sandbox, 'notes', 'a.txt'), 'utf8')).toBe('hi');

      const rejected = await client.callTool({
        name: 'write_file',
        arguments: { path: 'notes/b.txt', content: 'no' },
      });
      expect(rejected.isError).toBe(true);
      expect(text(rejected)).toContain('rejected in the MCP client');
      expect(existsSync(join(sandbox, 'notes', 'b.txt'))).toBe(false);
      expect(questions).toHaveLength(2);

      const read = await client.callTool({ name: 'read_file', arguments: { path: 'notes/a.txt' } });
      expect(text(read)).toBe('hi');
      expect(questions).toHaveLength(2);
    },
    SPAWN_TIMEOUT,
  );

  it(
    'over HTTP: an auto-mode client picks 2026-07-28 and a pinned one gets its approval round trip',
    async () => {
      const dir = await project('serve-modern-http-');
      const spawned = spawnServe(dir, ['--actor', 'coder', '--transport', 'http', '--port', '0']);
      cleanups.push(spawned.stop);
      const url = new URL(await waitFor(() => endpointOf(spawned), 'the endpoint URL', spawned));
      const sandbox = bannerOf(spawned.stderr()).sandbox!;

      const questions: string[] = [];
      const auto = ide('auto', [], questions);
      await auto.connect(new StreamableHTTPClientTransport(url));
      cleanups.push(() => auto.close());
      expect(auto.getNegotiatedProtocolVersion()).toBe(MODERN);
      expect((await auto.listTools()).tools.map((tool) => tool.name)).toContain('read_file');

      const pinned = ide({ pin: MODERN }, ['approve'], questions);
      await pinned.connect(new StreamableHTTPClientTransport(url));
      cleanups.push(() => pinned.close());
      const written = await pinned.callTool({
        name: 'write_file',
        arguments: { path: 'notes/h.txt', content: 'over http' },
      });
      expect(written.isError, text(written)).not.toBe(true);
      expect(questions).toHaveLength(1);
      expect(await readFile(join(sandbox, 'notes', 'h.txt'), 'utf8')).toBe('over http');

      spawned.child.kill('SIGTERM');
      expect(await spawned.exited).toEqual({ code: 0, signal: null });
    },
    SPAWN_TIMEOUT,
  );

  it(
    "forwards an upstream server's sampling and elicitation to a 2026 client as input_required, logs only at its logLevel",
    async () => {
      const dir = await makeProjectRepo('serve-modern-forward-');
      cleanups.push(() => rm(dir, { recursive: true, force: true }));
      const skills = join(dir, '.agents', 'skills');
      await mkdir(skills, { recursive: true });
      const args = [
        ...['--import', TSX_LOADER, FIXTURE_SERVER_PATH, '--transport', 'stdio'],
        ...['--tools', 'basic', '--client-requests'],
      ];
      await writeFile(
        join(skills, 'forward.yaml'),
        [
          'description: Fixture tools that ask their client for sampling and elicitation',
          'mcpServers:',
          '  - name: fixture',
          '    transport: stdio',
          `    command: ${JSON.stringify(process.execPath)}`,
          `    args: ${JSON.stringify(args)}`,
          '    trusted: true',
          '',
        ].join('\n'),
      );
      const spawned = spawnServe(dir, ['--skill', 'forward', '--transport', 'http', '--port', '0']);
      cleanups.push(spawned.stop);
      const url = new URL(await waitFor(() => endpointOf(spawned), 'the endpoint URL', spawned));

      const client = new Client(
        { name: 'ide', version: '1.0.0' },
        {
          versionNegotiation: { mode: { pin: MODERN } },
          capabilities: { sampling: {}, elicitation: { form: {} } },
        },
      );
      const sampled: unknown[] = [];
      const elicited: unknown[] = [];
      client.setRequestHandler('sampling/createMessage', (request) => {
        sampled.push(request.params);
        return { model: 'ide-model', role: 'assistant', content: { type: 'text', text: 'blue' } };
      });
      client.setRequestHandler('elicitation/create', (request) => {
        elicited.push(request.params);
        return { action: 'accept', content: { answer: '42' } };
      });
      await client.connect(new StreamableHTTPClientTransport(url));
      cleanups.push(() => client.close());

      const model = await client.callTool({ name: 'ask_model', arguments: { prompt: 'Sky?' } });
      expect(text(model)).toBe('model ide-model said: blue');
      expect(sampled).toEqual([
        expect.objectContaining({
          maxTokens: 20,
          messages: [{ role: 'user', content: { type: 'text', text: 'Sky?' } }],
        }),
      ]);
      const user = await client.callTool({ name: 'ask_user', arguments: { question: 'Answer?' } });
      expect(text(user)).toBe('user accept: 42');
      expect(elicited).toEqual([expect.objectContaining({ message: 'Answer?' })]);

      // No logLevel in the request: the upstream's log messages are not sent (raw, to see all).
      const envelope = {
        'io.modelcontextprotocol/protocolVersion': MODERN,
        'io.modelcontextprotocol/clientCapabilities': {},
      };
      const logCall = async (meta: Record<string, unknown>) => {
        const response = await fetch(url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'mcp-protocol-version': MODERN,
            'mcp-method': 'tools/call',
            'mcp-name': 'log_message',
          },
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: 1,
            method: 'tools/call',
            params: {
              name: 'log_message',
              arguments: { levels: ['info', 'error'], text: 'disk low' },
              _meta: { ...envelope, ...meta },
            },
          }),
        });
        return response.text();
      };
      const silent = await logCall({});
      expect(silent).toContain('logged 2');
      expect(silent).not.toContain('notifications/message');
      const loud = await logCall({ 'io.modelcontextprotocol/logLevel': 'error' });
      expect(loud).toContain('logged 2');
      expect(loud).toContain('error: disk low');
      expect(loud).not.toContain('info: disk low');
    },
    SPAWN_TIMEOUT,
  );
});
