import { fileURLToPath } from 'node:url';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import type { NamedServerConfig } from '../../src/config/server-schema.js';
import { AgentsErrorCode, ServerError } from '../../src/errors.js';
import { createServerTransport, type ServerTransport } from '../../src/servers/connect.js';
import { createServerManager, type ServerManager } from '../../src/servers/server-manager.js';
import type { ToolsChangedEvent } from '../../src/servers/server-events.js';
import { createManagedServer } from '../../src/servers/managed-server.js';
import { toolNoLongerAvailableResult } from '../../src/servers/server-call.js';
import {
  FAST_TIMEOUTS,
  FAULT_SERVER,
  faultServerConfig,
  groupGone,
  groupReaped,
  processGone,
  processReaped,
  resultText,
  toolEntry,
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

/** One JSON-RPC message through a tapped transport, as the client sent or received it. */
interface TappedMessage {
  direction: 'sent' | 'received';
  message: JSONRPCMessage;
}

/**
 * A transport factory that records every message the client sends and receives, in order. The
 * SDK's Protocol calls an `onmessage` that is already set before its own handler.
 */
function tappedTransport(log: TappedMessage[]) {
  return (config: NamedServerConfig): ServerTransport => {
    const created = createServerTransport(config);
    const { transport } = created;
    transport.onmessage = (message) => log.push({ direction: 'received', message });
    const send = transport.send.bind(transport);
    transport.send = (message, options) => {
      log.push({ direction: 'sent', message });
      return send(message, options);
    };
    return created;
  };
}

function methodOf(message: JSONRPCMessage): string | undefined {
  return 'method' in message ? message.method : undefined;
}

function idOf(message: JSONRPCMessage): string | number | undefined {
  return 'id' in message ? message.id : undefined;
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

  it('repeated cycles with a wrapper-launched server (sh -c, forking a grandchild): after each, no process of its group remains', async () => {
    const servers = manager();
    const wrapped = {
      ...faultServerConfig('wrapped'),
      allowShell: true,
      command: '/bin/sh',
      // Not `exec`: sh stays as the group leader, node runs as its child and forks a grandchild.
      args: ['-c', `"${process.execPath}" "${FAULT_SERVER}" fork-grandchild; echo done`],
    };
    const left: Array<{ pgid: number; pids: number[] }> = [];
    for (let cycle = 0; cycle < 5; cycle++) {
      const lease = await servers.acquire([wrapped]);
      const server = lease.get('wrapped')!;
      const info = JSON.parse(resultText(await toolEntry(server, 'info').execute({}, {}))) as {
        pid: number;
        grandchildPid: number;
      };
      const pgid = server.pid!;
      // The wrapper leads the group; the server is its child and has a child of its own.
      expect(info.pid).not.toBe(pgid);
      expect(processGone(info.grandchildPid)).toBe(false);
      await lease.release();
      expect(servers.list()).toEqual([]);
      // No live process of the group: wrapper, server and grandchild were all killed.
      expect(groupGone(pgid), `cycle ${cycle}: live process in group ${pgid}`).toBe(true);
      left.push({ pgid, pids: [info.pid, info.grandchildPid] });
    }
    // And kill(-pgid, 0) gives ESRCH for every group once init has reaped the orphaned zombies
    // (about a second on this kind of VM, so checked once for all cycles).
    for (const { pgid, pids } of left) {
      expect(await groupReaped(pgid), `group ${pgid} still exists`).toBe(true);
      for (const pid of pids) expect(await processReaped(pid)).toBe(true);
    }
    expect(new Set(left.map(({ pgid }) => pgid)).size).toBe(5);
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

  it('@modelcontextprotocol/server-everything: its list_changed right after initialize is answered by a debounced re-list; the set stays complete', async () => {
    const log: TappedMessage[] = [];
    const servers = manager({
      // The default debounce: the refresh runs once the burst of notifications is over.
      refreshDebounceMs: 200,
      createServer: (config, options) =>
        createManagedServer(config, { ...options, transportFactory: tappedTransport(log) }),
    });
    const changes: ToolsChangedEvent[] = [];
    servers.on('tools-changed', (event) => changes.push(event));
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

    // It announces tools/list_changed right after initialize (it registers more tools then).
    const firstChange = (): number =>
      log.findIndex(
        (entry) =>
          entry.direction === 'received' &&
          methodOf(entry.message) === 'notifications/tools/list_changed',
      );
    await waitFor(() => firstChange() !== -1, 10_000, 'list_changed from server-everything');
    // The refresh: a tools/list sent after that notification, whose answer came back.
    const refreshes = (): JSONRPCMessage[] =>
      log
        .slice(firstChange())
        .filter((entry) => entry.direction === 'sent' && methodOf(entry.message) === 'tools/list')
        .map((entry) => entry.message);
    const answerTo = (request: JSONRPCMessage): JSONRPCMessage | undefined =>
      log.find(
        (entry) =>
          entry.direction === 'received' &&
          methodOf(entry.message) === undefined &&
          idOf(entry.message) === idOf(request),
      )?.message;
    await waitFor(
      () => refreshes().length > 0 && refreshes().every((request) => answerTo(request)),
      10_000,
      'the tools/list refresh after list_changed',
    );
    const notifications = log.filter(
      (entry) => methodOf(entry.message) === 'notifications/tools/list_changed',
    ).length;
    // Debounced: never more lists than notifications (a burst costs one or two).
    expect(refreshes().length).toBeLessThanOrEqual(notifications);

    // After the refresh the set is the server's complete, current list.
    const answer = answerTo(refreshes().at(-1)!) as {
      result?: { tools?: Array<{ name: string }> };
    };
    const listed = (answer.result?.tools ?? []).map((tool) => tool.name).sort();
    expect(listed).toContain('echo');
    await waitFor(
      () =>
        JSON.stringify(
          server
            .entries()
            .map((entry) => entry.descriptor.originalName)
            .sort(),
        ) === JSON.stringify(listed),
      5_000,
      'the refreshed tool set',
    );
    expect(server.stale).toBe(false);
    // The refresh found the set it already had (the initial listing ran after the server added
    // its tools), so it emits no tools-changed; any it did emit came from list_changed and never
    // lost a tool.
    for (const change of changes) {
      expect(change).toMatchObject({
        serverName: 'everything',
        reason: 'list_changed',
        removed: [],
      });
    }
    expect(resultText(await echo!.execute({ message: 'after refresh' }, {}))).toContain(
      'after refresh',
    );
    const pid = server.pid;
    await lease.release();
    expect(groupGone(pid)).toBe(true);
  });
});
