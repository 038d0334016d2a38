import { existsSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runMcpClient } from '../../src/cli/commands/mcp-client.js';
import { parsePolicy } from '../../src/config/policy-schema.js';
import { createPolicyMiddleware } from '../../src/policy/policy-middleware.js';
import { probeBubblewrap } from '../../src/confinement/bubblewrap.js';
import { serveHttp } from '../../src/serving/http.js';
import { createMcpServer } from '../../src/serving/mcp-server.js';
import { capabilities, descriptor, entry } from '../serving/helpers.js';
import { agents, agentsWithStdin, makeProjectRepo } from './helpers.js';

const NOTES_SERVER = join(import.meta.dirname, '..', 'fixtures', 'workspace', 'notes-server.mjs');

describe('agents tool call SERVER/TOOL', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await makeProjectRepo('agents-tool-call-');
    const added = await agents(
      dir,
      'server',
      'add',
      'notes',
      '--no-validate',
      '--',
      process.execPath,
      NOTES_SERVER,
    );
    expect(added.code, added.stderr).toBe(0);
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('asks before a write in ask mode, runs reads unasked, and audits every call', async () => {
    const args = JSON.stringify({ path: 'a.md', text: 'hi' });
    const rejected = await agentsWithStdin(
      dir,
      'r not now\n',
      'tool',
      'call',
      'notes/write_note',
      '--args',
      args,
    );
    expect(rejected.code).toBe(8);
    expect(rejected.stderr).toContain('write_note');
    expect(rejected.stdout).toContain('not now');
    expect(existsSync(join(dir, 'a.md'))).toBe(false);

    const approved = await agentsWithStdin(
      dir,
      'a\n',
      'tool',
      'call',
      'notes/write_note',
      '--args',
      args,
    );
    expect(approved.code, approved.stderr).toBe(0);
    expect(await readFile(join(dir, 'a.md'), 'utf8')).toBe('hi');

    // A read-only tool runs without a question (stdin closed: a question would be a rejection).
    const read = await agentsWithStdin(
      dir,
      '',
      'tool',
      'call',
      'mcp:notes/read_note',
      '--args',
      '{"path":"a.md"}',
    );
    expect(read.code, read.stderr).toBe(0);
    expect(read.stdout).toBe('hi\n');

    const audit = (await agents(dir, 'audit', '--json')).stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { actor?: string; toolName?: string; policy?: unknown });
    expect(audit.map((item) => [item.actor, item.toolName])).toEqual([
      ['agents tool call', 'write_note'],
      ['agents tool call', 'write_note'],
      ['agents tool call', 'read_note'],
    ]);
    expect(JSON.stringify(audit[0])).toContain('rejected');
    expect(JSON.stringify(audit[1])).toContain('approved');
  });

  it("runs the server confined: its writes cannot reach the project's .git or the workspace", async () => {
    if (!probeBubblewrap().available) {
      // No bubblewrap here: `auto` runs unconfined (and says so); CI requires it.
      expect(process.env['AGENTS_REQUIRE_CONFINEMENT']).not.toBe('1');
      return;
    }
    const gitConfig = await readFile(join(dir, '.git', 'config'), 'utf8');
    for (const path of ['.git/config', '.git/hooks/pre-commit', '.agents/servers/evil.yaml']) {
      const args = JSON.stringify({ path, text: '[core]\n\tfsmonitor = /tmp/x.sh\n' });
      const result = await agentsWithStdin(
        dir,
        '',
        'tool',
        'call',
        'notes/write_note',
        '--policy',
        'auto',
        '--args',
        args,
      );
      expect(result.code, `${path}: ${result.stdout}${result.stderr}`).toBe(6);
    }
    expect(await readFile(join(dir, '.git', 'config'), 'utf8')).toBe(gitConfig);
    expect(existsSync(join(dir, '.git', 'hooks', 'pre-commit'))).toBe(false);
    expect(existsSync(join(dir, '.agents', 'servers', 'evil.yaml'))).toBe(false);
  });

  it('refuses bad input with a usage error and names a missing tool', async () => {
    const badJson = await agents(dir, 'tool', 'call', 'notes/read_note', '--args', '{path:');
    expect(badJson.code).toBe(2);
    expect(badJson.stderr.split('\n')[0]).toMatch(/^agents: --args is not JSON/);
    const array = await agents(dir, 'tool', 'call', 'notes/read_note', '--args', '[1]');
    expect(array.stderr.split('\n')[0]).toBe(
      'agents: --args must be one JSON object, e.g. \'{"path":"a.txt"}\'.',
    );
    const noSlash = await agents(dir, 'tool', 'call', 'notes');
    expect(noSlash.code).toBe(2);
    const missing = await agents(dir, 'tool', 'call', 'notes/nope');
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toContain('Server "notes" has no tool "nope"; it has: write_note');
  });
});

describe('agents mcp-client calls and approves nothing unless told', () => {
  it('lists only by default, declines elicitation, and calls/approves with the flags', async () => {
    const runs: unknown[] = [];
    const write = entry(
      descriptor('write_note', {
        id: 'mcp:notes/write_note',
        source: 'mcp',
        serverName: 'notes',
        capabilities: capabilities('write'),
      }),
      async (args) => {
        runs.push(args);
        return { content: [{ type: 'text', text: 'written' }] };
      },
    );
    await using http = await serveHttp({
      createServer: () =>
        createMcpServer({
          entries: () => [write],
          middleware: [createPolicyMiddleware({ policy: parsePolicy({}), name: 'actor "t"' })],
        }),
    });
    const listed = await runMcpClient(http.url);
    expect(listed.tools).toEqual(['write_note']);
    expect(listed.calls).toEqual([]);

    const asked = await runMcpClient(http.url, { only: ['write_note'] });
    expect(asked.calls.map((call) => call.outcome)).toEqual(['tool-error']);
    expect(asked.calls[0]?.message).toContain('declined in the MCP client');
    expect(runs).toEqual([]);

    const approved = await runMcpClient(http.url, { callAll: true, autoApprove: true });
    expect(approved.calls.map((call) => call.outcome)).toEqual(['ok']);
    expect(runs).toHaveLength(1);
  });
});
