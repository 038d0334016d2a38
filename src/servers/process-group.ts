import { readdirSync, readFileSync } from 'node:fs';
import { constants } from 'node:os';

/** The fields of `/proc/PID/stat` the process checks read. */
export interface ProcStat {
  state: string;
  pgrp: number;
  session: number;
  startTime: number;
}

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

/** Fields of /proc/<pid>/stat (Linux), or undefined elsewhere / when the process is gone. */
export function readProcStat(pid: number | 'self'): ProcStat | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime
  // stime cutime cstime priority nice threads itrealvalue starttime ...; comm may hold spaces.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return {
    state: fields[0] ?? '',
    pgrp: Number(fields[2]),
    session: Number(fields[3]),
    startTime: Number(fields[19]),
  };
}

/**
 * Live members of a process group, from /proc; undefined off Linux. Zombies do not count: an
 * orphaned grandchild that was killed stays a zombie until init reaps it (over a second on some
 * hosts), but it can no longer do anything.
 */
export function groupMembers(pgid: number): Array<{ pid: number; stat: ProcStat }> | undefined {
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return undefined;
  }
  const members: Array<{ pid: number; stat: ProcStat }> = [];
  for (const name of names) {
    const code = name.charCodeAt(0);
    if (code < 48 || code > 57) continue;
    const pid = Number(name);
    const stat = readProcStat(pid);
    if (stat && stat.pgrp === pgid && stat.state !== 'Z' && stat.state !== 'X') {
      members.push({ pid, stat });
    }
  }
  return members;
}

/**
 * True when a process group still has a live member (EPERM counts: it exists, just not ours);
 * on Linux a group of zombies only is gone (see {@link groupMembers}).
 */
export function isProcessGroupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  if (process.platform !== 'linux') return true;
  const members = groupMembers(pgid);
  return members === undefined || members.length > 0;
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
export const sleep = (ms: number): Promise<void> =>
  new Promise((resolve) => {
    setTimeout(resolve, ms);
  });
