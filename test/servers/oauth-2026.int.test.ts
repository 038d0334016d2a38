/**
 * OAuth for the 2026-07-28 revision against a real authorization server on 127.0.0.1 (the SDK's
 * server-side auth router in test/fixtures/oauth-fixture.ts): `application_type` at
 * registration, the RFC 9207 `iss` check, re-registration when the authorization server
 * changes, scope union on step-up, client ID metadata documents before dynamic registration.
 */
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { NamedServerConfig } from '../../src/config/server-schema.js';
import { AgentsError } from '../../src/errors.js';
import { runMcpClient } from '../../src/cli/commands/mcp-client.js';
import { createManagedServer } from '../../src/servers/managed-server.js';
import { createFollowRedirectsAuthorizer } from '../../src/servers/oauth/authorizers.js';
import { loginToServer } from '../../src/servers/oauth/login.js';
import { clientMetadataDocument } from '../../src/servers/oauth/oauth-provider.js';
import { STATE_DIR_ENV } from '../../src/servers/oauth/oauth-store.js';
import type { NamedHttpServerConfig } from '../../src/servers/oauth/server-auth.js';
import { agents, makeProjectRepo } from '../cli/helpers.js';
import {
  startOAuthFixture,
  type OAuthFixture,
  type OAuthFixtureOptions,
} from '../fixtures/oauth-fixture.js';
import { FAST_TIMEOUTS, resultText } from './fixture.js';

const fixtures: OAuthFixture[] = [];
let stateDir: string;
const savedStateDir = process.env[STATE_DIR_ENV];
const follow = createFollowRedirectsAuthorizer();

async function fixtureWith(options: OAuthFixtureOptions = {}): Promise<OAuthFixture> {
  const fixture = await startOAuthFixture(options);
  fixtures.push(fixture);
  return fixture;
}

beforeEach(async () => {
  stateDir = await mkdtemp(join(tmpdir(), 'agents-oauth26-'));
  process.env[STATE_DIR_ENV] = stateDir;
});

afterEach(async () => {
  await Promise.all(fixtures.splice(0).map((fixture) => fixture.close()));
  if (savedStateDir === undefined) delete process.env[STATE_DIR_ENV];
  else process.env[STATE_DIR_ENV] = savedStateDir;
  await rm(stateDir, { recursive: true, force: true });
});

function remoteConfig(
  fixture: OAuthFixture,
  extra: Partial<NamedHttpServerConfig> = {},
): NamedHttpServerConfig {
  return {
    name: 'notes',
    transport: 'streamable-http',
    url: fixture.url.href,
    trusted: true,
    timeouts: { ...FAST_TIMEOUTS },
    ...extra,
  } as NamedHttpServerConfig;
}

async function stateText(): Promise<string> {
  const files = await readdir(join(stateDir, 'oauth'));
  expect(files).toHaveLength(1);
  return readFile(join(stateDir, 'oauth', files[0] as string), 'utf8');
}

const failureOf = (promise: Promise<unknown>): Promise<unknown> =>
  promise.then(
    () => undefined,
    (error: unknown) => error,
  );

describe('OAuth, 2026-07-28 client behaviour', () => {
  it('registers as a native application and accepts the matching RFC 9207 iss', async () => {
    const fixture = await fixtureWith({ issInRedirect: 'correct', advertiseIss: true });
    const result = await loginToServer(remoteConfig(fixture), { authorize: follow });
    expect(result.how).toBe('login');
    expect(fixture.stats.registrations).toHaveLength(1);
    expect(fixture.stats.registrationRequests[0]).toMatchObject({ application_type: 'native' });
    expect(fixture.stats.tokenRequests.map((request) => request.grantType)).toEqual([
      'authorization_code',
    ]);
  });

  it('refuses an authorization response from another issuer, naming both, and never exchanges the code', async () => {
    const fixture = await fixtureWith({ issInRedirect: 'wrong' });
    const failure = await failureOf(loginToServer(remoteConfig(fixture), { authorize: follow }));
    expect(AgentsError.hasCode(failure, 'AUTH_REQUIRED')).toBe(true);
    const error = failure as AgentsError;
    expect(error.message).toContain(`"https://evil.example"`);
    expect(error.message).toContain(JSON.stringify(fixture.issuer.href));
    expect(error.message).toContain('RFC 9207');
    expect(error.details).toMatchObject({
      expectedIssuer: fixture.issuer.href,
      receivedIssuer: 'https://evil.example',
    });
    expect(fixture.stats.authorizations).toHaveLength(1);
    expect(fixture.stats.tokenRequests).toHaveLength(0);
    expect(await stateText()).not.toContain('access_token');

    // Advertised but missing is refused too; the one-off client says so under the same code.
    const silent = await fixtureWith({ issInRedirect: 'omit', advertiseIss: true });
    const missing = await failureOf(runMcpClient(silent.url, { authorize: follow }));
    expect(AgentsError.hasCode(missing, 'AUTH_REQUIRED')).toBe(true);
    expect((missing as Error).message).toContain('names issuer (none)');
    expect(silent.stats.tokenRequests).toHaveLength(0);
  });

  it('steps up with the union of held and demanded scopes (CLI session and login --scope)', async () => {
    // This server's 403 names only the new scope: a client that asked for it alone would lose `mcp`.
    const fixture = await fixtureWith({ stepUpChallenge: 'new-only' });
    const report = await runMcpClient(fixture.url, { authorize: follow, callAll: true });
    expect(report.calls.map((call) => `${call.tool}:${call.outcome}`).sort()).toEqual([
      'whoami:ok',
      'write_note:ok',
    ]);
    expect(fixture.stats.authorizations.map((entry) => [...entry.scopes].sort().join(' '))).toEqual(
      ['mcp', 'mcp notes:write'],
    );

    const other = await fixtureWith({ stepUpChallenge: 'new-only' });
    await loginToServer(remoteConfig(other), { authorize: follow });
    const widened = await loginToServer(remoteConfig(other), {
      authorize: follow,
      scope: 'notes:write',
    });
    expect(widened.how).toBe('login');
    expect(widened.scope?.split(' ').sort()).toEqual(['mcp', 'notes:write']);
    expect(other.stats.authorizations.at(-1)?.scopes.sort()).toEqual(['mcp', 'notes:write']);
    // Asking again for a scope already held does not bother the person.
    const again = await loginToServer(remoteConfig(other), { authorize: follow, scope: 'mcp' });
    expect(again.how).toBe('stored');
    expect(other.stats.authorizations).toHaveLength(2);
  });

  it('re-registers when the server moves to another authorization server, never presenting the old client', async () => {
    const first = await fixtureWith();
    const second = await fixtureWith();
    await loginToServer(remoteConfig(first), { authorize: follow });
    const oldClientId = first.stats.registrations[0]?.client_id as string;
    expect(await stateText()).toContain(oldClientId);

    first.useAuthorizationServer(second);
    // Unattended: nobody can log in, so it stops and says why, without registering anywhere.
    const server = createManagedServer(remoteConfig(first) as NamedServerConfig, {
      runDir: null,
    });
    const failure = await failureOf(server.start());
    await server.close();
    expect(AgentsError.hasCode(failure, 'AUTH_REQUIRED')).toBe(true);
    expect((failure as Error).message).toContain(
      `its authorization server changed from ${JSON.stringify(first.issuer.href)} to ${JSON.stringify(second.issuer.href)}`,
    );
    expect((failure as Error).message).toContain('agents server login notes');
    expect(second.stats.registrations).toHaveLength(0);
    expect(second.stats.tokenRequests).toHaveLength(0);

    // The login registers at the new server; the old registration is dropped from disk.
    const result = await loginToServer(remoteConfig(first), { authorize: follow });
    expect(result.how).toBe('login');
    expect(second.stats.registrations).toHaveLength(1);
    expect(second.stats.authorizations.map((entry) => entry.clientId)).not.toContain(oldClientId);
    expect(second.stats.tokenRequests.map((entry) => entry.clientId)).not.toContain(oldClientId);
    expect(first.stats.authorizations).toHaveLength(1);
    const state = await stateText();
    expect(state).not.toContain(oldClientId);
    expect(state).toContain(second.stats.registrations[0]?.client_id as string);

    await using after = createManagedServer(remoteConfig(first) as NamedServerConfig, {
      runDir: null,
    });
    await after.start();
    expect(resultText(await after.callTool('whoami', {}, {}))).toContain(
      second.stats.registrations[0]?.client_id as string,
    );
  });

  it('uses a client ID metadata document where the server supports one, else registers dynamically', async () => {
    const documentUrl = 'https://agents.example/oauth/client.json';
    const document = clientMetadataDocument(documentUrl);
    expect(document).toMatchObject({
      client_id: documentUrl,
      application_type: 'native',
      redirect_uris: ['http://127.0.0.1/callback'],
      token_endpoint_auth_method: 'none',
    });
    const cimd = await fixtureWith({ clientMetadataDocuments: true });
    cimd.hostClientMetadata(documentUrl, document);
    const withUrl = remoteConfig(cimd, {
      oauth: { grant: 'authorization_code', clientMetadataUrl: documentUrl },
    });
    const result = await loginToServer(withUrl, { authorize: follow });
    expect(result.how).toBe('login');
    expect(cimd.stats.registrations).toHaveLength(0);
    expect(cimd.stats.authorizations[0]?.clientId).toBe(documentUrl);
    expect(cimd.stats.tokenRequests[0]?.clientId).toBe(documentUrl);

    // The same config against a server without document support falls back to registration.
    const dcr = await fixtureWith();
    await loginToServer(
      remoteConfig(dcr, {
        name: 'plain',
        oauth: { grant: 'authorization_code', clientMetadataUrl: documentUrl },
      }),
      {
        authorize: follow,
      },
    );
    expect(dcr.stats.registrations).toHaveLength(1);
    expect(dcr.stats.authorizations[0]?.clientId).not.toBe(documentUrl);

    // No document URL and no registration endpoint: a config error naming what to set.
    const closed = await fixtureWith({ clientMetadataDocuments: true, registration: false });
    const failure = await failureOf(
      loginToServer(remoteConfig(closed, { name: 'closed' }), { authorize: follow }),
    );
    expect(AgentsError.hasCode(failure, 'CONFIG_INVALID')).toBe(true);
    expect((failure as Error).message).toContain('oauth.clientMetadataUrl');
    expect(closed.stats.authorizations).toHaveLength(0);
  });

  it('server login --client-metadata prints the document to serve; the URL must be https with a path', async () => {
    const dir = await makeProjectRepo('agents-cimd-');
    try {
      const servers = join(dir, '.agents', 'servers');
      await mkdir(servers, { recursive: true });
      const write = (url: string) =>
        writeFile(
          join(servers, 'notes.yaml'),
          `transport: streamable-http\nurl: https://mcp.example/mcp\noauth:\n  clientMetadataUrl: ${url}\n  redirectPort: 8765\n`,
        );
      await write('https://agents.example/oauth/client.json');
      const printed = await agents(dir, 'server', 'login', 'notes', '--client-metadata');
      expect(printed.stderr).toBe('');
      expect(printed.code).toBe(0);
      expect(JSON.parse(printed.stdout)).toEqual(
        clientMetadataDocument('https://agents.example/oauth/client.json', 8765),
      );
      expect(JSON.parse(printed.stdout).redirect_uris).toEqual(['http://127.0.0.1:8765/callback']);

      await write('http://agents.example/oauth/client.json');
      const refused = await agents(dir, 'server', 'login', 'notes', '--client-metadata');
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toContain('oauth.clientMetadataUrl');
      expect(refused.stderr).toContain('must be an https URL with a path');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
