import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createManagedServer, type ManagedServer } from '../../src/servers/managed-server.js';
import { knownServerVerdicts } from '../../src/registry/known-servers.js';
import { inferCapabilities } from '../../src/mcp/capabilities.js';

const require = createRequire(import.meta.url);
function binOf(packageName: string): string {
  const manifestPath = require.resolve(`${packageName}/package.json`);
  const manifest = require(manifestPath) as { bin: Record<string, string> };
  return join(dirname(manifestPath), Object.values(manifest.bin)[0]!);
}

const open: ManagedServer[] = [];
const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((server) => server.close()));
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

async function started(name: string, args: string[]): Promise<ManagedServer> {
  const server = createManagedServer({
    name,
    transport: 'stdio',
    command: process.execPath,
    args,
    trusted: false,
  });
  open.push(server);
  await server.start();
  return server;
}

function readOnlyOf(server: ManagedServer, tool: string) {
  const entry = server.entries().find((item) => item.descriptor.originalName === tool);
  expect(entry, tool).toBeDefined();
  return entry!.descriptor.capabilities.readOnly;
}

describe('reviewed verdicts of well-known servers (provenance known-server)', () => {
  it('filesystem: directory_tree reads (no approval in ask mode), write_file still writes', async () => {
    const root = await realpath(await mkdtemp(join(tmpdir(), 'agents-known-fs-')));
    dirs.push(root);
    const fs = await started('fs', [binOf('@modelcontextprotocol/server-filesystem'), root]);
    expect(readOnlyOf(fs, 'directory_tree')).toMatchObject({
      value: true,
      source: 'known-server',
      reason: expect.stringContaining('@modelcontextprotocol/server-filesystem'),
    });
    expect(readOnlyOf(fs, 'write_file')).toMatchObject({ value: false, source: 'name-heuristic' });
    expect(readOnlyOf(fs, 'move_file').value).toBe(false);
  });

  it('everything: echo reads; get-env (secrets) and toggles are left to the conservative rule', async () => {
    const everything = await started('everything', [
      binOf('@modelcontextprotocol/server-everything'),
      'stdio',
    ]);
    expect(readOnlyOf(everything, 'echo')).toMatchObject({ value: true, source: 'known-server' });
    expect(readOnlyOf(everything, 'get-env').source).not.toBe('known-server');
    expect(readOnlyOf(everything, 'toggle-simulated-logging').value).toBe(false);
  });
});

describe('knownServerVerdicts', () => {
  it('needs both the launched package and its serverInfo name: a look-alike is not matched', () => {
    const real = ['npx', '-y', '@modelcontextprotocol/server-memory'];
    expect(knownServerVerdicts(real, 'memory-server')?.('open_nodes')).toMatchObject({
      readOnly: true,
    });
    expect(knownServerVerdicts(real, 'memory-server')?.('delete_entities')).toBeUndefined();
    // Says it is the memory server, but something else was launched.
    expect(knownServerVerdicts(['node', 'my-server.js'], 'memory-server')).toBeUndefined();
    // The package, wrapped by something that names itself differently.
    expect(knownServerVerdicts(real, 'memory-proxy')).toBeUndefined();
    expect(knownServerVerdicts(real, undefined)).toBeUndefined();
  });

  it('never overrules write evidence or an override', () => {
    const known = { readOnly: true as const, reason: 'reviewed' };
    expect(
      inferCapabilities({ name: 'open_nodes', annotations: { readOnlyHint: false }, known })
        .readOnly,
    ).toMatchObject({ value: false, source: 'annotation' });
    expect(inferCapabilities({ name: 'write_nodes', known }).readOnly.value).toBe(false);
    expect(
      inferCapabilities({
        name: 'open_nodes',
        known,
        override: { capabilities: { writes: true } },
      }).readOnly,
    ).toMatchObject({ value: false, source: 'override' });
    expect(inferCapabilities({ name: 'open_nodes', known }).readOnly).toMatchObject({
      value: true,
      source: 'known-server',
    });
  });
});
