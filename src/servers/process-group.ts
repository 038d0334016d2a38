import { readdirSync, readFileSync } from 'node:fs';
import { constants } from 'node:os';

/** How a server process ended. */
export interface ProcessExit {
  exitCode: number | null;
  signal: string | null;
}

// Process groups of live servers (with the function that removes their pid record), killed if
// the host exits without closing them.
const liveGroups = new Map<number, () => void>();
let exitHookInstalled = false;

/**
 * Remembers a live server's process group, so it is killed (SIGKILL) if the host exits
 * without closing it; `unrecord` removes its on-disk pid record then.
 */
export function trackProcessGroup(pgid: number, unrecord: () => void): void {
  liveGroups.set(pgid, unrecord);
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // 'exit' handlers must be synchronous, so there is no time for the polite sequence: SIGKILL.
  process.on('exit', () => {
    for (const [group, removeRecord] of liveGroups) {
      try {
        process.kill(-group, 'SIGKILL');
      } catch {
        // already gone
      }
      removeRecord();
    }
  });
}

/**
 * Forgets a process group after shutdown. A group that is `gone` loses its pid record too; one
 * that survived SIGKILL keeps it, so a later start can try again.
 */
export function untrackProcessGroup(pgid: number, gone: boolean): void {
  if (gone) liveGroups.get(pgid)?.();
  liveGroups.delete(pgid);
}

/**
 * True when a process group still has a live member (EPERM counts: it exists, just not ours).
 * On Linux, zombies do not count: an orphaned grandchild that was killed stays a zombie until
 * init reaps it (over a second on some hosts), but it can no longer do anything.
 */
export function isProcessGroupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  if (process.platform !== 'linux') return true;
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return true;
  }
  for (const name of names) {
    if (name.charCodeAt(0) < 48 || name.charCodeAt(0) > 57) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, 'utf8');
    } catch {
      continue;
    }
    // Format: pid (comm) state ppid pgrp ...; comm may contain spaces and parentheses.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(fields[2]) === pgid && fields[0] !== 'Z' && fields[0] !== 'X') return true;
  }
  return false;
}

/** Resolves true once no live member of the group remains, false after `ms`. */
export async function waitForGroupGone(pgid: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (!isProcessGroupAlive(pgid)) return true;
    if (Date.now() >= deadline) return false;
    await sleep(25);
  }
}

/** A wrapper's exit code 128+N as "killed by signal N" (the shell convention bubblewrap uses). */
export function fromWrapperExit(
  exitCode: number | null,
  signal: NodeJS.Signals | null,
): ProcessExit {
  if (exitCode !== null && exitCode > 128 && exitCode < 128 + 65) {
    const name = Object.entries(constants.signals).find(
      ([, number]) => number === exitCode - 128,
    )?.[0];
    if (name !== undefined) return { exitCode: null, signal: name };
  }
  return { exitCode, signal };
}

/** Sends `signal` to every process of the group; a group already gone is fine. */
export function killProcessGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // ESRCH: the group is already gone.
  }
}

// Not unref'd: a bounded shutdown must finish even when nothing else keeps the loop alive.
const sleep = (ms: number): Promise<void> =>
  new Promise((resolve) => {
    setTimeout(resolve, ms);
  });
