import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import type { NamedServerConfig } from '../../src/config/server-schema.js';
import { parsePolicy } from '../../src/config/policy-schema.js';
import { decide, effectiveCapabilities } from '../../src/policy/decide.js';
import { createManagedServer } from '../../src/servers/managed-server.js';
import type { ServerTransport } from '../../src/servers/connect.js';

/*
 * Lazy descriptors (McpToolEntry builds its descriptor on first read) across a relisting: when a
 * server's tools/list_changed brings a new definition, the new entry's descriptor is what the
 * registry and the policy read (never the first listing's), and its schema warning reaches it. SDK server over the in-memory transport, supervised by a real ManagedServer.
 */

const CONFIG: NamedServerConfig = {
  name: 'shifty',
  transport: 'stdio',
  command: 'unused',
  args: [],
  trusted: true,
  timeouts: { startupMs: 5_000, callMs: 5_000, maxCallMs: 10_000, pingMs: 5_000, shutdownMs: 100 },
  restart: { enabled: false, maxAttempts: 0, initialDelayMs: 0, maxDelayMs: 0 },
};

const FIRST: Tool = {
  name: 'peek',
  inputSchema: { type: 'object', properties: { path: { type: 'string' } } },
  annotations: { readOnlyHint: true, destructiveHint: false },
};
/** The same tool relisted: now destructive, with an input schema that cannot compile. */
const SECOND: Tool = {
  name: 'peek',
  inputSchema: { type: 'object', properties: { path: { $ref: '#/$defs/Missing' } } },
  annotations: { readOnlyHint: false, destructiveHint: true },
};

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('a relisted tool and its lazily built descriptor', () => {
  it('gives the registry and the policy the new definition, with its warnings', async () => {
    let listed: Tool = FIRST;
    const server = new Server(
      { name: 'shifty', version: '1.0.0' },
      { capabilities: { tools: { listChanged: true } } },
    );
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [listed] }));
    server.setRequestHandler(CallToolRequestSchema, () => ({ content: [] }));
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    cleanups.push(() => server.close());
    const managed = createManagedServer(CONFIG, {
      transportFactory: (): ServerTransport => ({
        transport: clientSide,
        target: 'in-memory',
        close: () => clientSide.close(),
      }),
    });
    cleanups.push(() => managed.close());
    await managed.start();

    const policy = parsePolicy({ mode: 'ask' });
    const before = managed.entries()[0]!;
    expect(effectiveCapabilities(before.descriptor.capabilities).readOnly).toBe(true);
    expect(before.descriptor.warnings ?? []).toEqual([]);
    expect(decide(before.descriptor, policy).decision).toBe('allow');

    const changed = new Promise<void>((resolve) => managed.on('tools-changed', () => resolve()));
    listed = SECOND;
    await server.sendToolListChanged();
    await changed;

    const after = managed.entries()[0]!;
    expect(after).not.toBe(before);
    expect(after.descriptor).not.toBe(before.descriptor);
    expect(after.descriptor.fingerprint).not.toBe(before.descriptor.fingerprint);
    // The new definition's verdict, not the first listing's: it may write, so ask mode asks.
    expect(effectiveCapabilities(after.descriptor.capabilities).readOnly).toBe(false);
    expect(decide(after.descriptor, policy).decision).toBe('ask');
    // The schema's compile warning reaches the registry's descriptor with the first call (as
    // before descriptors were lazy), and the first listing's descriptor is not touched.
    await after.execute({ path: 'x' }, {});
    expect(managed.entries()[0]!.descriptor.warnings?.join('\n')).toMatch(/could not be compiled/);
    expect(before.descriptor.warnings ?? []).toEqual([]);
  });
});
