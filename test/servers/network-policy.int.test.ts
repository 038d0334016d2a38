/**
 * Issue 28: a confined server with host lists reaches the outside only through the library's
 * proxy. Real processes under real bubblewrap; every address is loopback: a local HTTP server
 * (127.0.0.2) stands in for the allowed host and a local "exfiltration" listener (127.0.0.3, TCP
 * and UDP) for the denied one; the proxy's test map names them. Metadata and host-address
 * targets are refused by the proxy before any connection is made.
 */
import { execFileSync } from 'node:child_process';
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createActor } from '../../src/actors/actor.js';
import type { ActorRunEvent } from '../../src/actors/actor-types.js';
import type { AuditEntry } from '../../src/policy/audit-entry.js';
import { probeBubblewrap } from '../../src/confinement/bubblewrap.js';
import { createServerManager } from '../../src/servers/server-manager.js';
import { createWorkspaceStore } from '../../src/workspace/store.js';
import type { WorkspaceStore } from '../../src/workspace/workspace-types.js';

const SERVER = join(import.meta.dirname, '..', 'fixtures', 'network-server.mjs');
const FILES_SERVER = join(import.meta.dirname, '..', 'fixtures', 'hostile-server.mjs');
const BUBBLEWRAP = probeBubblewrap({ network: false });
const MUST_CONFINE = process.env['AGENTS_REQUIRE_CONFINEMENT'] === '1';
const HAS_CURL = (() => {
  try {
    execFileSync('curl', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();
/** A non-loopback address of this machine (refused by the proxy, unreachable in the namespace). */
const OWN_ADDRESS = Object.values(networkInterfaces())
  .flat()
  .find((entry) => entry !== undefined && !entry.internal && entry.family === 'IPv4')?.address;

const LISTS = { allow: ['*.example.test'], deny: ['evil.example.test'] };

describe.runIf(BUBBLEWRAP.available || MUST_CONFINE)('network host lists (real bubblewrap)', () => {
  let scratch: string;
  let store: WorkspaceStore;
  let allowed: HttpServer;
  let allowedPort: number;
  const allowedRequests: string[] = [];
  let exfil: Server;
  let exfilPort: number;
  let exfilConnections = 0;
  let exfilUdp: UdpSocket;
  let udpPort: number;
  let udpMessages = 0;

  beforeAll(async () => {
    scratch = await realpath(await mkdtemp(join(tmpdir(), 'agents-network-')));
    allowed = createHttpServer((req, res) => {
      allowedRequests.push(req.url ?? '');
      res.end(`hello from ${req.headers.host}`);
    });
    await new Promise<void>((resolve) => allowed.listen(0, '127.0.0.2', resolve));
    allowedPort = (allowed.address() as AddressInfo).port;
    exfil = createServer((socket) => {
      exfilConnections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => exfil.listen(0, '127.0.0.3', resolve));
    exfilPort = (exfil.address() as AddressInfo).port;
    exfilUdp = createSocket('udp4');
    exfilUdp.on('message', () => udpMessages++);
    await new Promise<void>((resolve) => exfilUdp.bind(0, '127.0.0.3', resolve));
    udpPort = exfilUdp.address().port;
    store = createWorkspaceStore(join(scratch, 'project', '.agents'));
    await store.put('server', 'fetcher', {
      transport: 'stdio',
      command: process.execPath,
      args: [SERVER],
      network: LISTS,
    });
    await store.put('skill', 'net', { mcpServers: ['fetcher'] });
    // The "done when" actor: a files server with no network beside the fetch server.
    await store.put('server', 'files', {
      transport: 'stdio',
      command: process.execPath,
      args: [FILES_SERVER],
      network: false,
    });
    await store.put('skill', 'both', { mcpServers: ['files', 'fetcher'] });
  });

  afterAll(async () => {
    allowed?.close();
    exfil?.close();
    exfilUdp?.close();
    await rm(scratch, { recursive: true, force: true });
  });

  async function runActor(
    name: string,
    calls: Array<{ how: string; target: string } | { name: string; args: Record<string, unknown> }>,
    sandbox: Record<string, unknown> = {},
    bwrapPath?: string,
    skill = 'net',
  ) {
    const script = [
      ...calls.map((call, index) => ({
        tool_calls: [
          'how' in call
            ? { name: 'probe', args: call, id: `probe_${index}` }
            : { ...call, id: `call_${index}` },
        ],
      })),
      { content: 'done' },
    ];
    await writeFile(join(scratch, `${name}.json`), JSON.stringify(script));
    await store.put('actor', name, {
      skills: [skill],
      model: `scripted:${join(scratch, `${name}.json`)}`,
      policy: { mode: 'auto' },
      checkpointer: { type: 'memory' },
      sandbox: { enabled: false, confine: 'required', ...sandbox },
    });
    const auditFile = join(scratch, `${name}.audit.jsonl`);
    const actor = await createActor({
      name,
      workspace: store,
      auditFile,
      confinement: {
        ...(bwrapPath === undefined
          ? {}
          : { backend: { type: 'bubblewrap' as const, path: bwrapPath } }),
        proxy: {
          testHosts: { 'api.example.test': '127.0.0.2', 'evil.example.test': '127.0.0.3' },
          // Resolved normally (no waiver): the address check must refuse these.
          resolve: async (host) => {
            if (host === 'meta.example.test') return ['169.254.169.254'];
            if (host === 'mapped.example.test') return ['::ffff:169.254.169.254'];
            if (host === 'self.example.test') return [OWN_ADDRESS ?? '127.0.0.1'];
            if (host === 'loop.example.test') return ['127.0.0.2'];
            throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
          },
        },
      },
    });
    const results: string[] = [];
    try {
      await actor.activate();
      for await (const event of actor.run('go') as AsyncGenerator<ActorRunEvent>) {
        if (event.type === 'tool-call-end') results.push(event.text);
      }
    } finally {
      await actor.deactivate();
    }
    const audit = (await readFile(auditFile, 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as AuditEntry);
    return { results, audit };
  }

  it(
    'only the allowed host is reached, only through the proxy; every proxy refusal is audited with its tool call',
    { timeout: 120_000 },
    async () => {
      allowedRequests.length = 0;
      const api = `api.example.test:${allowedPort}`;
      const evil = `evil.example.test:${exfilPort}`;
      const calls = [
        // 0-3: the allowed host through the proxy, every protocol.
        { how: 'proxy-http', target: `http://${api}/plain` },
        { how: 'proxy-connect', target: api },
        { how: 'socks', target: api },
        { how: HAS_CURL ? 'curl' : 'proxy-http', target: `http://${api}/curl` },
        // 4-7: the denied host through the proxy.
        { how: 'proxy-http', target: `http://${evil}/` },
        { how: 'proxy-connect', target: evil },
        { how: 'socks', target: evil },
        { how: HAS_CURL ? 'curl' : 'proxy-http', target: `http://${evil}/` },
        // 8-12: around the proxy: no network of its own.
        { how: 'fetch', target: `http://127.0.0.3:${exfilPort}/` },
        { how: 'tcp', target: `127.0.0.3:${exfilPort}` },
        { how: 'udp', target: `127.0.0.3:${udpPort}` },
        { how: 'dns', target: 'evil.example.test' },
        { how: 'tcp', target: `169.254.169.254:80` },
        // 13-18: names the lists allow but whose addresses are refused, and IP literals.
        { how: 'proxy-http', target: 'http://meta.example.test/latest/meta-data/' },
        { how: 'proxy-connect', target: 'mapped.example.test:80' },
        { how: 'proxy-http', target: `http://self.example.test:${exfilPort}/` },
        { how: 'socks', target: `loop.example.test:${allowedPort}` },
        { how: 'proxy-connect', target: `169.254.169.254:80` },
        { how: 'socks', target: `127.0.0.3:${exfilPort}` },
        // 19: the host's own address, directly.
        { how: 'tcp', target: `${OWN_ADDRESS ?? '127.0.0.1'}:${exfilPort}` },
        { how: 'env', target: '' },
      ];
      const { results, audit } = await runActor('exfil', calls);
      expect(results).toHaveLength(calls.length);
      expect(results.slice(0, 4)).toEqual([
        `OK 200 hello from ${api}`,
        `OK hello from api.example.test`,
        `OK hello from api.example.test`,
        HAS_CURL ? `OK hello from ${api}` : `OK 200 hello from ${api}`,
      ]);
      for (const [index, text] of results.slice(4, 20).entries()) {
        // udp "sent" into the namespace's own loopback is the one send that "works": nothing
        // receives it (asserted below).
        if (index + 4 === 10) continue;
        expect(text, `call ${index + 4} (${calls[index + 4]!.how})`).toMatch(/^FAIL /);
      }
      expect(results[4]).toMatch(/403 agents network proxy: denied by "evil.example.test"/);
      expect(results[8]).toMatch(/ECONNREFUSED|ENETUNREACH/);
      expect(results[12]).toMatch(/ENETUNREACH/);
      expect(results[20]).toContain('"HTTP_PROXY":"http://127.0.0.1:3128"');
      // Nothing reached the exfiltration listener; the allowed server got the four requests.
      expect(exfilConnections).toBe(0);
      expect(udpMessages).toBe(0);
      expect(allowedRequests.sort()).toEqual(['/', '/', '/curl', '/plain'].sort());

      const network = audit.filter((entry) => entry.event === 'network');
      const denied = network.filter((entry) => entry.network!.decision === 'deny');
      const allowedEntries = network.filter((entry) => entry.network!.decision === 'allow');
      // Filed under the server, never under a call (the proxy cannot tell which of the server's
      // processes connected), with the call in flight then as "during".
      for (const entry of network) {
        expect(entry.toolId).toBe('network:fetcher');
        expect(entry.toolCallId).toBeUndefined();
      }
      expect(allowedEntries.map((entry) => entry.network!.during?.join())).toEqual([
        'probe_0',
        'probe_1',
        'probe_2',
        'probe_3',
      ]);
      // Each refusal the proxy saw, with the tool call it belongs to and why.
      const byCall = new Map(
        denied.map((entry) => [entry.network!.during?.join(), entry.network!]),
      );
      for (const index of [4, 5, 6, 7])
        expect(byCall.get(`probe_${index}`)?.reason).toMatch(/denied by "evil.example.test"/);
      expect(byCall.get('probe_13')?.reason).toMatch(/169\.254\.169\.254, a metadata address/);
      expect(byCall.get('probe_14')?.reason).toMatch(/a metadata address/);
      expect(byCall.get('probe_15')?.reason).toMatch(/a (host-address|reserved|private) address/);
      expect(byCall.get('probe_16')?.reason).toMatch(/a loopback address/);
      expect(byCall.get('probe_17')?.reason).toMatch(/on no allow list/);
      expect(byCall.get('probe_18')?.reason).toMatch(/on no allow list/);
      expect(denied).toHaveLength(10);
      for (const entry of denied) expect(entry.actor).toBe('exfil');
    },
  );

  it(
    'an actor whose files server has no network and whose fetch server may reach only *.example.test runs end to end',
    { timeout: 120_000 },
    async () => {
      // A host listener on 127.0.0.1: the files server's namespace has its own loopback.
      let leaks = 0;
      const local = createServer((socket) => {
        leaks++;
        socket.end('leak');
      });
      await new Promise<void>((resolve) => local.listen(0, '127.0.0.1', resolve));
      const localPort = (local.address() as AddressInfo).port;
      try {
        const { results, audit } = await runActor(
          'both',
          [
            { name: 'connect', args: { port: String(localPort) } },
            { how: 'proxy-http', target: `http://api.example.test:${allowedPort}/both` },
            { how: 'proxy-http', target: `http://evil.example.test:${exfilPort}/` },
          ],
          {},
          undefined,
          'both',
        );
        expect(results[0]).toBe('connect: ECONNREFUSED');
        expect(results[1]).toBe(`OK 200 hello from api.example.test:${allowedPort}`);
        expect(results[2]).toMatch(/^FAIL 403 /);
        expect(leaks).toBe(0);
        const network = audit.filter((entry) => entry.event === 'network');
        expect(
          network.map((entry) => [
            entry.network!.during?.join(),
            entry.serverName,
            entry.network!.decision,
          ]),
        ).toEqual([
          ['probe_1', 'fetcher', 'allow'],
          ['probe_2', 'fetcher', 'deny'],
        ]);
      } finally {
        local.close();
      }
    },
  );

  it(
    'a server with host lists never starts unconfined (confine off, or bubblewrap missing under auto): it refuses, naming why and the fix',
    { timeout: 60_000 },
    async () => {
      const off = runActor('unconfined', [{ how: 'env', target: '' }], { confine: 'off' });
      await expect(off).rejects.toThrow(
        /Server "fetcher" was not started: it has network host lists.*unconfined here \(sandbox.confine is "off"\).*Install bubblewrap/s,
      );
      const missing = runActor(
        'nobwrap',
        [{ how: 'env', target: '' }],
        { confine: 'auto' },
        join(scratch, 'no-such-bwrap'),
      );
      await expect(missing).rejects.toThrow(
        /Server "fetcher" was not started: it has network host lists.*unconfined here \(bubblewrap \(".*no-such-bwrap"\) was not found/s,
      );
      // The server never ran: nothing was allowed through a proxy.
      const audit = await readFile(join(scratch, 'nobwrap.audit.jsonl'), 'utf8').catch(() => '');
      expect(audit).not.toContain('"decision":"allow"');
    },
  );
});

describe('network host lists with a caller-supplied server manager', () => {
  it('refuses to start: the actor cannot give those servers its proxy', async () => {
    const scratch = await realpath(await mkdtemp(join(tmpdir(), 'agents-network-foreign-')));
    const store = createWorkspaceStore(join(scratch, '.agents'));
    await store.put('server', 'fetcher', {
      transport: 'stdio',
      command: process.execPath,
      args: [SERVER],
      network: LISTS,
    });
    await store.put('skill', 'net', { mcpServers: ['fetcher'] });
    await store.put('actor', 'foreign', {
      skills: ['net'],
      checkpointer: { type: 'memory' },
      sandbox: { enabled: false },
    });
    const manager = createServerManager({ cwd: scratch });
    try {
      const actor = await createActor({
        name: 'foreign',
        workspace: store,
        serverManager: manager,
      });
      await expect(actor.activate()).rejects.toThrow(
        /Actor "foreign" was not started: server\(s\) "fetcher" have network host lists.*serverManager/s,
      );
      // Nothing was started through the foreign manager.
      expect(manager.list()).toEqual([]);
    } finally {
      await manager.close();
      await rm(scratch, { recursive: true, force: true });
    }
  });
});
