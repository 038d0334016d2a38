/**
 * Issue 24's "done when": `agents server add` and an actor run work against a 2026-07-28-only
 * server and a 2025-only server in one workspace; `agents mcp-client` speaks 2026-07-28; a pinned
 * revision the server does not speak fails with exit 5 naming both sides.
 */
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorkspaceStore } from '../../src/workspace/store.js';
import {
  FIXTURE_SERVER_PATH,
  MODERN_SERVER_PATH,
  startModernFixtureProcess,
  TSX_LOADER,
  type FixtureProcess,
} from '../fixtures/fixture-process.js';
import { agents, agentsProcess, makeProjectRepo } from './helpers.js';

const node = process.execPath;

describe('a 2026-07-28-only server beside a 2025-only server, through the CLI', () => {
  let dir: string;
  let http: FixtureProcess;
  beforeAll(async () => {
    dir = await makeProjectRepo('agents-revisions-');
    http = await startModernFixtureProcess();
  });
  afterAll(async () => {
    await http?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('agents server add checks each server on its own revision', { timeout: 120_000 }, async () => {
    const modern = await agents(
      dir,
      ...['server', 'add', 'modern', '--', node, '--import', TSX_LOADER, MODERN_SERVER_PATH],
    );
    expect(modern.code, modern.stderr).toBe(0);
    expect(modern.stdout).toContain('protocol 2026-07-28');
    const old = await agents(
      dir,
      ...['server', 'add', 'old', '--', node, '--import', TSX_LOADER, FIXTURE_SERVER_PATH],
      ...['--transport', 'stdio', '--tools', 'basic'],
    );
    expect(old.code, old.stderr).toBe(0);
    expect(old.stdout).toContain('protocol 2025-11-25');
    const remote = await agents(dir, 'server', 'add', 'remote', '--url', http.url.href);
    expect(remote.code, remote.stderr).toBe(0);
    expect(remote.stdout).toContain('protocol 2026-07-28');
  });

  it('a pinned revision the server does not speak: exit 5 naming both sides', async () => {
    const pinned = await agents(
      dir,
      ...['server', 'add', 'pinned', '--protocol', '2025-11-25', '--url', http.url.href],
    );
    expect(pinned.code).toBe(5);
    expect(pinned.stderr).toContain('speaks MCP 2026-07-28');
    expect(pinned.stderr).toContain('this client offered 2025-11-25');
    expect(pinned.stderr).not.toMatch(/SSE error|405/);
  });

  it('agents mcp-client --protocol 2025-11-25 against it: exit 5 naming both sides and the flag', async () => {
    const run = await agents(dir, 'mcp-client', http.url.href, '--protocol', '2025-11-25');
    expect(run.code).toBe(5);
    expect(run.stderr).toContain('speaks MCP 2026-07-28');
    expect(run.stderr).toContain('this client offered 2025-11-25 (--protocol 2025-11-25)');
    expect(run.stderr).not.toContain('Is the server running');
  });

  it('agents mcp-client lists and calls over 2026-07-28', async () => {
    const run = await agents(dir, 'mcp-client', http.url.href, '--tool', 'echo', '--strict');
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('(2026-07-28)');
  });

  it(
    'an actor run calls tools of both servers in one workspace',
    { timeout: 180_000 },
    async () => {
      const store = createWorkspaceStore(join(dir, '.agents'));
      await store.put('skill', 'both', { mcpServers: ['modern', 'old'] });
      await writeFile(
        join(dir, 'script.yaml'),
        [
          '- tool_calls: [{ name: modern__echo, args: { text: from-2026 } }]',
          '- tool_calls: [{ name: old__echo, args: { text: from-2025 } }]',
          '- content: done',
          '',
        ].join('\n'),
      );
      await store.put('actor', 'bot', {
        skills: ['both'],
        model: 'scripted:script.yaml',
        policy: { mode: 'auto' },
      });
      const run = await agentsProcess(dir, ['actor', 'run', 'bot', '--input', 'go', '--json']);
      expect(run.code, run.stderr).toBe(0);
      const ends = run.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as Record<string, unknown>)
        .filter((event) => event['type'] === 'tool-call-end');
      expect(ends.map((event) => [event['name'], event['isError']])).toEqual([
        ['modern__echo', false],
        ['old__echo', false],
      ]);
      expect(String(ends[0]?.['text'])).toContain('from-2026');
      expect(String(ends[1]?.['text'])).toContain('received 9 characters');
    },
  );
});
