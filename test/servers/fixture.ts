import { fileURLToPath } from 'node:url';
import type { StdioServerConfig } from '../../src/config/schemas.js';
import { isProcessGroupAlive } from '../../src/servers/stdio-transport.js';

/** The fault server fixture (plain .mjs: no tsx start-up cost per spawn). */
export const FAULT_SERVER = fileURLToPath(new URL('../fixtures/fault-server.mjs', import.meta.url));

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
  timeouts?: Partial<typeof FAST_TIMEOUTS>;
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
