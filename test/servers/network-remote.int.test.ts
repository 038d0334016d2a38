/**
 * Issue 28: the host lists apply to the library's own connections to remote servers, at
 * connect time and on every redirect hop (loopback servers only; refused hops are never
 * connected to).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentsError } from '../../src/errors.js';
import { createServerTransport } from '../../src/servers/connect.js';
import { resolveConfinement } from '../../src/confinement/confinement.js';
import { compileHostRules } from '../../src/servers/network/host-rules.js';
import type { NetworkDecision } from '../../src/servers/network/proxy-decision.js';
import { guardedFetch } from '../../src/servers/network/remote-guard.js';
import { createServerNetwork } from '../../src/servers/network/server-network.js';

async function listen(
  host: string,
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<{ server: Server; origin: string; hits: string[] }> {
  const hits: string[] = [];
  const server = createServer((req, res) => {
    hits.push(`${req.method} ${req.url} auth=${req.headers.authorization ?? '-'}`);
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return { server, origin: `http://${host}:${(server.address() as AddressInfo).port}`, hits };
}

describe('remote servers: host lists at connect time, redirects included', () => {
  let good: Awaited<ReturnType<typeof listen>>;
  let other: Awaited<ReturnType<typeof listen>>;
  let evil: Awaited<ReturnType<typeof listen>>;

  beforeAll(async () => {
    evil = await listen('127.0.0.3', (_req, res) => res.end('exfiltrated'));
    other = await listen('127.0.0.4', (_req, res) => res.end('other ok'));
    good = await listen('127.0.0.2', (req, res) => {
      const to: Record<string, string> = {
        '/to-evil': `${evil.origin}/stolen`,
        '/to-metadata': 'http://169.254.169.254/latest/meta-data/',
        '/to-other': `${other.origin}/landed`,
        '/loop': '/loop',
      };
      const location = to[req.url ?? ''];
      if (location !== undefined) {
        res.writeHead(307, { location }).end();
        return;
      }
      res.end('good ok');
    });
  });

  afterAll(() => {
    for (const item of [good, other, evil]) item?.server.close();
  });

  // IP literals on the allow list (loopback is allowed only because the entry names it).
  const rules = () =>
    compileHostRules({ allow: [good.origin.slice(7), other.origin.slice(7)], deny: [] });

  it('follows allowed redirects, refuses the others before connecting, and drops credentials across origins', async () => {
    const decisions: NetworkDecision[] = [];
    const guarded = guardedFetch('remote', rules(), { onDecision: (d) => decisions.push(d) });
    const init = { headers: { authorization: 'Bearer secret' } };
    expect(await (await guarded(`${good.origin}/plain`, init)).text()).toBe('good ok');
    expect(await (await guarded(`${good.origin}/to-other`, init)).text()).toBe('other ok');
    expect(other.hits).toEqual(['GET /landed auth=-']);
    for (const path of ['/to-evil', '/to-metadata']) {
      const refused = guarded(`${good.origin}${path}`, init);
      await expect(refused).rejects.toThrow(AgentsError);
      await expect(guarded(`${good.origin}${path}`)).rejects.toThrow(
        /refused by its network lists .*after 1 redirect/,
      );
    }
    await expect(guarded(`${evil.origin}/direct`)).rejects.toThrow(/on no allow list/);
    await expect(guarded(`${good.origin}/loop`)).rejects.toThrow(/more than 5 redirects/);
    expect(evil.hits).toEqual([]);
    const denied = decisions.filter((d) => d.decision === 'deny');
    expect(denied.map((d) => d.host)).toEqual([
      '127.0.0.3',
      '127.0.0.3',
      '169.254.169.254',
      '169.254.169.254',
      '127.0.0.3',
    ]);
    expect(denied.every((d) => d.protocol === 'remote' && d.serverName === 'remote')).toBe(true);
  });

  it('connects to the address it checked: a name is resolved once per hop, never again by the connection', async () => {
    const port = good.origin.split(':')[2]!;
    const answers: string[][] = [];
    const resolve = async (host: string): Promise<string[]> => {
      // A rebinding name: a public address for the check, loopback for any later lookup.
      const answer = answers.length === 0 ? ['93.184.215.14'] : ['127.0.0.3'];
      answers.push(answer);
      if (host !== 'rebind.example.test') throw new Error(`unexpected lookup of ${host}`);
      return answer;
    };
    const guarded = guardedFetch(
      'remote',
      compileHostRules({ allow: [`rebind.example.test:${port}`], deny: [] }),
      { resolve },
    );
    // Whatever becomes of the connection to the checked public address (no route here), it
    // never reaches the loopback server a second lookup would have named.
    await guarded(`http://rebind.example.test:${port}/`, {
      signal: AbortSignal.timeout(3_000),
    }).catch(() => undefined);
    expect(answers).toHaveLength(1);
    expect(evil.hits).toEqual([]);
    // A test map stands a name in for a loopback address: the request arrives there by name
    // (Host header), with no system lookup of the .test name (which would fail).
    const seen: string[] = [];
    const named = await listen('127.0.0.5', (req, res) => {
      seen.push(`${req.method} ${req.headers.host} ${req.headers['content-type']}`);
      req.resume();
      req.on('end', () => res.writeHead(201, { 'x-one': 'a' }).end('posted'));
    });
    try {
      const namedPort = named.origin.split(':')[2]!;
      const viaMap = guardedFetch(
        'remote',
        compileHostRules({ allow: [`api.example.test:${namedPort}`], deny: [] }),
        { testHosts: { 'api.example.test': '127.0.0.5' } },
      );
      const response = await viaMap(`http://api.example.test:${namedPort}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"jsonrpc":"2.0"}',
      });
      expect([response.status, response.headers.get('x-one'), await response.text()]).toEqual([
        201,
        'a',
        'posted',
      ]);
      expect(seen).toEqual([`POST api.example.test:${namedPort} application/json`]);
    } finally {
      named.server.close();
    }
  });

  it('a remote server config gets the guard through the confinement hook (SDK client, streamable HTTP)', async () => {
    const hook = createServerNetwork({
      actor: true,
      servers: new Map([['remote', { allow: [good.origin.slice(7)], deny: [] }]]),
    });
    const confinement = resolveConfinement(
      { mode: 'off', networkHook: hook },
      { sandboxRoot: process.cwd() },
    );
    const remote = createServerTransport(
      {
        name: 'remote',
        transport: 'streamable-http',
        url: `${good.origin}/to-evil`,
        trusted: false,
      },
      { confinement },
    );
    const client = new Client({ name: 't', version: '1' });
    try {
      await expect(client.connect(remote.transport)).rejects.toThrow(
        /refused by its network lists/,
      );
    } finally {
      await remote.close();
    }
    expect(evil.hits).toEqual([]);
  });
});
