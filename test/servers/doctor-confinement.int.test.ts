import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { probeBubblewrap } from '../../src/confinement/bubblewrap.js';
import { createWorkspaceStore } from '../../src/workspace/store.js';
import { agents, makeProjectRepo } from '../cli/helpers.js';
import { FAULT_SERVER } from './fixture.js';

const BUBBLEWRAP = probeBubblewrap();
const MUST_CONFINE = process.env['AGENTS_REQUIRE_CONFINEMENT'] === '1';

describe('agents doctor: confinement (issue 23)', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await makeProjectRepo('agents-doctor-confine-');
    const store = createWorkspaceStore(join(dir, '.agents'));
    await store.put('server', 'fault', {
      transport: 'stdio',
      command: process.execPath,
      args: [FAULT_SERVER, 'normal'],
      sandbox: { readOnly: ['/opt'] },
    });
    await store.put('skill', 'fault', { mcpServers: ['fault'] });
    await store.put('actor', 'coder', { skills: ['fault'], model: 'scripted' });
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('proves with a probe that the state folder is hidden, prints the bwrap line of each actor server and lists exceptions', async () => {
    const json = await agents(dir, 'doctor', '--json');
    const report = JSON.parse(json.stdout) as {
      confinement: {
        found: { available: boolean };
        probe?: { ok: boolean; detail: string };
        actors: Array<{ actor: string; servers: Array<{ server: string; commandLine: string }> }>;
        exceptions: Array<{ server: string; readOnly: string[] }>;
      };
    };
    expect(report.confinement.exceptions).toEqual([
      { server: 'fault', writable: [], readOnly: ['/opt'] },
    ]);
    if (!BUBBLEWRAP.available) {
      expect(MUST_CONFINE).toBe(false);
      expect(report.confinement.found.available).toBe(false);
      return;
    }
    expect(json.code, json.stderr).toBe(0);
    expect(report.confinement.probe).toMatchObject({ ok: true });
    expect(report.confinement.probe!.detail).toMatch(
      /could not read a file planted in the state folder \(ENOENT\)/,
    );
    const [actor] = report.confinement.actors;
    expect(actor!.actor).toBe('coder');
    const line = actor!.servers[0]!.commandLine;
    expect(actor!.servers[0]!.server).toBe('fault');
    // The state folder hidden, the sandbox bound back writable, the server's own command last.
    expect(line).toMatch(/--tmpfs \S+/);
    expect(line).toContain('--bind <SANDBOX> <SANDBOX>');
    expect(line).toContain(`--bind <SANDBOX> ${dir}`);
    expect(line).toContain('--remount-ro');
    expect(line.endsWith(`-- ${process.execPath} ${FAULT_SERVER} normal`)).toBe(true);

    const text = await agents(dir, 'doctor');
    expect(text.stdout).toContain('Probe: OK');
    expect(text.stdout).toMatch(/^Privileges: OK: CapEff 0{16}, no_new_privs, seccomp filter on/m);
    expect(text.stdout).toMatch(/^Namespaces: OK: own user, pid, ipc, mnt/m);
    expect(text.stdout).toMatch(/^Sockets: OK: no Unix socket visible under \/run/m);
    expect(text.stdout).toContain('Actor "coder", server "fault" runs as:');
    expect(text.stdout).toContain('Exception: server "fault" may also use: read-only /opt.');
  }, 60_000);
});
