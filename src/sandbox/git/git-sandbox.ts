import { rm } from 'node:fs/promises';
import { AgentsError, AgentsErrorCode } from '../../errors.js';
import { killPoint } from '../../core/kill-point.js';
import type { SandboxBaseOrigin, SandboxWarning } from '../base-origin.js';
import type { ChangedPath, SkippedPath } from '../../core/change-record.js';
import type { LargeFileGuard } from '../large-files.js';
import { parseRawTreeDiff } from '../raw-tree-diff.js';
import type { OversizedFile } from '../size-cap.js';
import { nestedRepoWarnings, type NestedRepo, type NestedRepoTracker } from '../nested-repos.js';
import type { SandboxPathMap } from '../path-map.js';
import { writeMarkerSync, type SandboxMarker } from '../sandbox-marker.js';
import {
  addAll,
  indexGitlinks,
  assertSha,
  diffSnapshots,
  SNAPSHOT_REF_PREFIX,
  storeGit,
  storeIndexGit,
} from './snapshot-store.js';
import {
  resolveRestoreTarget,
  restoreChangedPaths,
  restoreFull,
  unwatchedReason,
  type SandboxParts,
} from './snapshot-restore.js';
import type { RestoreResult, Sandbox, Snapshot } from '../types.js';
import type { SnapshotStore } from '../backend.js';
import { gitSnapshotStore } from './git-store.js';
import { UnrecordablePaths } from '../unrecordable-paths.js';
import { revertIndexInfo, scanRaceWarning, verifyScan } from './scan-verify.js';
import { IndexLag, WatchedSnapshots } from './watched-snapshots.js';

/** What {@link GitSandbox} is made from (by `createSandbox` or a reopen). */
export interface GitSandboxInit {
  id: string;
  kind: 'repository' | 'folder';
  root: string;
  source: string;
  sourceCommit: string | undefined;
  baseOrigin: SandboxBaseOrigin;
  baseWarnings: readonly SandboxWarning[];
  container: string;
  runDir: string;
  base: string;
  baseTree: string;
  timeoutMs: number | undefined;
  paths: SandboxPathMap;
  /** The marker as written; `head` in it is rewritten whenever the head moves. */
  marker: SandboxMarker;
  /** Head to continue from when reopening (default `base`). */
  head?: { sha: string; tree: string };
  /** Run lock held by this process (released on close). */
  lockFile?: string;
  excludeFile: string;
  nested: NestedRepoTracker;
  largeFiles: LargeFileGuard;
  /** Removes the sandbox's folders (on `close()` with `remove`). */
  remove: () => Promise<void>;
}

/**
 * One sandbox: a tree of its own with a tool-visible repository in it, and a private snapshot
 * store in the run dir (see `snapshot-store.ts`). Snapshot, restore and close are serialised so
 * `head` always names the latest snapshot.
 */
export class GitSandbox implements Sandbox {
  readonly id: string;
  readonly kind: 'repository' | 'folder';
  readonly root: string;
  readonly source: string;
  readonly sourceCommit: string | undefined;
  readonly baseOrigin: SandboxBaseOrigin;
  readonly baseWarnings: readonly SandboxWarning[];
  readonly runDir: string;
  readonly backend = 'git';
  readonly container: string;
  readonly store: SnapshotStore;
  readonly base: string;
  readonly paths: SandboxPathMap;
  readonly excludeFile: string;
  /** What snapshots skip, the watcher, the index lag: shared with restores (snapshot-restore.ts). */
  readonly #parts: SandboxParts;
  /** Warnings of full scans whose entries were taken back out (see scan-verify.ts). */
  readonly #scanWarnings: string[] = [];
  readonly #marker: SandboxMarker;
  readonly #lockFile: string | undefined;
  readonly #remove: () => Promise<void>;
  #head: string;
  #headTree: string;
  /** True when the nested-repo tracker's gitlinks are exactly the private index's. */
  #indexSettled = false;
  #queue: Promise<unknown> = Promise.resolve();
  #onCommit: ((sha: string) => void) | undefined;
  #closing: Promise<void> | undefined;

  constructor(init: GitSandboxInit) {
    this.id = init.id;
    this.kind = init.kind;
    this.root = init.root;
    this.source = init.source;
    this.sourceCommit = init.sourceCommit;
    this.baseOrigin = init.baseOrigin;
    this.baseWarnings = init.baseWarnings;
    this.runDir = init.runDir;
    this.container = init.container;
    this.store = gitSnapshotStore(init.runDir, init.root, { timeoutMs: init.timeoutMs });
    this.base = init.base;
    this.paths = init.paths;
    this.excludeFile = init.excludeFile;
    this.#head = init.head?.sha ?? init.base;
    this.#headTree = init.head?.tree ?? init.baseTree;
    this.#marker = init.marker;
    this.#lockFile = init.lockFile;
    this.#remove = init.remove;
    this.#parts = {
      id: init.id,
      root: init.root,
      runDir: init.runDir,
      paths: init.paths,
      timeoutMs: init.timeoutMs,
      largeFiles: init.largeFiles,
      nested: init.nested,
      unrecordable: new UnrecordablePaths(init.root),
      // Watcher and long-lived git processes of watched snapshots (started by a full scan).
      watched: new WatchedSnapshots({
        root: init.root,
        runDir: init.runDir,
        excludeFile: init.excludeFile,
        timeoutMs: init.timeoutMs,
        maxFileBytes: init.largeFiles.maxFileBytes,
      }),
      indexLag: new IndexLag(),
    };
  }

  get head(): string {
    return this.#head;
  }

  get maxFileBytes(): number {
    return this.#parts.largeFiles.maxFileBytes;
  }

  nestedRepos(): NestedRepo[] {
    return this.#parts.nested.list();
  }

  skippedPaths(): SkippedPath[] {
    const { largeFiles, nested, unrecordable } = this.#parts;
    const skipped: SkippedPath[] = [
      ...largeFiles.list().map(({ path, size }) => ({ path, reason: 'size-cap' as const, size })),
      ...nested.list().map(({ path }) => ({ path, reason: 'nested-repo' as const })),
      ...unrecordable.list(),
    ];
    return skipped.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  }

  oversizedFiles(): OversizedFile[] {
    return this.#parts.largeFiles.list();
  }

  onSnapshotCommit(listener: ((sha: string) => void) | undefined): void {
    this.#onCommit = listener;
  }

  snapshot(label: string, options: { signal?: AbortSignal } = {}): Promise<Snapshot> {
    return this.#exclusive(() => this.#snapshot(label, options.signal));
  }

  async diff(
    from: string,
    to: string,
    options: { signal?: AbortSignal } = {},
  ): Promise<ChangedPath[]> {
    this.#assertOpen();
    assertSha(from);
    assertSha(to);
    return diffSnapshots(this.runDir, this.root, from, to, this.#storeOptions(options.signal));
  }

  restore(sha: string, options: { signal?: AbortSignal } = {}): Promise<RestoreResult> {
    return this.#exclusive(() => this.#restore(sha, options.signal));
  }

  close(options: { remove?: boolean } = {}): Promise<void> {
    const remove = options.remove ?? true;
    this.#closing ??= this.#queue
      .catch(() => undefined)
      .then(async () => {
        await this.#parts.watched.shutdown();
        if (this.#lockFile !== undefined) await rm(this.#lockFile, { force: true });
        if (remove) await this.#remove();
      });
    return this.#closing;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  async #snapshot(label: string, signal: AbortSignal | undefined): Promise<Snapshot> {
    signal?.throwIfAborted();
    let watched: Snapshot | { reason: string };
    try {
      watched = await this.#watchedSnapshot(label);
    } catch (error) {
      // The watcher's change set was taken: without a watcher the next snapshot scans.
      this.#parts.watched.stop();
      throw error;
    }
    if ('sha' in watched) return watched;
    // The change set is unknown: scan the whole tree. A fresh watcher starts first, so whatever
    // changes from here on is seen by the next snapshot.
    this.#parts.watched.stop();
    await this.#parts.watched.start(this.#headTree);
    const snapshot = await this.#scanSnapshot(label, signal);
    return { ...snapshot, scan: 'full', scanReason: watched.reason };
  }

  /**
   * A snapshot from the watcher's change set (see watched-snapshots.ts), or why it cannot be
   * sure to give the tree `add -A` would.
   */
  async #watchedSnapshot(label: string): Promise<Snapshot | { reason: string }> {
    const unwatched = unwatchedReason(this.#parts);
    if (unwatched !== undefined) return { reason: unwatched };
    const built = await this.#parts.watched.take(this.#headTree);
    if ('reason' in built) return built;
    const parent = this.#head;
    if (built.unchanged) {
      return { ...this.#withWarnings({ sha: parent, parent, changed: [] }), scan: 'watched' };
    }
    const sha = await this.#parts.watched.commit(built.tree, parent, label);
    killPoint('mid-snapshot');
    this.#onCommit?.(sha);
    await this.#parts.nested.update(built.raw);
    this.#parts.indexLag.record(built.raw);
    this.#head = sha;
    this.#headTree = built.tree;
    // Written before the snapshot returns, not queued: a checkpoint may name this head as soon as
    // the call ends, and a marker one snapshot behind after a SIGKILL made `--continue` take the
    // finished call's files for unattributed changes and run it again (the crash harness,
    // checkpoint-write:4 and before-model:2).
    this.#persistHead();
    return {
      ...this.#withWarnings({
        sha,
        parent,
        changed: built.raw.map(({ status, path }) => ({ status, path })),
      }),
      scan: 'watched',
    };
  }

  async #scanSnapshot(label: string, signal: AbortSignal | undefined): Promise<Snapshot> {
    const { largeFiles, nested, unrecordable } = this.#parts;
    const options = this.#storeOptions(signal);
    // The private index, up to the head tree for the paths watched snapshots changed.
    await this.#parts.indexLag.sync(this.runDir, this.root, options);
    // Until a snapshot completes, the tracker's gitlinks may lag the index (a fresh open, or a
    // snapshot that failed after its `add -A`): then the index itself is read for them.
    const settled = this.#indexSettled;
    this.#indexSettled = false;
    const git = storeIndexGit(this.runDir, this.root, options);
    // Files skipped for size that shrank or went away are let back in (no-op when none).
    await largeFiles.release(git);
    const gitlinks = settled
      ? nested
          .list()
          .filter((repo) => repo.kind === 'repository')
          .map((repo) => repo.path)
      : await indexGitlinks(this.runDir, this.root, options);
    await addAll(this.runDir, this.root, this.excludeFile, unrecordable, options, gitlinks);
    let tree = (await this.#git(['write-tree'], signal)).stdout.trim();
    const parent = this.#head;
    const unchanged = (): Snapshot => {
      this.#indexSettled = true;
      return this.#withWarnings({ sha: parent, parent, changed: [] });
    };
    if (tree === this.#headTree) return unchanged();
    // One raw diff between the trees gives the change list, the modes (gitlinks = nested
    // repos) and the paths to check against the size cap, before anything is committed.
    let raw = parseRawTreeDiff(
      (
        await this.#git(
          ['diff-tree', '-r', '-z', '--raw', '--no-renames', this.#headTree, tree],
          signal,
        )
      ).stdout,
    );
    const kept = await largeFiles.filter(raw, git);
    if (kept !== undefined) raw = kept;
    // What the scan stored anew is read again without following symlinks (see scan-verify.ts).
    const { revert } = await verifyScan(this.root, raw);
    if (revert.length > 0) {
      await git(['update-index', '-z', '--index-info'], revertIndexInfo(revert));
      const reverted = new Set(revert.map(({ path }) => path));
      raw = raw.filter(({ path }) => !reverted.has(path));
      this.#scanWarnings.push(scanRaceWarning(revert.map(({ path }) => path)));
    }
    if (kept !== undefined || revert.length > 0) {
      tree = (await this.#git(['write-tree'], signal)).stdout.trim();
      if (tree === this.#headTree) return unchanged();
    }
    const sha = (
      await this.#git(['commit-tree', tree, '-p', parent, '-m', label || 'snapshot'], signal)
    ).stdout.trim();
    killPoint('mid-snapshot');
    await this.#git(['update-ref', `${SNAPSHOT_REF_PREFIX}/${sha}`, sha], signal);
    // A shared store queues it for its next push (see shared-store.ts); never blocks here.
    this.#onCommit?.(sha);
    await nested.update(raw);
    this.#indexSettled = true;
    this.#head = sha;
    this.#headTree = tree;
    this.#persistHead();
    return this.#withWarnings({
      sha,
      parent,
      changed: raw.map(({ status, path }) => ({ status, path })),
    });
  }

  async #restore(sha: string, signal: AbortSignal | undefined): Promise<RestoreResult> {
    const { target, targetTree } = await resolveRestoreTarget(this.#parts, sha, signal);
    // Safety snapshot first: makes the restore undoable, and puts files made since the last
    // snapshot into the private index so `read-tree --reset` removes them too.
    const safety = await this.#snapshot(`sandbox ${this.id}: before restore to ${target}`, signal);
    const run = { target, targetTree, safety: safety.sha, signal };
    let written = await restoreChangedPaths(this.#parts, run, this.#headTree);
    if (written === undefined) {
      this.#indexSettled = false;
      written = await restoreFull(this.#parts, run);
      this.#indexSettled = true;
    }
    this.#head = target;
    this.#headTree = targetTree;
    this.#persistHead();
    const { changed, keptIgnored, writes } = written;
    return { safety, changed, ...(keptIgnored.length === 0 ? {} : { keptIgnored }), writes };
  }

  /** Adds nested-repo, refused-path and first-time size-cap warnings to a snapshot. */
  #withWarnings(snapshot: Snapshot): Snapshot {
    const warnings = [
      ...nestedRepoWarnings(this.#parts.nested.list()),
      ...this.#parts.unrecordable.warnings(),
      ...this.#parts.largeFiles.takeWarnings(),
      ...this.#scanWarnings.splice(0),
    ];
    return warnings.length === 0 ? snapshot : { ...snapshot, warnings };
  }

  /** Records the head in the marker, so a reopened sandbox continues from the latest snapshot. */
  #persistHead(): void {
    this.#marker.head = this.#head;
    this.#marker.nested = { head: this.#head, repos: this.#parts.nested.list() };
    writeMarkerSync(this.runDir, this.#marker);
  }

  #storeOptions(signal: AbortSignal | undefined) {
    return { signal, timeoutMs: this.#parts.timeoutMs };
  }

  #git(args: string[], signal: AbortSignal | undefined) {
    return storeGit(this.runDir, this.root, args, this.#storeOptions(signal));
  }

  #exclusive<T>(work: () => Promise<T>): Promise<T> {
    this.#assertOpen();
    const run = this.#queue.catch(() => undefined).then(work);
    this.#queue = run;
    return run;
  }

  #assertOpen(): void {
    if (this.#closing !== undefined) {
      throw new AgentsError(
        AgentsErrorCode.Closed,
        `Sandbox "${this.id}" is closed; create a new sandbox for a new run.`,
        { details: { sandboxId: this.id } },
      );
    }
  }
}
