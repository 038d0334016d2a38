import { mkdtemp, readFile, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { NamedServerConfig } from '../../src/config/server-schema.js';
import { AgentsError } from '../../src/errors.js';
import { runMcpClient } from '../../src/cli/commands/mcp-client.js';
import { createManagedServer } from '../../src/servers/managed-server.js';
import { createFollowRedirectsAuthorizer } from '../../src/servers/oauth/authorizers.js';
import { loginToServer } from '../../src/servers/oauth/login.js';
import { STATE_DIR_ENV } from '../../src/servers/oauth/oauth-store.js';
import type { NamedHttpServerConfig } from '../../src/servers/oauth/server-auth.js';
import { startOAuthFixture, type OAuthFixture } from '../fixtures/oauth-fixture.js';
import { FAST_TIMEOUTS, resultText } from './fixture.js';

let fixture: OAuthFixture;
let stateDir: string;
const savedStateDir = process.env[STATE_DIR_ENV];

beforeEach(async () => {
  fixture = await startOAuthFixture();
  stateDir = await mkdtemp(join(tmpdir(), 'agents-oauth-state-'));
  process.env[STATE_DIR_ENV] = stateDir;
});

afterEach(async () => {
  await fixture.close();
  if (savedStateDir === undefined) delete process.env[STATE_DIR_ENV];
  else process.env[STATE_DIR_ENV] = savedStateDir;
  await rm(stateDir, { recursive: true, force: true });
});

function remoteConfig(extra: Partial<NamedHttpServerConfig> = {}): NamedHttpServerConfig {
  return {
    name: 'notes',
    transport: 'streamable-http',
    url: fixture.url.href,
    trusted: true,
    timeouts: { ...FAST_TIMEOUTS },
    ...extra,
  } as NamedHttpServerConfig;
}

const follow = createFollowRedirectsAuthorizer();

describe('OAuth for remote servers', () => {
  it('logs in with discovery, dynamic registration and PKCE, and stores tokens 0600 in the state folder', async () => {
    const result = await loginToServer(remoteConfig(), { authorize: follow });
    expect(result.how).toBe('login');
    expect(result.tools.sort()).toEqual(['whoami', 'write_note']);
    expect(fixture.stats.registrations).toHaveLength(1);
    const registration = fixture.stats.registrations[0];
    expect(registration?.redirect_uris[0]).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);
    expect(fixture.stats.authorizations).toHaveLength(1);
    expect(fixture.stats.authorizations[0]?.codeChallenge).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // The scope comes from the server (WWW-Authenticate / resource metadata), not a guess.
    expect(fixture.stats.authorizations[0]?.scopes).toContain('mcp');

    const files = await readdir(join(stateDir, 'oauth'));
    expect(files).toHaveLength(1);
    const file = join(stateDir, 'oauth', files[0] as string);
    expect(result.stateFile).toBe(file);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await stat(join(stateDir, 'oauth'))).mode & 0o777).toBe(0o700);
    const stored = JSON.parse(await readFile(file, 'utf8')) as {
      tokens?: { access_token?: string; refresh_token?: string };
    };
    expect(stored.tokens?.access_token).toBeTruthy();
    expect(stored.tokens?.refresh_token).toBeTruthy();

    // A second login finds working tokens and does not bother the person again.
    const again = await loginToServer(remoteConfig(), { authorize: follow });
    expect(again.how).toBe('stored');
    expect(fixture.stats.authorizations).toHaveLength(1);
  });

  it('fails a non-interactive start with the exact login command, registering nothing', async () => {
    const server = createManagedServer(remoteConfig() as NamedServerConfig, { runDir: null });
    const failure = await server.start().then(
      () => undefined,
      (error: unknown) => error,
    );
    await server.close();
    expect(AgentsError.hasCode(failure, 'AUTH_REQUIRED')).toBe(true);
    expect((failure as Error).message).toBe(
      'Server "notes" needs an OAuth login (it has never logged in on this machine); run `agents server login notes` in a terminal, then retry.',
    );
    expect(fixture.stats.registrations).toHaveLength(0);
    expect(fixture.stats.authorizations).toHaveLength(0);
  });

  it('after a login, an unattended server connects, calls tools and refreshes an expired token', async () => {
    await loginToServer(remoteConfig(), { authorize: follow });
    await using server = createManagedServer(remoteConfig() as NamedServerConfig, {
      runDir: null,
    });
    await server.start();
    const first = await server.callTool('whoami', {}, {});
    const clientId = fixture.stats.registrations[0]?.client_id;
    expect(resultText(first)).toContain(clientId);

    fixture.expireAccessTokens();
    const second = await server.callTool('whoami', {}, {});
    expect(second.isError).not.toBe(true);
    expect(resultText(second)).toContain(clientId);
    expect(fixture.stats.tokenRequests.map((request) => request.grantType)).toEqual([
      'authorization_code',
      'refresh_token',
    ]);
    // No second login was needed.
    expect(fixture.stats.authorizations).toHaveLength(1);
  });

  it('client_credentials with a secret from ${VAR} works unattended, with no login and no state file', async () => {
    process.env['NOTES_CLIENT_ID'] = fixture.secretClient.clientId;
    process.env['NOTES_CLIENT_SECRET'] = fixture.secretClient.clientSecret;
    try {
      await using server = createManagedServer(
        remoteConfig({
          oauth: {
            grant: 'client_credentials',
            clientId: '${NOTES_CLIENT_ID}',
            clientSecret: '${NOTES_CLIENT_SECRET}',
            scope: 'mcp',
          },
        }) as NamedServerConfig,
        { runDir: null },
      );
      await server.start();
      const result = await server.callTool('whoami', {}, {});
      expect(resultText(result)).toContain(fixture.secretClient.clientId);
      expect(fixture.stats.tokenRequests).toEqual([
        { grantType: 'client_credentials', clientId: fixture.secretClient.clientId },
      ]);
      expect(await readdir(stateDir)).toEqual([]);
    } finally {
      delete process.env['NOTES_CLIENT_ID'];
      delete process.env['NOTES_CLIENT_SECRET'];
    }
  });

  it('client_credentials with private_key_jwt signs an assertion the server verifies', async () => {
    process.env['NOTES_KEY'] = fixture.jwtClient.privateKeyPem;
    try {
      await using server = createManagedServer(
        remoteConfig({
          oauth: {
            grant: 'client_credentials',
            clientId: fixture.jwtClient.clientId,
            privateKey: '${NOTES_KEY}',
            algorithm: 'RS256',
            scope: 'mcp',
          },
        }) as NamedServerConfig,
        { runDir: null },
      );
      await server.start();
      expect(resultText(await server.callTool('whoami', {}, {}))).toContain(
        fixture.jwtClient.clientId,
      );
    } finally {
      delete process.env['NOTES_KEY'];
    }
  });

  it('names the unset variable when a secret reference cannot be resolved', async () => {
    const server = createManagedServer(
      remoteConfig({
        oauth: { grant: 'client_credentials', clientId: 'x', clientSecret: '${NOT_SET_ANYWHERE}' },
      }) as NamedServerConfig,
      { runDir: null },
    );
    const failure = await server.start().then(
      () => undefined,
      (error: unknown) => error as Error,
    );
    await server.close();
    expect(failure?.message).toContain('${NOT_SET_ANYWHERE}');
    expect(failure?.message).toContain('export NOT_SET_ANYWHERE=');
  });

  it('uses a pre-registered client (no registration) on its fixed redirect port', async () => {
    const probe = await import('node:net').then(
      ({ createServer }) =>
        new Promise<number>((resolve) => {
          const server = createServer();
          server.listen(0, '127.0.0.1', () => {
            const port = (server.address() as { port: number }).port;
            server.close(() => resolve(port));
          });
        }),
    );
    const client = fixture.preRegister(`http://127.0.0.1:${probe}/callback`);
    process.env['PRE_ID'] = client.clientId;
    process.env['PRE_SECRET'] = client.clientSecret;
    try {
      const config = remoteConfig({
        oauth: {
          grant: 'authorization_code',
          clientId: '${PRE_ID}',
          clientSecret: '${PRE_SECRET}',
          redirectPort: probe,
        },
      });
      const result = await loginToServer(config, { authorize: follow });
      expect(result.how).toBe('login');
      expect(fixture.stats.registrations).toHaveLength(0);
      expect(fixture.stats.authorizations[0]?.clientId).toBe(client.clientId);
      const files = await readdir(join(stateDir, 'oauth'));
      const text = await readFile(join(stateDir, 'oauth', files[0] as string), 'utf8');
      // The configured secret stays in the environment, never on disk.
      expect(text).not.toContain(client.clientSecret);
    } finally {
      delete process.env['PRE_ID'];
      delete process.env['PRE_SECRET'];
    }
  });

  it('agents mcp-client logs in, then steps up its scope when a tool answers 403 insufficient_scope', async () => {
    const report = await runMcpClient(fixture.url, { authorize: follow, callAll: true });
    expect(report.tools.sort()).toEqual(['whoami', 'write_note']);
    expect(report.calls.map((call) => `${call.tool}:${call.outcome}`).sort()).toEqual([
      'whoami:ok',
      'write_note:ok',
    ]);
    // First login with the server's scope, then one more for notes:write: no loop.
    expect(fixture.stats.authorizations.map((entry) => entry.scopes.join(' '))).toEqual([
      'mcp',
      'mcp notes:write',
    ]);
    // A one-off client keeps its tokens in memory only.
    expect(await readdir(stateDir)).toEqual([]);
  });

  it('an unattended call that needs more scope names it; login --scope grants it', async () => {
    await loginToServer(remoteConfig(), { authorize: follow });
    {
      await using server = createManagedServer(remoteConfig() as NamedServerConfig, {
        runDir: null,
      });
      await server.start();
      const denied = await server.callTool('write_note', { text: 'x' }, {}).then(
        (result) => resultText(result),
        (error: unknown) => (error as Error).message,
      );
      expect(denied).toContain(
        'asks for scope "mcp notes:write", which its login lacks (notes:write); run `agents server login notes --scope "mcp notes:write"`',
      );
    }
    const again = await loginToServer(remoteConfig(), {
      authorize: follow,
      scope: 'mcp notes:write',
    });
    expect(again.how).toBe('login');
    expect(again.scope).toBe('mcp notes:write');
    await using server = createManagedServer(remoteConfig() as NamedServerConfig, {
      runDir: null,
    });
    await server.start();
    expect(resultText(await server.callTool('write_note', { text: 'x' }, {}))).toBe('noted: x');
  });
});
