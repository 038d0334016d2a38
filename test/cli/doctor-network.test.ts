import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { actorNetworkReports, formatActorNetworkReports } from '../../src/cli/doctor-network.js';
import { probeBubblewrap } from '../../src/confinement/bubblewrap.js';
import { createWorkspaceStore } from '../../src/workspace/store.js';
import type { WorkspaceStore } from '../../src/workspace/workspace-types.js';

describe('agents doctor: each actor’s effective network', () => {
  let scratch: string;
  let store: WorkspaceStore;

  beforeEach(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'agents-doctor-net-'));
    store = createWorkspaceStore(join(scratch, '.agents'));
    const server = { transport: 'stdio' as const, command: process.execPath, args: ['s.js'] };
    await store.put('server', 'files', { ...server, network: false });
    await store.put('server', 'fetch', {
      ...server,
      network: { allow: ['*.example.test'], deny: ['evil.example.test'] },
    });
    await store.put('server', 'plain', server);
    await store.put('server', 'remote', {
      transport: 'streamable-http',
      url: 'https://mcp.example.test/mcp',
    });
    await store.put('skill', 'web', { mcpServers: ['files', 'fetch', 'plain', 'remote'] });
    await store.put('actor', 'reader', {
      skills: ['web'],
      sandbox: { network: { allow: ['docs.example.test'] } },
    });
    await store.put('actor', 'offline', { skills: ['web'], sandbox: { confine: 'off' } });
  });

  afterEach(() => rm(scratch, { recursive: true, force: true }));

  it('shows per server where the setting comes from, and refuses lists that cannot be enforced', async () => {
    const reports = await actorNetworkReports(store);
    const reader = reports.find((report) => report.actor === 'reader')!;
    expect(reader.servers.map((line) => [line.server, line.from])).toEqual([
      ['files', 'server'],
      ['fetch', 'server'],
      ['plain', 'actor'],
      ['remote', 'actor'],
    ]);
    const text = formatActorNetworkReports(reports).join('\n');
    expect(text).toContain('files (stdio, from the server): none (loopback only, when confined)');
    expect(text).toMatch(
      /fetch \(stdio, from the server\): only through the proxy: allow \*\.example\.test; deny evil\.example\.test/,
    );
    expect(text).toMatch(
      /plain \(stdio, from the actor\): only through the proxy: allow docs\.example\.test/,
    );
    expect(text).toMatch(
      /remote \(streamable-http, from the actor\): checked at connect time and on redirects: allow docs\.example\.test/,
    );
    // confine: off cannot enforce lists: doctor says the server refuses to start.
    const offline = reports.find((report) => report.actor === 'offline')!;
    expect(offline.problems).toEqual([
      'server "fetch" has host lists but cannot be confined: sandbox.confine is "off"',
    ]);
    if (!probeBubblewrap({ network: false }).available) {
      expect(reader.problems.join('\n')).toMatch(/cannot be confined/);
    } else {
      expect(reader.problems).toEqual([]);
    }
  });

  it.runIf(probeBubblewrap({ network: false }).available)(
    'proves each confined server’s network with probe connections that must be refused',
    { timeout: 60_000 },
    async () => {
      const reports = await actorNetworkReports(store, { probe: true });
      const reader = reports.find((report) => report.actor === 'reader')!;
      const probes = new Map(reader.servers.map((line) => [line.server, line.probe]));
      // Open network and remote servers are not probed.
      expect(probes.get('remote')).toBeUndefined();
      expect(probes.get('files')).toMatchObject({ ok: true });
      expect(probes.get('files')!.detail).toMatch(
        /^direct 169\.254\.169\.254:80: (ENETUNREACH|ECONNREFUSED)/,
      );
      expect(probes.get('fetch')).toMatchObject({ ok: true });
      expect(probes.get('fetch')!.detail).toMatch(
        /proxy CONNECT 169\.254\.169\.254:80: HTTP\/1\.1 403 .*proxy CONNECT evil\.example\.test:443: HTTP\/1\.1 403/,
      );
      const text = formatActorNetworkReports(reports).join('\n');
      expect(text).toMatch(/probe PASS \(refused\): direct 169\.254\.169\.254:80/);
      expect(reader.problems).toEqual([]);
      // confine: off runs nothing: no probe to prove (the refusal to start is the problem shown).
      const offline = reports.find((report) => report.actor === 'offline')!;
      expect(offline.servers.every((line) => line.probe === undefined)).toBe(true);
    },
  );
});
