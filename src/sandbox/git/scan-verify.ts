import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { open, readlink, realpath } from 'node:fs/promises';
import { join } from 'node:path';
import type { RawTreeChange } from '../raw-tree-diff.js';

/**
 * Why a full scan's result is checked after the fact (issue 35, item 5): git's `add -A` walks
 * the tree by path, so a process still running in the sandbox that swaps a folder for a symlink
 * (`d` → the state folder) between git's look at `d` and its read of `d/token.json` makes git
 * store a file from outside the sandbox under a sandbox path. No option of git stops that.
 *
 * So every blob or symlink the scan stored anew is read again the one way that cannot be
 * redirected: the file is opened with `O_NOFOLLOW`, and the kernel is asked where the open file
 * really is (`/proc/self/fd/N`). Only when that is the entry's own place in the tree, and the
 * bytes read through that descriptor hash to what git stored, is the entry kept. Anything else
 * (a symlink on the way, a file that is somewhere else, other bytes) is taken out of the
 * snapshot: an added path is dropped, a modified one keeps its previous version. A file a
 * process legitimately rewrote during the scan is caught too; it is recorded by the next
 * snapshot. Cost: one read of what the scan stored anew (O(changed), see bench/scan-verify.ts).
 */
export interface VerifyResult {
  /** Entries to put back as they were (`mode`/`sha` of the previous tree, or removed). */
  revert: Array<{ path: string; mode: string; sha: string }>;
}

const GITLINK = '160000';
const SYMLINK = '120000';
const NULL_SHA = /^0+$/;
/** Files checked at once (each holds one descriptor while it is read). */
const PARALLEL = 16;

/** git's blob id of `content` (sha1 stores; a sha256 store gives its hash length). */
function blobId(content: Buffer, length: number): string {
  const hash = createHash(length === 64 ? 'sha256' : 'sha1');
  hash.update(`blob ${content.length}\0`);
  hash.update(content);
  return hash.digest('hex');
}

const PROC_FD = '/proc/self/fd';

/** Where the kernel says descriptor `fd` is open (Linux), or undefined where it cannot say. */
async function whereOpen(fd: number): Promise<string | undefined> {
  return readlink(join(PROC_FD, String(fd))).catch(() => undefined);
}

/**
 * Reads the entry at `relPath` under `root` (a real path, no symlink in it) without following
 * any symlink on the way: the bytes of a regular file, or the target of a symlink. Undefined
 * when the entry is not where it should be (a symlink on the way, gone, another type).
 */
async function readInPlace(
  root: string,
  relPath: string,
  symlink: boolean,
): Promise<Buffer | undefined> {
  const parts = relPath.split('/');
  const name = parts.pop()!;
  const parent = join(root, ...parts);
  // A symlink is read through its folder, opened and located the same way as a file is.
  const target = symlink ? parent : join(parent, name);
  const flags = symlink
    ? constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW
    : constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
  const handle = await open(target, flags).catch(() => undefined);
  if (handle === undefined) return undefined;
  try {
    const stats = await handle.stat();
    if (symlink ? !stats.isDirectory() : !stats.isFile()) return undefined;
    const where = await whereOpen(handle.fd);
    if (where === undefined) {
      // No /proc (not Linux): the weaker check, the path resolved now.
      if ((await realpath(target).catch(() => undefined)) !== target) return undefined;
    } else if (where !== target) {
      return undefined;
    }
    if (!symlink) return await handle.readFile();
    const through =
      where === undefined ? join(target, name) : join(PROC_FD, String(handle.fd), name);
    return await readlink(through, { encoding: 'buffer' }).catch(() => undefined);
  } finally {
    await handle.close();
  }
}

/**
 * Checks what a full scan stored anew (`changes`: the raw diff from the previous tree to the
 * scanned one) against the tree as it is on disk, read without following symlinks; returns the
 * entries to take back out. `root` must be the tree's real path.
 */
export async function verifyScan(
  root: string,
  changes: readonly RawTreeChange[],
): Promise<VerifyResult> {
  const toCheck = changes.filter(
    (change) =>
      change.status !== 'D' && change.dstMode !== GITLINK && !NULL_SHA.test(change.dstSha),
  );
  const revert: VerifyResult['revert'] = [];
  let next = 0;
  const worker = async () => {
    while (next < toCheck.length) {
      const change = toCheck[next++]!;
      const content = await readInPlace(root, change.path, change.dstMode === SYMLINK);
      if (content !== undefined && blobId(content, change.dstSha.length) === change.dstSha) {
        continue;
      }
      revert.push({ path: change.path, mode: change.srcMode, sha: change.srcSha });
    }
  };
  await Promise.all(Array.from({ length: Math.min(PARALLEL, toCheck.length) }, worker));
  revert.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return { revert };
}

/** `update-index --index-info` lines that put `revert` back (mode 0: remove the entry). */
export function revertIndexInfo(revert: VerifyResult['revert']): string {
  return revert
    .map(({ path, mode, sha }) =>
      NULL_SHA.test(sha) || mode === '000000'
        ? `0 ${'0'.repeat(sha.length)}\t${path}\0`
        : `${mode} ${sha}\t${path}\0`,
    )
    .join('');
}

/** Largest number of paths a warning names. */
const MAX_NAMED = 10;

/** The snapshot warning for entries a full scan's check took back out. */
export function scanRaceWarning(paths: readonly string[]): string {
  const named = paths
    .slice(0, MAX_NAMED)
    .map((path) => `"${path}"`)
    .join(', ');
  const more = paths.length > MAX_NAMED ? ` and ${paths.length - MAX_NAMED} more` : '';
  return (
    `${paths.length} path(s) were skipped by this snapshot because they changed or were reached through a symlink while it read them: ${named}${more}. ` +
    'They keep their previous version here; the next snapshot records them if they are plain files in the sandbox.'
  );
}
