import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expandEnvReferences, expandEnvReferenceMap } from '../../src/config/env-references.js';
import {
  assertSafeAuthorizationUrl,
  canOpenBrowser,
  createBrowserAuthorizer,
} from '../../src/servers/oauth/authorizers.js';
import { startLoopbackReceiver } from '../../src/servers/oauth/loopback-receiver.js';
import { defaultStateDir, oauthStateFile } from '../../src/servers/oauth/oauth-store.js';

describe('env references', () => {
  it('resolves ${VAR} and names the variable and field when it is not set', () => {
    const env = { TOKEN: 'abc' };
    expect(expandEnvReferences('Bearer ${TOKEN}', 'headers.Authorization', env)).toBe('Bearer abc');
    expect(expandEnvReferences('no refs $HOME ${', 'x', env)).toBe('no refs $HOME ${');
    expect(() => expandEnvReferences('${MISSING}', 'Server "a" env.KEY', env)).toThrow(
      'Server "a" env.KEY refers to ${MISSING}, which is not set in the environment; export MISSING=... and retry.',
    );
    expect(expandEnvReferenceMap({ A: '${TOKEN}', B: 'plain' }, 'env', env)).toEqual({
      A: 'abc',
      B: 'plain',
    });
  });
});

describe('state folder', () => {
  it('follows AGENTS_STATE_DIR, then XDG_STATE_HOME, then ~/.local/state', () => {
    expect(defaultStateDir({ AGENTS_STATE_DIR: '/s' })).toBe('/s');
    expect(defaultStateDir({ XDG_STATE_HOME: '/x' })).toBe(join('/x', 'agents'));
    expect(defaultStateDir({})).toMatch(/\.local\/state\/agents$/);
  });

  it('keys a server’s file by name and URL, so a changed URL never gets old tokens', () => {
    const a = oauthStateFile({ serverName: 'gh', serverUrl: 'https://a/mcp', stateDir: '/s' });
    const b = oauthStateFile({ serverName: 'gh', serverUrl: 'https://b/mcp', stateDir: '/s' });
    expect(a).toMatch(/^\/s\/oauth\/gh-[0-9a-f]{16}\.json$/);
    expect(a).not.toBe(b);
  });
});

describe('authorizers', () => {
  it('refuses authorization URLs that are not plain http(s) (CVE-2025-6514 pattern)', () => {
    for (const bad of ['file:///etc/passwd', 'javascript:alert(1)', 'https://u:p@as.example/']) {
      expect(() => assertSafeAuthorizationUrl(new URL(bad))).toThrow(/Refusing to open/);
    }
    expect(() =>
      assertSafeAuthorizationUrl(new URL('https://as.example/authorize?x=$(id)')),
    ).not.toThrow();
  });

  it('opens a browser only with a display, and always prints the URL', async () => {
    expect(canOpenBrowser({}, 'linux')).toBe(false);
    expect(canOpenBrowser({ DISPLAY: ':0' }, 'linux')).toBe(true);
    expect(canOpenBrowser({}, 'darwin')).toBe(true);
    const lines: string[] = [];
    await createBrowserAuthorizer({
      mode: 'browser',
      print: (line) => lines.push(line),
      env: {},
      platform: 'linux',
    })(new URL('https://as.example/authorize?client_id=1'));
    expect(lines).toEqual([
      'Open this URL in a browser to log in:\n  https://as.example/authorize?client_id=1',
    ]);
  });
});

describe('loopback receiver', () => {
  it('listens on 127.0.0.1, drops a redirect with another state, and takes the matching code', async () => {
    await using receiver = await startLoopbackReceiver();
    expect(receiver.redirectUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);
    const waiting = receiver.waitForCode('expected-state', { timeoutMs: 5_000 });
    await fetch(`${receiver.redirectUrl}?code=forged&state=other`);
    await fetch(`${receiver.redirectUrl}?code=real&state=expected-state`);
    await expect(waiting).resolves.toBe('real');
  });

  it('turns an error redirect into AUTH_REQUIRED and times out when nothing comes', async () => {
    await using receiver = await startLoopbackReceiver();
    const denied = receiver.waitForCode('s', { timeoutMs: 5_000 }).then(
      () => undefined,
      (error: unknown) => error,
    );
    const response = await fetch(`${receiver.redirectUrl}?error=access_denied&state=s`);
    expect(response.status).toBe(400);
    expect(await denied).toMatchObject({
      code: 'AUTH_REQUIRED',
      message: 'The authorization server refused the login: access_denied.',
    });
    await expect(receiver.waitForCode('s', { timeoutMs: 50 })).rejects.toMatchObject({
      code: 'TIMEOUT',
    });
  });
});
