import { randomBytes } from 'node:crypto';
import { lstat, mkdir, readFile, realpath, rename, rm, rmdir } from 'node:fs/promises';
import { dirname, join, posix } from 'node:path';
import { AgentsError, AgentsErrorCode, errorMessage } from '../errors.js';
import { nulList, objectTypes, type IndexGit } from './git/index-git.js';
import type { RawTreeChange } from './raw-tree-diff.js';
import { anchoredPattern, formatSize, type OversizedFile } from './size-cap.js';
import { writeSizeCapSection } from './sandbox-excludes.js';
import { writeFileAtomic } from '../core/atomic-write.js';

/** Where the skipped files are recorded in the run dir, so a reopened sandbox knows them. */
const STATE_FILE = 'large-files.json';
/** Tree modes of regular files; symlinks and gitlinks are never capped. */
const REGULAR_MODES = new Set(['100644', '100755']);
/** lstat calls in flight at once. */
const LSTAT_CONCURRENCY = 32;

interface SkippedFile {
  tracked: boolean;
  size: number;
  /** Warned about in this process already (not persisted: each session lists it once). */
  warned: boolean;
}

/** Files moved out of the tree for the length of a restore; see {@link LargeFileGuard.protect}. */
export interface ProtectedFiles {
  /**
   * Moves the files back. `restored`: whether the restore's `read-tree` ran; then the index
   * entries are fixed up for the new tree. Throws `ROLLBACK_FAILED` naming any file it could
   * not put back (it stays in the run dir's aside folder).
   */
  putBack(restored: boolean): Promise<void>;
}

/**
 * Keeps files over the sandbox's size cap out of its snapshots, cheaply: nothing runs per
 * snapshot while no file is over the cap, except one `lstat` per added or modified file.
 *
 * A new file over the cap is dropped from the private index and excluded by an anchored pattern
 * in the private exclude file, so later `add -A` calls skip it. A tracked file that grows over
 * the cap gets its last captured blob back in the index, marked `skip-worktree`, so `add -A`
 * leaves it alone and snapshots keep the old version. While any file is skipped, each
 * snapshot `lstat`s it first and lets it back in once it is gone, no longer a regular file, or
 * under the cap. Restores move skipped files out of the way, so `read-tree --reset` can neither
 * overwrite nor delete them.
 */
export class LargeFileGuard {
  /** The cap in bytes; `0` when off. */
  readonly maxFileBytes: number;
  readonly #root: string;
  readonly #runDir: string;
  readonly #excludeFile: string;
  readonly #skipped = new Map<string, SkippedFile>();

  private constructor(root: string, runDir: string, excludeFile: string, maxFileBytes: number) {
    this.#root = root;
    this.#runDir = runDir;
    this.#excludeFile = excludeFile;
    this.maxFileBytes = maxFileBytes;
  }

  /**
   * Makes the guard of a sandbox, picking up the files an earlier process skipped (recorded in
   * the run dir) and putting their patterns back into the exclude file, which the caller has
   * just (re)written.
   */
  static async open(init: {
    root: string;
    runDir: string;
    excludeFile: string;
    maxFileBytes: number;
  }): Promise<LargeFileGuard> {
    const guard = new LargeFileGuard(init.root, init.runDir, init.excludeFile, init.maxFileBytes);
    for (const { path, tracked } of await readState(join(init.runDir, STATE_FILE)))
      guard.#skipped.set(path, { tracked, size: 0, warned: false });
    if ([...guard.#skipped.values()].some((entry) => !entry.tracked)) await guard.#writeExcludes();
    return guard;
  }

  /** The files skipped now, sorted by path. */
  list(): OversizedFile[] {
    return [...this.#skipped]
      .map(([path, { size, tracked }]) => ({ path, size, tracked }))
      .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  }

  /**
   * Before a folder sandbox's first `add -A`: excludes the untracked files over the cap, so
   * the base snapshot never reads them (one `ls-files` over the tree, once per sandbox).
   */
  async excludeUntracked(git: IndexGit): Promise<void> {
    if (this.maxFileBytes === 0) return;
    const listed = (
      await git([
        '-c',
        `core.excludesFile=${this.#excludeFile}`,
        '-c',
        'core.fsmonitor=false',
        'ls-files',
        '-z',
        '--others',
        '--exclude-standard',
      ])
    )
      .split('\0')
      .filter((path) => path !== '');
    const over = await this.#oversized(listed);
    if (over.length === 0) return;
    for (const { path, size } of over)
      this.#skipped.set(path, { tracked: false, size, warned: false });
    await this.#save();
    await this.#writeExcludes();
  }

  /**
   * Before a snapshot's `add -A`: lets skipped files back in once they are gone, no longer
   * regular files, or within the cap (their next snapshot captures them, or their deletion).
   * No git command unless one is let back in; nothing at all while none is skipped.
   */
  async release(git: IndexGit): Promise<void> {
    if (this.#skipped.size === 0) return;
    const released: [string, SkippedFile][] = [];
    await forEachLimited([...this.#skipped], async ([path, entry]) => {
      const stats = await lstat(this.#absolute(path)).catch(() => undefined);
      if (stats?.isFile() === true && this.#isOver(stats.size)) entry.size = stats.size;
      else released.push([path, entry]);
    });
    if (released.length === 0) return;
    // Dropping the skip-worktree entry (rather than clearing its bit, which fails for a path
    // the index lacks) lets `add -A` record the file as it is now, or its deletion.
    const tracked = released.filter(([, entry]) => entry.tracked).map(([path]) => path);
    if (tracked.length > 0)
      await git(['update-index', '-z', '--force-remove', '--stdin'], nulList(tracked));
    for (const [path] of released) this.#skipped.delete(path);
    if (released.some(([, entry]) => !entry.tracked)) await this.#writeExcludes();
    await this.#save();
  }

  /**
   * After a snapshot's `add -A` and `write-tree`, given the raw diff from the head tree to the
   * new tree: takes added or modified regular files over the cap back out of the index (see the
   * class summary). Returns the changes that remain, or `undefined` when nothing was over the
   * cap (the index was not touched; the caller keeps its tree).
   */
  async filter(
    changes: readonly RawTreeChange[],
    git: IndexGit,
  ): Promise<RawTreeChange[] | undefined> {
    if (this.maxFileBytes === 0) return undefined;
    const candidates = changes.filter(
      (change) => change.status !== 'D' && REGULAR_MODES.has(change.dstMode),
    );
    if (candidates.length === 0) return undefined;
    const over = await this.#oversized(candidates.map((change) => change.path));
    if (over.length === 0) return undefined;
    const byPath = new Map(candidates.map((change) => [change.path, change]));
    const dropped = over.map(({ path, size }) => {
      const change = byPath.get(path)!;
      return { change, size, tracked: !/^0+$/.test(change.srcMode) };
    });
    // Recorded before the index changes: a crash in between leaves an entry that the next
    // snapshot re-checks, never a skip-worktree bit nobody knows about.
    for (const { change, size, tracked } of dropped) {
      const warned = this.#skipped.get(change.path)?.warned ?? false;
      this.#skipped.set(change.path, { tracked, size, warned });
    }
    await this.#save();
    if (dropped.some(({ tracked }) => !tracked)) await this.#writeExcludes();
    // Mode 0 removes an entry (the file becomes untracked, and excluded); otherwise the head's
    // blob goes back in.
    await git(
      ['update-index', '-z', '--index-info'],
      dropped
        .map(({ change, tracked }) =>
          tracked
            ? `${change.srcMode} ${change.srcSha}\t${change.path}\0`
            : `0 ${change.srcSha}\t${change.path}\0`,
        )
        .join(''),
    );
    const tracked = dropped.filter((entry) => entry.tracked).map(({ change }) => change.path);
    if (tracked.length > 0)
      await git(['update-index', '-z', '--skip-worktree', '--stdin'], nulList(tracked));
    const droppedPaths = new Set(dropped.map(({ change }) => change.path));
    return changes.filter((change) => !droppedPaths.has(change.path));
  }

  /** Warnings for skipped files not warned about yet in this process (each is listed once). */
  takeWarnings(): string[] {
    const warnings: string[] = [];
    for (const { path, size, tracked } of this.list()) {
      const entry = this.#skipped.get(path)!;
      if (entry.warned) continue;
      entry.warned = true;
      warnings.push(
        `"${path}" is ${formatSize(size)}, over the snapshot size cap of ${formatSize(this.maxFileBytes)} (maxFileBytes), so it is not captured${tracked ? ' (snapshots keep its last captured version)' : ''}: a rollback will not restore or remove it; raise maxFileBytes or add it to .gitignore.`,
      );
    }
    return warnings;
  }

  /**
   * Before a restore's `read-tree -u --reset <target>`: moves the skipped files out of the tree
   * (into the run dir), because `read-tree --reset` would overwrite an untracked one the target
   * has, delete a tracked one the target lacks, and refuse (`not uptodate`) a `skip-worktree`
   * one that differs. Throws `ROLLBACK_FAILED`, before anything moved, when the target has a
   * folder at a skipped file's path or a file at one of its parent folders (the file could not
   * be put back without replacing it). Returns `undefined` when nothing is skipped.
   */
  async protect(target: string, git: IndexGit): Promise<ProtectedFiles | undefined> {
    const present: string[] = [];
    await forEachLimited([...this.#skipped.keys()], async (path) => {
      if ((await lstat(this.#absolute(path)).catch(() => undefined))?.isFile() === true)
        present.push(path);
    });
    if (present.length === 0) return undefined;
    present.sort();
    const types = await objectTypes(
      git,
      target,
      present.flatMap((path) => [path, ...parents(path)]),
    );
    const blocked = present.filter(
      (path) =>
        !['blob', 'missing'].includes(types.get(path) ?? '') ||
        parents(path).some((parent) => !['tree', 'missing'].includes(types.get(parent) ?? '')),
    );
    if (blocked.length > 0) {
      throw new AgentsError(
        AgentsErrorCode.RollbackFailed,
        `Restoring to ${target} would replace ${blocked.map((path) => `"${path}"`).join(', ')}, over the snapshot size cap and never captured, with a folder or a file of the snapshot; move ${blocked.length === 1 ? 'it' : 'them'} out of the sandbox (or raise maxFileBytes and snapshot again) and retry.`,
        { details: { target, paths: blocked } },
      );
    }
    const aside = join(this.#runDir, `large-files-aside-${randomBytes(4).toString('hex')}`);
    await mkdir(aside);
    const moved: { path: string; temp: string }[] = [];
    try {
      for (const [index, path] of present.entries()) {
        const temp = join(aside, String(index));
        await rename(this.#absolute(path), temp);
        moved.push({ path, temp });
      }
    } catch (error) {
      await this.#putBack(moved, aside);
      throw new AgentsError(
        AgentsErrorCode.RollbackFailed,
        `Could not move files over the snapshot size cap out of the way for the restore to ${target}: ${errorMessage(error)}; nothing was restored.`,
        { cause: error, details: { target } },
      );
    }
    return {
      putBack: async (restored) => {
        await this.#putBack(moved, aside);
        if (!restored) return;
        // The index now holds the target: its blob for a path it has (kept, skip-worktree),
        // nothing for one it lacks (untracked, excluded).
        for (const { path } of moved) {
          const entry = this.#skipped.get(path);
          if (entry !== undefined) entry.tracked = types.get(path) === 'blob';
        }
        await this.#save();
        await this.#writeExcludes();
        const tracked = moved.map(({ path }) => path).filter((path) => types.get(path) === 'blob');
        if (tracked.length > 0)
          await git(['update-index', '-z', '--skip-worktree', '--stdin'], nulList(tracked));
      },
    };
  }

  async #putBack(moved: readonly { path: string; temp: string }[], aside: string): Promise<void> {
    const failed: string[] = [];
    let firstError: unknown;
    for (const { path, temp } of moved) {
      const destination = this.#absolute(path);
      try {
        const folder = dirname(destination);
        await mkdir(folder, { recursive: true });
        // read-tree may have remade the parent folders; never move the file through a link.
        if ((await realpath(folder)) !== folder) throw new Error(`${folder} is not a plain folder`);
        // An empty folder is what read-tree makes for a submodule of the target.
        if ((await lstat(destination).catch(() => undefined))?.isDirectory() === true)
          await rmdir(destination);
        await rename(temp, destination);
      } catch (error) {
        failed.push(path);
        firstError ??= error;
      }
    }
    if (failed.length === 0) {
      await rmdir(aside).catch(() => rm(aside, { recursive: true, force: true }));
      return;
    }
    throw new AgentsError(
      AgentsErrorCode.RollbackFailed,
      `Could not put back ${failed.map((path) => `"${path}"`).join(', ')} (over the snapshot size cap) after the restore: ${errorMessage(firstError)}. The files are in ${aside}; move them back before closing the sandbox.`,
      { cause: firstError, details: { paths: failed, aside } },
    );
  }

  async #oversized(paths: readonly string[]): Promise<{ path: string; size: number }[]> {
    const over: { path: string; size: number }[] = [];
    await forEachLimited(paths, async (path) => {
      const stats = await lstat(this.#absolute(path)).catch(() => undefined);
      if (stats?.isFile() === true && this.#isOver(stats.size))
        over.push({ path, size: stats.size });
    });
    return over.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  }

  #isOver(size: number): boolean {
    return this.maxFileBytes > 0 && size > this.maxFileBytes;
  }

  #absolute(path: string): string {
    return join(this.#root, ...path.split('/'));
  }

  /** Rewrites the exclude file's size-cap section: one anchored pattern per untracked file. */
  async #writeExcludes(): Promise<void> {
    const untracked = this.list().filter((file) => !file.tracked);
    await writeSizeCapSection(
      this.#excludeFile,
      untracked.map((file) => anchoredPattern(file.path)),
    );
  }

  async #save(): Promise<void> {
    const file = join(this.#runDir, STATE_FILE);
    if (this.#skipped.size === 0) {
      await rm(file, { force: true });
      return;
    }
    const state = {
      version: 1,
      skipped: this.list().map(({ path, tracked }) => ({ path, tracked })),
    };
    await writeFileAtomic(file, JSON.stringify(state, null, 2));
  }
}

async function readState(file: string): Promise<{ path: string; tracked: boolean }[]> {
  try {
    const parsed: unknown = JSON.parse(await readFile(file, 'utf8'));
    const skipped = (parsed as { skipped?: unknown }).skipped;
    if (!Array.isArray(skipped)) return [];
    return skipped.flatMap((entry: unknown) => {
      const { path, tracked } = (entry ?? {}) as { path?: unknown; tracked?: unknown };
      return typeof path === 'string' &&
        path !== '' &&
        !path.includes('\0') &&
        !posix.isAbsolute(path) &&
        !path.split('/').includes('..') &&
        typeof tracked === 'boolean'
        ? [{ path, tracked }]
        : [];
    });
  } catch {
    return [];
  }
}

/** The parent folders of a tree path, outermost first (`a/b/c` → `a`, `a/b`). */
function parents(path: string): string[] {
  const parts = path.split('/');
  return parts.slice(0, -1).map((_, index) => parts.slice(0, index + 1).join('/'));
}

async function forEachLimited<T>(
  items: readonly T[],
  work: (item: T) => Promise<void>,
): Promise<void> {
  for (let start = 0; start < items.length; start += LSTAT_CONCURRENCY)
    await Promise.all(items.slice(start, start + LSTAT_CONCURRENCY).map(work));
}
