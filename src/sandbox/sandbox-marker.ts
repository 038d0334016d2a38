import { isProcessAlive } from '../core/process-alive.js';
import { randomBytes } from 'node:crypto';
import { closeSync, constants, fstatSync, openSync, writeSync } from 'node:fs';
import { mkdir, readdir, readFile, realpath, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AgentsError, AgentsErrorCode, errorMessage } from '../errors.js';
import { writeFileAtomic, writeFileAtomicSync } from '../core/atomic-write.js';
import type { NestedRepo } from './nested-repos.js';

/** Marker written into each sandbox's run dir; prune and remove only touch folders that carry it. */
export const MARKER_FILE = 'sandbox.json';
export const MARKER_KIND = 'agents-sandbox';
/** Version 2: the sandbox is a repository of its own with a private snapshot store (run/git). */
export const MARKER_VERSION = 2;
/** Lock file in the run dir while a process uses a reopenable sandbox. */
const LOCK_FILE = 'lock';

export const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

/** The id of a new sandbox: `id` when valid (else `SANDBOX_FAILED`), a random one when absent. */
export function newSandboxId(id: string | undefined): string {
  if (id === undefined) return randomBytes(6).toString('hex');
  if (!ID_PATTERN.test(id)) {
    throw new AgentsError(
      AgentsErrorCode.SandboxFailed,
      `Sandbox id "${id}" is not valid: use 1-64 letters, digits, "_" or "-", starting with a letter or digit.`,
      { details: { id } },
    );
  }
  return id;
}
export const SHA_PATTERN = /^[0-9a-f]{4,64}$/;

/** What a sandbox records about itself in `<container>/run/sandbox.json`. */
export interface SandboxMarker {
  kind: typeof MARKER_KIND;
  version: typeof MARKER_VERSION;
  id: string;
  /** `repository`: made from a git repo's commit; `folder`: a copy of a plain folder. */
  mode: 'repository' | 'folder';
  source: string;
  root: string;
  createdAt: number;
  /** Revision the sandbox was made from (as given; `from: revision` and older markers). */
  revision?: string;
  /** What the base was made from (absent in older markers: `revision` then tells). */
  from?: 'worktree' | 'head' | 'revision' | 'folder';
  /** `from: worktree`: paths where the base differs from `sourceCommit`. */
  uncommitted?: number;
  /** The user's commit the sandbox was made from (repository mode). */
  sourceCommit?: string;
  /** Base snapshot sha (in the private store). */
  base?: string;
  /** Latest snapshot sha, kept current so a reopened sandbox continues from it. */
  head?: string;
  /** The snapshot size cap (`0`: off), kept so a reopened sandbox uses the same one. */
  maxFileBytes?: number;
  /**
   * The nested repositories and stray `.git` entries known at snapshot `head` (see
   * `NestedRepoTracker`), so a reopen (every read-only command) need not list the whole head
   * tree to find them again. Used only while `head` equals the marker's head.
   */
  nested?: { head: string; repos: NestedRepo[] };
}

const NESTED_KINDS: readonly string[] = ['repository', 'git-file', 'git-dir'];

/** The marker's `nested` record when well-formed, else undefined (the reopen scans). */
function readNested(value: unknown): SandboxMarker['nested'] {
  if (typeof value !== 'object' || value === null) return undefined;
  const { head, repos } = value as { head?: unknown; repos?: unknown };
  if (typeof head !== 'string' || !SHA_PATTERN.test(head) || !Array.isArray(repos))
    return undefined;
  const valid = repos.every(
    (repo: unknown) =>
      typeof repo === 'object' &&
      repo !== null &&
      typeof (repo as { path?: unknown }).path === 'string' &&
      NESTED_KINDS.includes((repo as { kind?: unknown }).kind as string),
  );
  return valid ? { head, repos: repos as NestedRepo[] } : undefined;
}

/**
 * Reads a run dir's marker; undefined when missing, unreadable, or not ours. A marker of the
 * first design (version 1, a worktree inside the user's repo) is reported as `legacy`.
 */
export async function readMarker(runDir: string): Promise<SandboxMarker | 'legacy' | undefined> {
  let record: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(await readSettled(join(runDir, MARKER_FILE)));
    if (typeof parsed !== 'object' || parsed === null) return undefined;
    record = parsed as Record<string, unknown>;
  } catch {
    return undefined;
  }
  if (record['kind'] !== MARKER_KIND) return undefined;
  if (record['version'] !== MARKER_VERSION) return 'legacy';
  if (typeof record['id'] !== 'string' || !ID_PATTERN.test(record['id'])) return undefined;
  if (record['mode'] !== 'repository' && record['mode'] !== 'folder') return undefined;
  const optionalSha = (key: string): Record<string, string> => {
    const value = record[key];
    return typeof value === 'string' && SHA_PATTERN.test(value) ? { [key]: value } : {};
  };
  const maxFileBytes = record['maxFileBytes'];
  const nested = readNested(record['nested']);
  return {
    kind: MARKER_KIND,
    version: MARKER_VERSION,
    id: record['id'],
    mode: record['mode'],
    source: String(record['source']),
    root: String(record['root']),
    createdAt: typeof record['createdAt'] === 'number' ? record['createdAt'] : 0,
    ...(typeof record['revision'] === 'string' ? { revision: record['revision'] } : {}),
    ...(['worktree', 'head', 'revision', 'folder'].includes(record['from'] as string)
      ? { from: record['from'] as NonNullable<SandboxMarker['from']> }
      : {}),
    ...(typeof record['uncommitted'] === 'number' ? { uncommitted: record['uncommitted'] } : {}),
    ...optionalSha('sourceCommit'),
    ...optionalSha('base'),
    ...optionalSha('head'),
    ...(typeof maxFileBytes === 'number' && Number.isSafeInteger(maxFileBytes) && maxFileBytes >= 0
      ? { maxFileBytes }
      : {}),
    ...(nested === undefined ? {} : { nested }),
  };
}

/** Writes the marker file (temp file + rename, so a crash leaves the old or the new one). */
export async function writeMarker(runDir: string, marker: SandboxMarker): Promise<void> {
  await writeFileAtomic(join(runDir, MARKER_FILE), JSON.stringify(marker, null, 2));
}

/** Largest marker rewritten in place: one page, which one `write` replaces whole or not at all. */
const IN_PLACE_MAX_BYTES = 4096;

/**
 * {@link writeMarker} on a snapshot's hot path (the head moves on every snapshot, and a
 * checkpoint may name it as soon as the call ends, so it is written before the snapshot
 * returns; issue 38). Rewritten in place when it fits one page: one `write` at offset 0 of the
 * existing file, padded with trailing spaces (valid JSON) so it never shrinks and no truncate
 * follows. A temp file renamed over the old one cost a file creation, a rename and the old
 * inode's release, and ext4 starts writing a file renamed over another at once (auto_da_alloc):
 * on a loaded machine those journal waits were a large part of the snapshot tail (issue 37).
 *
 * What the crash proof needs holds: a SIGKILL (what the crash harness sends) leaves every
 * returned `write` in the page cache, visible to the process that continues, and the kernel
 * checks for a fatal signal only between pages of a write, so the page holds the old marker or
 * the new one, never a mix. No fsync, as before: nothing on the snapshot path syncs (packs and
 * refs neither), so a power cut was never covered. Readers in other processes read until two
 * reads agree (see {@link readSettled}). Larger markers, or no marker yet, go through a rename.
 */
export function writeMarkerSync(runDir: string, marker: SandboxMarker): void {
  const path = join(runDir, MARKER_FILE);
  const text = JSON.stringify(marker, null, 2);
  if (!rewriteInPlace(path, text)) writeFileAtomicSync(path, text);
}

/** Writes `text` over the start of the file at `path`, padded to its size; false: not done. */
function rewriteInPlace(path: string, text: string): boolean {
  let fd: number;
  try {
    fd = openSync(path, constants.O_WRONLY | constants.O_NOFOLLOW);
  } catch {
    return false;
  }
  try {
    const size = fstatSync(fd).size;
    const bytes = Buffer.byteLength(text);
    const length = Math.max(size, bytes);
    if (length > IN_PLACE_MAX_BYTES) return false;
    const data = Buffer.alloc(length, 0x20);
    data.write(text, 0, 'utf8');
    return writeSync(fd, data, 0, length, 0) === length;
  } catch {
    return false;
  } finally {
    closeSync(fd);
  }
}

/**
 * The marker's text, read until two reads agree: a snapshot rewrites it in place (see
 * {@link writeMarkerSync}), and a read racing that write could see part of each.
 */
async function readSettled(path: string): Promise<string> {
  let text = await readFile(path, 'utf8');
  for (let attempt = 0; attempt < 5; attempt++) {
    const again = await readFile(path, 'utf8');
    if (again === text) break;
    text = again;
  }
  return text;
}

/** Makes `dir` (with parents) for a new sandbox and checks that it is empty. */
export async function prepareEmptyDir(dir: string, id: string): Promise<string> {
  await mkdir(dir, { recursive: true });
  if ((await readdir(dir)).length > 0) {
    throw new AgentsError(
      AgentsErrorCode.SandboxFailed,
      `Cannot create sandbox "${id}" in ${dir}: the folder is not empty; choose an empty folder or remove it.`,
      { details: { id, dir } },
    );
  }
  return realpath(dir);
}

/**
 * Last time the sandbox did anything: its private index changes on every snapshot, its marker
 * when the head moves or a reopen changes its settings, its lock file when a run takes it.
 */
export async function lastActivity(runDir: string, marker: SandboxMarker): Promise<number> {
  let latest = marker.createdAt;
  for (const name of ['index', MARKER_FILE, LOCK_FILE]) {
    try {
      latest = Math.max(latest, (await stat(join(runDir, name))).mtimeMs);
    } catch {
      // Missing (no snapshot yet, not locked): says nothing.
    }
  }
  return latest;
}

/** The live process holding the run lock of a run dir, or undefined (no lock, or a stale one). */
export async function lockHolder(runDir: string): Promise<number | undefined> {
  let pid: unknown;
  try {
    pid = (JSON.parse(await readFile(join(runDir, LOCK_FILE), 'utf8')) as { pid?: unknown }).pid;
  } catch {
    return undefined;
  }
  if (typeof pid !== 'number' || !Number.isInteger(pid) || pid <= 0) return undefined;
  return isProcessAlive(pid) ? pid : undefined;
}

function inUse(id: string, holder: number): AgentsError {
  return new AgentsError(
    AgentsErrorCode.RunActive,
    `Sandbox "${id}" is in use by process ${holder} (a run or a rollback on its thread); wait for it to finish before starting another.`,
    { details: { sandboxId: id, pid: holder } },
  );
}

/**
 * Takes the run lock of a run dir (a `lock` file holding this process id). Throws `RUN_ACTIVE`
 * while a live process holds it; a lock left by a dead process is taken over. Returns the file.
 */
export async function acquireRunLock(runDir: string, id: string): Promise<string> {
  const file = join(runDir, LOCK_FILE);
  for (let attempt = 0; ; attempt++) {
    try {
      await writeFile(file, JSON.stringify({ pid: process.pid, since: Date.now() }), {
        flag: 'wx',
      });
      return file;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) {
        const holder = await lockHolder(runDir);
        if (holder !== undefined) throw inUse(id, holder);
        throw new AgentsError(
          AgentsErrorCode.RunActive,
          `Cannot lock sandbox "${id}" (${file}): ${errorMessage(error)}.`,
          { cause: error, details: { sandboxId: id } },
        );
      }
      const holder = await lockHolder(runDir);
      if (holder !== undefined) throw inUse(id, holder);
      // Left by a process that died: take it over. A narrow race remains when two processes
      // take over the same stale lock at the same moment; a live lock is never taken.
      await rm(file, { force: true });
    }
  }
}
