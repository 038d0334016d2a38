import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { lstat, readFile, readlink, readdir, rm } from 'node:fs/promises';
import { resolve } from 'node:path';

/**
 * Keeps a host-side git from hanging on a trap a server planted in its sandbox (issue 35,
 * item 6). git opens some files without looking at their type first: a nested repo's
 * `.git/HEAD` (to tell whether the folder is a repository), every `.gitignore` and
 * `.gitattributes` it meets. Opening a fifo for reading blocks until someone opens its other
 * end, so a fifo planted under one of those names held the host's `add -A` until its timeout,
 * and the killed git left `run/index.lock` behind for every later snapshot to trip over.
 *
 * A planted fifo cannot be kept out of git's way beforehand: a process still running in the
 * sandbox can make one between any scan and git's open. So the watch looks at the git while it
 * runs (Linux `/proc`, on the host's own child): a git blocked in `open` on a fifo is let through
 * by opening the fifo's write end without blocking and closing it at once, so git reads an empty
 * file (an empty `.gitignore`; a HEAD that is no repository's). Nothing is written into the fifo
 * and nothing of it is recorded (git never adds a fifo). A git blocked *reading* a fifo (the
 * server holds the write end open) cannot be let through: it is stopped at once, with the path.
 * Where `/proc` cannot be read, the git's timeout still bounds it.
 */

/** First look at a running git after this long: nearly every snapshot git is done by then. */
const FIRST_LOOK_MS = 150;
/** Then look again this often while it runs. */
const LOOK_EVERY_MS = 150;

/** x86-64 and arm64 numbers of the system calls a git can block in on a fifo. */
const OPEN_CALLS = new Set(
  process.arch === 'arm64' ? ['56', '437'] : process.arch === 'x64' ? ['2', '257', '437'] : [],
);
const READ_CALLS = new Set(
  process.arch === 'arm64' ? ['63', '67'] : process.arch === 'x64' ? ['0', '17'] : [],
);
/** `AT_FDCWD` as the kernel prints it in `/proc/PID/syscall`. */
const AT_FDCWD = new Set(['0xffffff9c', '0xffffffffffffff9c']);

/** Where a running git is blocked, when it is blocked on a fifo. */
export interface FifoBlock {
  /** `open`: waiting for a writer to appear; `read`: a writer holds it open and sends nothing. */
  kind: 'open' | 'read';
  /** Absolute path of the fifo. */
  path: string;
}

/** What the watch of one git found. */
export interface HostGitWatch {
  /** Fifos the git was blocked opening and was let through (absolute paths, in order). */
  readonly letThrough: readonly string[];
  /** Stops looking (the git has exited). */
  stop(): void;
}

/**
 * Watches the git `pid` until {@link HostGitWatch.stop}: fifos it blocks opening are let
 * through; a fifo it blocks reading calls `onStuck` (the caller kills it and names the path).
 */
export function watchHostGit(pid: number, onStuck: (block: FifoBlock) => void): HostGitWatch {
  const letThrough: string[] = [];
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const look = async () => {
    const block = await fifoBlock(pid).catch(() => undefined);
    if (stopped) return;
    if (block?.kind === 'open') {
      if (letFifoThrough(block.path) && !letThrough.includes(block.path))
        letThrough.push(block.path);
      // Straight on: the next `.gitignore` may be one too.
      timer = setTimeout(() => void look(), 0);
      return;
    }
    if (block?.kind === 'read') {
      onStuck(block);
      return;
    }
    timer = setTimeout(() => void look(), LOOK_EVERY_MS);
  };
  if (OPEN_CALLS.size > 0) timer = setTimeout(() => void look(), FIRST_LOOK_MS);
  return {
    letThrough,
    stop() {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
    },
  };
}

/**
 * Whether `pid` is blocked in a system call on a fifo, from `/proc/PID/syscall` (the call and
 * its arguments) and, for an open, the path argument read out of its memory (the host may read
 * its own child's). Undefined when it runs, waits on something else, or `/proc` says nothing.
 */
export async function fifoBlock(pid: number): Promise<FifoBlock | undefined> {
  const fields = (await readFile(`/proc/${pid}/syscall`, 'utf8')).trim().split(' ');
  const [call = '', first = '', second = ''] = fields;
  if (READ_CALLS.has(call)) {
    const path = await readlink(`/proc/${pid}/fd/${Number(first)}`).catch(() => '');
    if (!path.startsWith('/')) return undefined; // a pipe or socket of ours, not a named fifo
    return (await isFifo(path)) ? { kind: 'read', path } : undefined;
  }
  if (!OPEN_CALLS.has(call)) return undefined;
  // open(path, …) takes the path first; openat/openat2(dirfd, path, …) second.
  const openat = call !== '2';
  const name = readCString(pid, BigInt(openat ? second : first));
  if (name === undefined || name === '') return undefined;
  const base =
    !openat || AT_FDCWD.has(first)
      ? await readlink(`/proc/${pid}/cwd`)
      : await readlink(`/proc/${pid}/fd/${Number(first)}`);
  const path = resolve(base, name);
  return (await isFifo(path)) ? { kind: 'open', path } : undefined;
}

async function isFifo(path: string): Promise<boolean> {
  return lstat(path).then(
    (stats) => stats.isFIFO(),
    () => false,
  );
}

/** A NUL-terminated string at `address` in the memory of `pid` (at most 4 KiB). */
function readCString(pid: number, address: bigint): string | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(`/proc/${pid}/mem`, 'r');
    const buffer = Buffer.alloc(4096);
    const read = readSync(fd, buffer, 0, buffer.length, address);
    const end = buffer.subarray(0, read).indexOf(0);
    return end < 0 ? undefined : buffer.subarray(0, end).toString('utf8');
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * Opens the write end of the fifo at `path` without blocking (no reader: `ENXIO`, nothing
 * happens), never through a symlink, and closes it at once: a reader blocked in `open` goes on
 * and reads end-of-file. True when it was a fifo and was opened.
 */
export function letFifoThrough(path: string): boolean {
  let fd: number | undefined;
  try {
    fd = openSync(path, constants.O_WRONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
    return fstatSync(fd).isFIFO();
  } catch {
    return false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** The `.lock` files `pid` holds open (git keeps its lock files open until it commits them). */
export async function heldLockFiles(pid: number): Promise<string[]> {
  const fds = await readdir(`/proc/${pid}/fd`).catch(() => [] as string[]);
  const held: string[] = [];
  for (const fd of fds) {
    const target = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '');
    if (target.startsWith('/') && target.endsWith('.lock')) held.push(target);
  }
  return held;
}

/** Removes lock files a git of ours held when it was killed (it can no longer finish them). */
export async function removeLockFiles(paths: readonly string[]): Promise<void> {
  await Promise.all(paths.map((path) => rm(path, { force: true }).catch(() => undefined)));
}

/** What a git that ran out of time waits on, when `/proc` tells: a path for its timeout error. */
export async function waitingOn(pid: number): Promise<string | undefined> {
  const block = await fifoBlock(pid).catch(() => undefined);
  if (block !== undefined) return block.path;
  const fields = (await readFile(`/proc/${pid}/syscall`, 'utf8').catch(() => '')).split(' ');
  const [call = '', first = ''] = fields;
  if (!READ_CALLS.has(call)) return undefined;
  const path = await readlink(`/proc/${pid}/fd/${Number(first)}`).catch(() => '');
  return path.startsWith('/') ? path : undefined;
}
