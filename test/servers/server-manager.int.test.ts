import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { NamedServerConfig } from '../../src/config/schemas.js';
import { AgentsErrorCode, ServerError } from '../../src/errors.js';
import { createServerManager, type ServerManager } from '../../src/servers/server-manager.js';
import type { ToolsChangedEvent } from '../../src/servers/server-events.js';
import { toolNoLongerAvailableResult } from '../../src/servers/managed-server.js';
import {
  FAST_TIMEOUTS,
  faultServerConfig,
  groupGone,
  groupReaped,
  resultText,
  waitFor,
} from './fixture.js';

const managers: ServerManager[] = [];
afterEach(async () => {
  await Promise.all(managers.splice(0).map((manager) => manager.close()));
});

function manager(options: Parameters<typeof createServerManager>[0] = {}): ServerManager {
  const created = createServerManager({ refreshDebounceMs: 50, ...options });
  managers.push(created);
  return created;
}

describe('server manager (real processes)', () => {
  it('starts servers in parallel and stops them all; repeated cycles leave no process', async () => {
    const servers = manager();
    const configs = ['one', 'two', 'three'].map((name) => faultServerConfig(name));
    const seen: number[] = [];
    for (let cycle = 0; cycle < 3; cycle++) {
      const lease = await servers.acquire(configs);
      expect(lease.servers.map((server) => server.status)).toEqual(['ready', 'ready', 'ready']);
      const pids = lease.servers.map((server) => server.pid!);
      seen.push(...pids);
      await lease.release();
      for (const pid of pids) expect(groupGone(pid)).toBe(true);
      expect(servers.list()).toEqual([]);
    }
    for (const pid of seen) expect(await groupReaped(pid)).toBe(true);
  });

  it('reference counting: two leases share one process; the last release stops it', async () => {
    const servers = manager();
    const config = faultServerConfig('shared');
    const [first, second] = await Promise.all([
      servers.acquire([config]),
      servers.acquire([config]),
    ]);
    expect(first.get('shared')).toBe(second.get('shared'));
    expect(servers.references('shared')).toBe(2);
    const pid = first.get('shared')!.pid;
    await first.release();
    await first.release(); // idempotent: does not drop the other lease's reference
    expect(servers.references('shared')).toBe(1);
    expect(groupGone(pid)).toBe(false);
    expect(
      resultText(
        await second
          .get('shared')!
          .entries()
          .find((e) => e.descriptor.originalName === 'echo')!
          .execute({ text: 'hi' }, {}),
      ),
    ).toBe('hi');
    await second.release();
    expect(groupGone(pid)).toBe(true);
  });

  it('a failing start rejects with that failure and stops the servers started with it', async () => {
    const servers = manager();
    const starts: string[] = [];
    servers.on('server-start', (event) => starts.push(event.serverName));
    const error = await servers
      .acquire([
        faultServerConfig('good'),
        faultServerConfig('bad', 'exit-1-during-init'),
        faultServerConfig('good2'),
      ])
      .then(
        () => undefined,
        (reason: unknown) => reason,
      );
    expect(error).toBeInstanceOf(ServerError);
    expect((error as ServerError).details).toMatchObject({ serverName: 'bad', exitCode: 1 });
    expect(starts.sort()).toEqual(['good', 'good2']);
    expect(servers.list()).toEqual([]);
  });

  it('refuses a second, different config under a running name', async () => {
    const servers = manager();
    const lease = await servers.acquire([faultServerConfig('dup')]);
    const error = await servers
      .acquire([faultServerConfig('dup', 'banner')])
      .catch((reason: unknown) => reason);
    expect((error as ServerError).code).toBe(AgentsErrorCode.ConfigInvalid);
    expect(servers.references('dup')).toBe(1);
    await lease.release();
  });

  it('list_changed: added, removed and changed tools are reflected in entries(); removed tools give a clear error result', async () => {
    const servers = manager();
    const lease = await servers.acquire([faultServerConfig('dynamic', 'list-changed')]);
    const server = lease.get('dynamic')!;
    const events: ToolsChangedEvent[] = [];
    servers.on('tools-changed', (event) => events.push(event));
    const call = (name: string, args: Record<string, unknown>) =>
      server
        .entries()
        .find((entry) => entry.descriptor.originalName === name)!
        .execute(args, {});

    await call('add_tool', { name: 'fresh_tool' });
    await waitFor(
      () => server.entries().some((entry) => entry.descriptor.originalName === 'fresh_tool'),
      5_000,
      'added tool',
    );
    expect(events.at(-1)).toMatchObject({
      reason: 'list_changed',
      added: ['mcp:dynamic/fresh_tool'],
      removed: [],
      changed: [],
    });
    const fresh = server.entries().find((entry) => entry.descriptor.originalName === 'fresh_tool')!;
    expect(resultText(await fresh.execute({}, {}))).toBe('fresh_tool ran');

    await call('change_tool', { name: 'fresh_tool', description: 'Now different' });
    await waitFor(
      () => events.some((event) => event.changed.includes('mcp:dynamic/fresh_tool')),
      5_000,
      'changed tool',
    );
    expect(server.changedToolIds.has('mcp:dynamic/fresh_tool')).toBe(true);
    expect(
      server.entries().find((entry) => entry.descriptor.originalName === 'fresh_tool')!.descriptor
        .description,
    ).toContain('Now different');

    await call('remove_tool', { name: 'fresh_tool' });
    await waitFor(
      () => !server.entries().some((entry) => entry.descriptor.originalName === 'fresh_tool'),
      5_000,
      'removed tool',
    );
    expect(events.at(-1)!.removed).toEqual(['mcp:dynamic/fresh_tool']);
    // The entry the model may still hold from the previous turn:
    expect(await fresh.execute({}, {})).toEqual(
      toolNoLongerAvailableResult('dynamic', 'fresh_tool'),
    );
    await lease.release();
  });

  it('@modelcontextprotocol/server-everything: starts, lists, survives its early list_changed, and stops', async () => {
    const servers = manager();
    const everything: NamedServerConfig = {
      name: 'everything',
      transport: 'stdio',
      command: process.execPath,
      args: [
        fileURLToPath(import.meta.resolve('@modelcontextprotocol/server-everything/dist/index.js')),
        'stdio',
      ],
      trusted: false,
      timeouts: { ...FAST_TIMEOUTS, startupMs: 20_000 },
    };
    const lease = await servers.acquire([everything]);
    const server = lease.get('everything')!;
    expect(server.entries().length).toBeGreaterThan(3);
    const echo = server.entries().find((entry) => entry.descriptor.originalName === 'echo');
    expect(echo).toBeDefined();
    expect(resultText(await echo!.execute({ message: 'hi' }, {}))).toContain('hi');
    // Let any early list_changed refresh run; the set must still be complete and usable.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(server.stale).toBe(false);
    expect(server.entries().some((entry) => entry.descriptor.originalName === 'echo')).toBe(true);
    const pid = server.pid;
    await lease.release();
    expect(groupGone(pid)).toBe(true);
  });
});
