import { mkdirSync, mkdtempSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import type { NamedServerConfig, StdioServerConfig } from '../../src/config/server-schema.js';
import { createServerTransport, type ServerTransport } from '../../src/servers/connect.js';
import { createManagedServer } from '../../src/servers/managed-server.js';
import type { ManagedServer } from '../../src/servers/managed-server.js';
import type { ManagedServerOptions } from '../../src/servers/server-core.js';
import { isProcessGroupAlive } from '../../src/servers/process-group.js';

/** The fault server fixture (plain .mjs: no tsx start-up cost per spawn). */
export const FAULT_SERVER = fileURLToPath(new URL('../fixtures/fault-server.mjs', import.meta.url));

/**
 * A fresh folder for a stand-in launcher (a fake `npx` that runs FAULT_SERVER), inside this
 * checkout (git-ignored `.test-tmp`); remove it after the test. Confined, the launcher's package
 * root (the checkout: the fixture and its node_modules) is put back read-only. From the system
 * tmp it would fail when the checkout lies under /tmp: the private /tmp hides the checkout, and
 * nothing on the command line names the fixture.
 */
export function launcherFolder(prefix: string): string {
  const base = fileURLToPath(new URL('../../.test-tmp', import.meta.url));
  mkdirSync(base, { recursive: true });
  return realpathSync(mkdtempSync(join(base, prefix)));
}

/** Short timeouts so fault tests finish quickly; override per test. */
export const FAST_TIMEOUTS = {
  startupMs: 10_000,
  callMs: 5_000,
  maxCallMs: 20_000,
  pingMs: 1_000,
  shutdownMs: 500,
};

export interface FaultServerExtra {
  env?: Record<string, string>;
  trusted?: boolean;
  timeouts?: Partial<typeof FAST_TIMEOUTS & { resetOnProgress: boolean }>;
  restart?: Partial<{
    enabled: boolean;
    maxAttempts: number;
    initialDelayMs: number;
    maxDelayMs: number;
  }>;
}

/** A stdio config that runs the fault server in `mode`. */
export function faultServerConfig(
  name: string,
  mode = 'normal',
  extra: FaultServerExtra = {},
): StdioServerConfig & { name: string } {
  const { timeouts, restart, ...rest } = extra;
  return {
    name,
    transport: 'stdio',
    command: process.execPath,
    args: [FAULT_SERVER, mode],
    trusted: false,
    ...rest,
    timeouts: { ...FAST_TIMEOUTS, ...timeouts },
    restart: { enabled: true, maxAttempts: 3, initialDelayMs: 50, maxDelayMs: 500, ...restart },
  };
}

/** True when no live (non-zombie) member of the group remains. */
export function groupGone(pgid: number | undefined): boolean {
  if (pgid === undefined) throw new Error('no pgid recorded');
  return !isProcessGroupAlive(pgid);
}

/**
 * Resolves true once `kill(-pgid, 0)` throws ESRCH. Orphaned grandchildren that were killed stay
 * zombies until init reaps them (about 1.2 s on this kind of VM), so this polls up to `ms`.
 */
export async function groupReaped(pgid: number | undefined, ms = 4_000): Promise<boolean> {
  if (pgid === undefined) throw new Error('no pgid recorded');
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      process.kill(-pgid, 0);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ESRCH') return true;
    }
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Resolves true once `kill(pid, 0)` throws ESRCH (polls up to `ms`, see {@link groupReaped}). */
export async function processReaped(pid: number, ms = 4_000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!processGone(pid)) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return true;
}

/** True when the single process `pid` is gone. */
export function processGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/** The text of the first content item of a tool result. */
export function resultText(result: { content?: unknown }): string {
  const first = (result.content as Array<{ type: string; text?: string }> | undefined)?.[0];
  return first?.type === 'text' ? (first.text ?? '') : '';
}

/** Polls `predicate` (real timers) until true or `ms` passes. */
export async function waitFor(
  predicate: () => boolean,
  ms = 5_000,
  what = 'condition',
): Promise<void> {
  const deadline = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The entry of the tool `name` (its server-side name) in the server's current set. */
export function toolEntry(server: ManagedServer, name: string) {
  const entry = server.entries().find((candidate) => candidate.descriptor.originalName === name);
  if (!entry) throw new Error(`server "${server.name}" lists no tool ${name}`);
  return entry;
}

/** A managed server plus the process group ids of every process it spawned (restarts too). */
export interface TrackedServer {
  server: ManagedServer;
  pgids(): number[];
}

/**
 * Creates (does not start) a managed server whose transports are kept, so a test can check
 * every process group it ever spawned: a failed start or a restart leaves `server.pid` unset
 * or changed.
 */
export function createTrackedServer(
  config: NamedServerConfig,
  options: Omit<ManagedServerOptions, 'transportFactory'> = {},
): TrackedServer {
  const transports: ServerTransport[] = [];
  const server = createManagedServer(config, {
    ...options,
    transportFactory: (serverConfig) => {
      const created = createServerTransport(serverConfig, {
        cwd: options.cwd,
        logger: options.logger,
        maxLineBytes: options.maxLineBytes,
        ...(options.runDir === undefined ? {} : { runDir: options.runDir }),
      });
      transports.push(created);
      return created;
    },
  });
  return {
    server,
    pgids: () => transports.flatMap((created) => created.stdio?.pid ?? []),
  };
}

/** A faulty server started while a healthy sibling runs (see {@link startBesideSibling}). */
export interface FaultCase extends TrackedServer {
  sibling: ManagedServer;
  /** The sibling's pid when the fault case began: the fault must not make it restart. */
  siblingPid: number | undefined;
  /** The faulty server's `start()`; already handled, so a test may ignore a rejection. */
  started: Promise<void>;
}

/**
 * Starts `config` (tracked: every process group it spawns is kept) while `sibling`, a healthy
 * server that is already running, stays up next to it. `track` registers the faulty server for
 * the test's cleanup. The faulty server's start is `started`: await it, or expect it to reject.
 */
export function startBesideSibling(
  config: NamedServerConfig,
  sibling: ManagedServer,
  track: (server: ManagedServer) => void,
  options: Omit<ManagedServerOptions, 'transportFactory'> = {},
): FaultCase {
  if (sibling.status !== 'ready') throw new Error(`sibling "${sibling.name}" is ${sibling.status}`);
  const faulty = createTrackedServer(config, options);
  track(faulty.server);
  const started = faulty.server.start();
  started.catch(() => undefined);
  return { ...faulty, sibling, siblingPid: sibling.pid, started };
}

/**
 * What every fault must end in besides its typed error (issue 4): the sibling running alongside
 * still answers a call from the same process (never restarted), and once the faulty server is
 * closed no process of any group it spawned is left (`kill(-pgid, 0)` gives ESRCH). Pass
 * `spawned: false` for a fault that never gets a process (command not found).
 */
export async function expectFaultContained(
  fault: FaultCase,
  { spawned = true }: { spawned?: boolean } = {},
): Promise<void> {
  const text = `${fault.sibling.name} still answers`;
  expect(fault.sibling.status).toBe('ready');
  expect(resultText(await toolEntry(fault.sibling, 'echo').execute({ text }, {}))).toBe(text);
  expect(fault.sibling.pid).toBe(fault.siblingPid);

  await fault.server.close();
  expect(fault.server.status).toBe('closed');
  const pgids = fault.pgids();
  if (spawned) expect(pgids.length).toBeGreaterThan(0);
  else expect(pgids).toEqual([]);
  for (const pgid of pgids) expect(groupGone(pgid), `live process in group ${pgid}`).toBe(true);
  const reaped = await Promise.all(pgids.map((pgid) => groupReaped(pgid)));
  expect(reaped).toEqual(pgids.map(() => true));
}

/** What the fault server saw (its `cancellations` tool). */
export interface ServerSaw {
  calls: Array<{ tool: string; requestId: number | string }>;
  cancelled: Array<{ requestId: number | string; reason?: string }>;
  aborted: Array<number | string>;
}

/** Asks the fault server what it saw: tools/call requests, cancellations, aborted handlers. */
export async function serverSaw(server: ManagedServer): Promise<ServerSaw> {
  return JSON.parse(
    resultText(await toolEntry(server, 'cancellations').execute({}, {})),
  ) as ServerSaw;
}

/** Resolves the request id of the first tools/call of `tool` the server received (polls). */
export async function receivedCall(
  server: ManagedServer,
  tool: string,
  ms = 5_000,
): Promise<number | string> {
  const deadline = Date.now() + ms;
  for (;;) {
    const call = (await serverSaw(server)).calls.find((candidate) => candidate.tool === tool);
    if (call) return call.requestId;
    if (Date.now() > deadline) throw new Error(`server "${server.name}" never received ${tool}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/**
 * Resolves what the server saw once it got `notifications/cancelled` for `requestId` and the
 * handler of that request was aborted (polls up to `ms`).
 */
export async function receivedCancellation(
  server: ManagedServer,
  requestId: number | string,
  ms = 5_000,
): Promise<ServerSaw> {
  const deadline = Date.now() + ms;
  for (;;) {
    const saw = await serverSaw(server);
    if (
      saw.cancelled.some((entry) => entry.requestId === requestId) &&
      saw.aborted.includes(requestId)
    ) {
      return saw;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `server "${server.name}" got no notifications/cancelled for request ${String(requestId)}: ${JSON.stringify(saw)}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
