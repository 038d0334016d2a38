import { existsSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import type { PolicyRecord } from '../../src/policy/policy-middleware.js';
import { makeProjectRepo } from '../cli/helpers.js';
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
});
