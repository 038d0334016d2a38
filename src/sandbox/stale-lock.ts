import { readdir, readlink, rm, stat } from 'node:fs/promises';
import { isAbsolute, relative } from 'node:path';
import { AgentsError } from '../errors.js';
import { DEFAULT_GIT_TIMEOUT_MS } from './git-env.js';

/** git's message when a lock file is already there. */
const LOCK_EXISTS = /Unable to create '([^'\n]+\.lock)': File exists/;

/**
 * When `error` is git's "Unable to create '….lock': File exists" for a lock inside `ownDir`
 * (a folder only the host writes), removes that lock if no process holds it open: git keeps its
 * lock open from creating to committing it, so an unheld lock is one a killed git left behind.
 * Where open files cannot be listed (no `/proc`), only a lock older than the longest a git may
 * run is taken as stale. True when a lock was removed (the caller runs its command again).
 */
export async function removeStaleLock(ownDir: string, error: unknown): Promise<boolean> {
  if (!AgentsError.isInstance(error)) return false;
  const stderr = error.details['stderr'];
  const lock = typeof stderr === 'string' ? LOCK_EXISTS.exec(stderr)?.[1] : undefined;
  if (lock === undefined) return false;
  const inside = relative(ownDir, lock);
  if (inside === '' || inside.startsWith('..') || isAbsolute(inside)) return false;
  const held = await lockHeld(lock);
  if (held === true) return false;
  if (held === undefined) {
    const stats = await stat(lock).catch(() => undefined);
    if (stats !== undefined && Date.now() - stats.mtimeMs < DEFAULT_GIT_TIMEOUT_MS) return false;
  }
  await rm(lock, { force: true });
  return true;
}

/** Whether any process has `path` open (undefined: `/proc` cannot tell). */
async function lockHeld(path: string): Promise<boolean | undefined> {
  const pids = await readdir('/proc').catch(() => undefined);
  if (pids === undefined) return undefined;
  for (const pid of pids) {
    if (!/^\d+$/.test(pid)) continue;
    const fds = await readdir(`/proc/${pid}/fd`).catch(() => [] as string[]);
    for (const fd of fds) {
      if ((await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '')) === path) return true;
    }
  }
  return false;
}
