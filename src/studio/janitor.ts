/**
 * A cleanup watchdog for graph modules loaded by the LangGraph dev server (`langgraphjs dev`,
 * what Studio talks to).
 *
 * Why a separate process: the dev server runs graphs under `tsx`, whose parent SIGKILLs the
 * graph process when it does not acknowledge a signal within ~30 ms, which a busy shutdown often
 * misses. Nothing in a SIGKILLed process can clean up, so a small detached process watches a
 * pipe instead: the pipe closes however its owner dies, and then the janitor stops the MCP
 * servers' process groups and removes the sandbox and temp folders it was told about.
 */
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import type { RunSandbox } from '../sandbox/backend.js';
import type { ServerEventSource } from '../servers/server-events.js';

/**
 * The janitor's program, run with `node -e` (CommonJS, no loader, a few MiB). Kept as source
 * text rather than a file so it works the same from `src/` under tsx and from the built
 * `dist/` (a build copies no `.mjs`), and so a bundler cannot drop it.
 *
 * Protocol, one JSON object per stdin line:
 *   {"type":"watch","pgids":[...],"paths":[...]}  (replaces the previous job)
 *   {"type":"done"}                               (the owner cleaned up: exit, do nothing)
 * At end of input without "done": SIGTERM the process groups (SIGKILL after 1 s if needed),
 * then remove the paths (each step on its own; a failure never stops the rest).
 */
export const JANITOR_PROGRAM = String.raw`
'use strict';
const { rmSync } = require('node:fs');
let job = { pgids: [], paths: [] };
let done = false;
let buffered = '';
const attempt = (work) => { try { work(); } catch { /* best effort */ } };
const groupAlive = (pgid) => { try { process.kill(-pgid, 0); return true; } catch { return false; } };
async function cleanUp() {
  if (done) process.exit(0);
  const pgids = (job.pgids || []).filter((pgid) => Number.isInteger(pgid) && pgid > 1);
  for (const pgid of pgids) attempt(() => process.kill(-pgid, 'SIGTERM'));
  const deadline = Date.now() + 1000;
  while (pgids.some(groupAlive) && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 50));
  for (const pgid of pgids.filter(groupAlive)) attempt(() => process.kill(-pgid, 'SIGKILL'));
  for (const path of job.paths || [])
    if (typeof path === 'string' && path.startsWith('/') && path !== '/')
      attempt(() => rmSync(path, { recursive: true, force: true }));
  process.exit(0);
}
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  buffered += chunk;
  let newline;
  while ((newline = buffered.indexOf('\n')) >= 0) {
    const line = buffered.slice(0, newline);
    buffered = buffered.slice(newline + 1);
    try {
      const message = JSON.parse(line);
      if (message.type === 'done') done = true;
      if (message.type === 'watch') job = message;
    } catch { /* a malformed line must not trigger an early clean-up */ }
  }
});
process.stdin.on('end', () => void cleanUp());
process.stdin.on('error', () => void cleanUp());
`;

/**
 * A running janitor. Register what must not outlive this process; when the process ends without
 * calling {@link StudioJanitor.dismiss}, the janitor stops the process groups and removes the
 * folders. Registering is cheap (one line on a pipe) and never throws.
 */
export interface StudioJanitor {
  /** Stop this process group (a stdio MCP server leads its own) if this process dies. */
  trackProcessGroup(pgid: number): void;
  /** Forget a process group that ended normally (its id could be reused by another process). */
  untrackProcessGroup(pgid: number): void;
  /** Remove this folder (recursively) if this process dies. Must be absolute. */
  trackPath(folder: string): void;
  /**
   * Follow a server (a `ManagedServer`, an actor's `servers()`, a `ServerManager`): every
   * (re)start's process group is tracked, and forgotten when that server ends. Returns a function
   * that stops following.
   */
  trackServers(source: ServerEventSource, current?: readonly (number | undefined)[]): () => void;
  /** Remove a sandbox's folder (its tree, snapshot store and run dir) if this process dies. */
  trackSandbox(sandbox: Pick<RunSandbox, 'container'>): void;
  /** The owner cleaned up itself: the janitor exits without doing anything. Idempotent. */
  dismiss(): void;
  /** Process id of the janitor (for tests). */
  readonly pid: number | undefined;
}

/**
 * Spawns the janitor: a detached `node` process (its own session, so a terminal's Ctrl-C does not
 * reach it) reading a pipe from this process. It is unref'd, and so is the pipe: it never keeps
 * this process alive.
 */
export function startStudioJanitor(): StudioJanitor {
  const child = spawn(process.execPath, ['-e', JANITOR_PROGRAM], {
    detached: true,
    stdio: ['pipe', 'ignore', 'ignore'],
    // A loader in NODE_OPTIONS (the dev server runs graphs under tsx) would only slow it down.
    env: { ...process.env, NODE_OPTIONS: '' },
  });
  child.unref();
  child.on('error', () => undefined);
  const stdin = child.stdin;
  (stdin as unknown as { unref?: () => void } | null)?.unref?.();
  stdin?.on('error', () => undefined);
  const pgids = new Set<number>();
  const paths = new Set<string>();
  let dismissed = false;
  const send = (message: unknown): void => {
    if (!dismissed && stdin !== null && stdin.writable) stdin.write(`${JSON.stringify(message)}\n`);
  };
  const sync = (): void => send({ type: 'watch', pgids: [...pgids], paths: [...paths] });
  const trackProcessGroup = (pgid: number): void => {
    if (!Number.isInteger(pgid) || pgid <= 1 || pgids.has(pgid)) return;
    pgids.add(pgid);
    sync();
  };
  const untrackProcessGroup = (pgid: number): void => {
    if (pgids.delete(pgid)) sync();
  };
  const trackPath = (folder: string): void => {
    if (!path.isAbsolute(folder) || paths.has(folder)) return;
    paths.add(folder);
    sync();
  };
  return {
    pid: child.pid,
    trackProcessGroup,
    untrackProcessGroup,
    trackPath,
    trackServers(source, current = []) {
      const byServer = new Map<string, number>();
      for (const pgid of current) if (pgid !== undefined) trackProcessGroup(pgid);
      const offStart = source.on('server-start', (event) => {
        if (event.pid === undefined) return;
        byServer.set(event.serverName, event.pid);
        trackProcessGroup(event.pid);
      });
      const offEnd = source.on('server-end', (event) => {
        const pgid = byServer.get(event.serverName);
        byServer.delete(event.serverName);
        if (pgid !== undefined) untrackProcessGroup(pgid);
      });
      return () => {
        offStart();
        offEnd();
      };
    },
    trackSandbox(sandbox) {
      // The sandbox's own folder: its tree, store and records.
      trackPath(sandbox.container);
    },
    dismiss() {
      if (dismissed) return;
      send({ type: 'done' });
      dismissed = true;
      stdin?.end();
    },
  };
}
