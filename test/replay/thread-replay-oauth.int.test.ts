/**
 * A remote streamable HTTP server behind OAuth (the local authorization server fixture),
 * recorded with `agents actor run … --record` after `agents server login`, then replayed with
 * the server stopped and the login gone: no network, no token. The cassette holds neither the
 * access token nor the refresh token.
 */
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { STATE_DIR_ENV } from '../../src/servers/oauth/oauth-store.js';
import { parseCassette } from '../../src/testing/index.js';
import { createWorkspaceStore } from '../../src/workspace/store.js';
import { startOAuthFixture, type OAuthFixture } from '../fixtures/oauth-fixture.js';
import { agents, makeProjectRepo } from '../cli/helpers.js';

describe('agents thread replay of a remote OAuth server', () => {
  let fixture: OAuthFixture | undefined;
  let dir: string;
  let stateDir: string;
  const savedStateDir = process.env[STATE_DIR_ENV];

  beforeEach(async () => {
    fixture = await startOAuthFixture();
    dir = await makeProjectRepo('replay-oauth-');
    stateDir = await mkdtemp(join(tmpdir(), 'replay-oauth-state-'));
    process.env[STATE_DIR_ENV] = stateDir;
  });
  afterEach(async () => {
    await fixture?.close();
    if (savedStateDir === undefined) delete process.env[STATE_DIR_ENV];
    else process.env[STATE_DIR_ENV] = savedStateDir;
    await rm(dir, { recursive: true, force: true });
    await rm(stateDir, { recursive: true, force: true });
  });

  it('records a logged-in run without its tokens and replays it offline with no login', async () => {
    const live = fixture!;
    expect((await agents(dir, 'server', 'add', 'notes', '--url', live.url.href)).code).toBe(0);
    const login = await agents(dir, 'server', 'login', 'notes', '--authorize', 'follow');
    expect(login.code, login.stderr).toBe(0);
    const store = createWorkspaceStore(join(dir, '.agents'));
    await store.put('skill', 'remote', { mcpServers: ['notes'] });
    await store.put('actor', 'asker', {
      skills: ['remote'],
      model: 'scripted:script.yaml',
      policy: { mode: 'auto' },
    });
    await writeFile(
      join(dir, 'script.yaml'),
      '- tool_calls: [{ name: whoami }]\n- content: done\n',
    );
    const run = await agents(
      dir,
      'actor',
      'run',
      'asker',
      '--input',
      'who?',
      '--record',
      'r.jsonl',
    );
    expect(run.code, run.stderr).toBe(0);
    const clientId = live.stats.registrations[0]?.client_id;
    expect(clientId, 'the login registered a client').toBeDefined();
    expect(run.stdout).toContain(`${clientId} mcp`);

    // The tokens the run used, from the login's store: none of them is in the cassette.
    const [tokenFile] = await readdir(join(stateDir, 'oauth'));
    const stored = await readFile(join(stateDir, 'oauth', tokenFile!), 'utf8');
    const tokens = [...stored.matchAll(/"(?:access_token|refresh_token)"\s*:\s*"([^"]+)"/g)].map(
      (match) => match[1]!,
    );
    expect(tokens, 'the login stored an access and a refresh token').toHaveLength(2);
    const text = await readFile(join(dir, 'r.jsonl'), 'utf8');
    for (const token of tokens) expect(text).not.toContain(token);
    const cassette = parseCassette(text);
    expect(
      cassette.entries.some((entry) => entry.kind === 'mcp' && entry.method === 'tools/call'),
    ).toBe(true);

    // No network, no token: the server is gone, the login removed.
    await live.close();
    fixture = undefined;
    const refused = await fetch(live.url).catch((error: unknown) => error);
    expect(refused, 'the server is really stopped').toBeInstanceOf(Error);
    expect((await agents(dir, 'server', 'logout', 'notes')).code).toBe(0);
    expect(await readdir(join(stateDir, 'oauth'))).toEqual([]);

    const replay = await agents(dir, 'thread', 'replay', 'r.jsonl', '--json');
    expect(replay.code, replay.stderr + replay.stdout).toBe(0);
    const report = JSON.parse(replay.stdout) as {
      tree: string;
      checkpoints: number;
      calls: Array<{ toolId: string; outcome?: string; isError: boolean }>;
    };
    const end = cassette.entries.find((entry) => entry.kind === 'end')!;
    expect(report).toMatchObject({ tree: end.tree, checkpoints: end.checkpoints });
    expect(report.calls).toEqual([
      expect.objectContaining({ toolId: 'mcp:notes/whoami', isError: false }),
    ]);
  });
});
