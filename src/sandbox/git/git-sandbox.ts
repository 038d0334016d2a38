import { rm } from 'node:fs/promises';
import { AgentsError, AgentsErrorCode } from '../../errors.js';
import { killPoint } from '../../core/kill-point.js';
import type { SandboxBaseOrigin, SandboxWarning } from '../base-origin.js';
import type { ChangedPath } from '../../core/change-record.js';
import type { LargeFileGuard } from '../large-files.js';
import { parseRawTreeDiff } from '../raw-tree-diff.js';
import type { IndexGit } from './index-git.js';
import type { OversizedFile } from '../size-cap.js';
import { nestedRepoWarnings, type NestedRepo, type NestedRepoTracker } from '../nested-repos.js';
import type { SandboxPathMap } from '../path-map.js';
import { writeMarkerSync, type SandboxMarker } from '../sandbox-marker.js';
import {
  addAll,
  indexGitlinks,
  assertSha,
  parseNameStatus,
  SNAPSHOT_REF_PREFIX,
  storeEnv,
  storeGit,
} from './snapshot-store.js';
import { putBackIgnoredFiles } from '../ignored-files.js';
import type { SkippedPath } from '../../core/change-record.js';
import type { RestoreResult, Sandbox, Snapshot } from '../types.js';
import type { SnapshotStore } from '../backend.js';
import { gitSnapshotStore } from './git-store.js';
import { UnrecordablePaths } from '../unrecordable-paths.js';
import { revertIndexInfo, scanRaceWarning, verifyScan } from './scan-verify.js';
import { IndexLag, WatchedSnapshots } from './watched-snapshots.js';
import { MarkerWrites } from './marker-writes.js';

/** Mode of a gitlink (a nested repository) in a tree. */
const GITLINK = '160000';

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
  readonly #nested: NestedRepoTracker;
  readonly #largeFiles: LargeFileGuard;
  readonly #unrecordable: UnrecordablePaths;
  /** Warnings of full scans whose entries were taken back out (see scan-verify.ts). */
  readonly #scanWarnings: string[] = [];
  readonly #timeoutMs: number | undefined;
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
  /** Watcher and long-lived git processes of watched snapshots (started by a full scan). */
  readonly #watched: WatchedSnapshots;
  /** Index entries watched snapshots left behind the head tree (see watched-snapshots.ts). */
  readonly #indexLag = new IndexLag();
  /** The watched snapshots' marker writes, off their path (see marker-writes.ts). */
  readonly #markerWrites: MarkerWrites;

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
    this.#markerWrites = new MarkerWrites(init.runDir);
    this.#lockFile = init.lockFile;
    this.#timeoutMs = init.timeoutMs;
    this.#nested = init.nested;
    this.#largeFiles = init.largeFiles;
    this.#unrecordable = new UnrecordablePaths(init.root);
    this.#remove = init.remove;
    this.#watched = new WatchedSnapshots({
      root: init.root,
      runDir: init.runDir,
      excludeFile: init.excludeFile,
      timeoutMs: init.timeoutMs,
      maxFileBytes: init.largeFiles.maxFileBytes,
    });
  }

  get head(): string {
    return this.#head;
  }

  get maxFileBytes(): number {
    return this.#largeFiles.maxFileBytes;
  }

  nestedRepos(): NestedRepo[] {
    return this.#nested.list();
  }

  skippedPaths(): SkippedPath[] {
    const skipped: SkippedPath[] = [
      ...this.#largeFiles
        .list()
        .map(({ path, size }) => ({ path, reason: 'size-cap' as const, size })),
      ...this.#nested.list().map(({ path }) => ({ path, reason: 'nested-repo' as const })),
      ...this.#unrecordable.list(),
    ];
    return skipped.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  }

  oversizedFiles(): OversizedFile[] {
    return this.#largeFiles.list();
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
    return this.#diff(from, to, options.signal);
  }

  restore(sha: string, options: { signal?: AbortSignal } = {}): Promise<RestoreResult> {
    return this.#exclusive(() => this.#restore(sha, options.signal));
  }

  close(options: { remove?: boolean } = {}): Promise<void> {
    const remove = options.remove ?? true;
    this.#closing ??= this.#queue
      .catch(() => undefined)
      .then(async () => {
        await this.#watched.shutdown();
        // A marker that failed to write matters only to a sandbox that is kept.
        await this.#markerWrites.settled().catch((error: unknown) => {
          if (!remove) throw error;
        });
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
      this.#watched.stop();
      throw error;
    }
    if ('sha' in watched) return watched;
    // The change set is unknown: scan the whole tree. A fresh watcher starts first, so whatever
    // changes from here on is seen by the next snapshot.
    this.#watched.stop();
    await this.#watched.start(this.#headTree);
    const snapshot = await this.#scanSnapshot(label, signal);
    return { ...snapshot, scan: 'full', scanReason: watched.reason };
  }

  /**
   * A snapshot from the watcher's change set (see watched-snapshots.ts), or why it cannot be
   * sure to give the tree `add -A` would.
   */
  async #watchedSnapshot(label: string): Promise<Snapshot | { reason: string }> {
    const idle = this.#watched.idleReason();
    if (idle !== undefined) return { reason: idle };
    if (this.#largeFiles.list().length > 0)
      return { reason: 'files over the size cap are skipped' };
    if (this.#nested.list().length > 0) return { reason: 'the tree holds a nested repository' };
    if (this.#unrecordable.list().length > 0) return { reason: 'the tree holds names git refuses' };
    const built = await this.#watched.take(this.#headTree);
    if ('reason' in built) return built;
    const parent = this.#head;
    if (built.unchanged) {
      return { ...this.#withWarnings({ sha: parent, parent, changed: [] }), scan: 'watched' };
    }
    const sha = await this.#watched.commit(built.tree, parent, label);
    killPoint('mid-snapshot');
    this.#onCommit?.(sha);
    await this.#nested.update(built.raw);
    this.#indexLag.record(built.raw);
    this.#head = sha;
    this.#headTree = built.tree;
    // Written before the snapshot returns, not queued: a checkpoint may name this head as soon as
    // the call ends, and a marker one snapshot behind after a SIGKILL made `--continue` take the
    // finished call's files for unattributed changes and run it again (the crash harness,
    // checkpoint-write:4 and before-model:2).
    await this.#persistHead();
    return {
      ...this.#withWarnings({
        sha,
        parent,
        changed: built.raw.map(({ status, path }) => ({ status, path })),
      }),
      scan: 'watched',
    };
  }

  /** Brings the private index up to the head tree for the paths watched snapshots changed. */
  #syncIndex(signal: AbortSignal | undefined): Promise<void> {
    return this.#indexLag.sync(this.runDir, this.root, { signal, timeoutMs: this.#timeoutMs });
  }

  async #scanSnapshot(label: string, signal: AbortSignal | undefined): Promise<Snapshot> {
    await this.#syncIndex(signal);
    // Until a snapshot completes, the tracker's gitlinks may lag the index (a fresh open, or a
    // snapshot that failed after its `add -A`): then the index itself is read for them.
    const settled = this.#indexSettled;
    this.#indexSettled = false;
    const git = this.#indexGit(signal);
    // Files skipped for size that shrank or went away are let back in (no-op when none).
    await this.#largeFiles.release(git);
    const options = { signal, timeoutMs: this.#timeoutMs };
    const gitlinks = settled
      ? this.#nested
          .list()
          .filter((repo) => repo.kind === 'repository')
          .map((repo) => repo.path)
      : await indexGitlinks(this.runDir, this.root, options);
    await addAll(this.runDir, this.root, this.excludeFile, this.#unrecordable, options, gitlinks);
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
    const kept = await this.#largeFiles.filter(raw, git);
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
    await this.#nested.update(raw);
    this.#indexSettled = true;
    this.#head = sha;
    this.#headTree = tree;
    await this.#persistHead();
    return this.#withWarnings({
      sha,
      parent,
      changed: raw.map(({ status, path }) => ({ status, path })),
    });
  }

  async #restore(sha: string, signal: AbortSignal | undefined): Promise<RestoreResult> {
    assertSha(sha);
    const resolved = await this.#git(
      ['rev-parse', '--verify', '--quiet', `${sha}^{commit}`],
      signal,
      [1],
    );
    const target = resolved.stdout.trim();
    if (resolved.exitCode !== 0 || target === '') {
      throw new AgentsError(
        AgentsErrorCode.CheckpointNotFound,
        `Snapshot ${sha} does not exist in sandbox "${this.id}"; list the thread's checkpoints to pick an existing one.`,
        { details: { sandboxId: this.id, sha } },
      );
    }
    const targetTree = (await this.#git(['rev-parse', `${target}^{tree}`], signal)).stdout.trim();
    // Safety snapshot first: makes the restore undoable, and puts files made since the last
    // snapshot into the private index so `read-tree --reset` removes them too.
    const safety = await this.#snapshot(`sandbox ${this.id}: before restore to ${target}`, signal);
    const changedOnly = await this.#restoreChanged(safety, target, targetTree, signal);
    if (changedOnly !== undefined) return changedOnly;
    // Files over the size cap were never captured: moved out of `read-tree`'s way (it would
    // overwrite or delete them) and put back after, whatever happens.
    await this.#syncIndex(signal);
    const kept = await this.#largeFiles.protect(target, this.#indexGit(signal));
    // The tree changes under the path map's feet (a restored snapshot may bring a symlink
    // back): drop its cached symlink verdicts, before and after.
    this.paths.invalidateLinkCache();
    let restored = false;
    this.#indexSettled = false;
    try {
      await this.#git(['read-tree', '-u', '--reset', target], signal);
      restored = true;
    } finally {
      this.paths.invalidateLinkCache();
      await kept?.putBack(restored);
    }
    const tree = (await this.#git(['write-tree'], signal)).stdout.trim();
    if (tree !== targetTree) {
      throw new AgentsError(
        AgentsErrorCode.RollbackFailed,
        `Restoring sandbox "${this.id}" to ${target} left tree ${tree} instead of ${targetTree}; restore ${safety.sha} to undo.`,
        { details: { sandboxId: this.id, target, safety: safety.sha } },
      );
    }
    await this.#git(['update-ref', `${SNAPSHOT_REF_PREFIX}/${target}`, target], signal);
    const restoredChanges = await this.#diff(safety.sha, target, signal);
    // Files the target ignores were never its to delete (see putBackIgnoredFiles).
    const { changed, keptIgnored } = await this.#withoutPutBackIgnored(
      safety.sha,
      restoredChanges,
      signal,
    );
    await this.#nested.scan(
      (await this.#git(['ls-tree', '-r', '-t', '-z', target], signal)).stdout,
    );
    this.#indexSettled = true;
    this.#head = target;
    this.#headTree = targetTree;
    await this.#persistHead();
    return {
      safety,
      changed,
      ...(keptIgnored.length === 0 ? {} : { keptIgnored }),
      writes: 'full',
    };
  }

  /**
   * A restore that writes only the paths where the head tree (the safety snapshot: the disk)
   * and the target differ (see tree-restore.ts), or undefined when it must take the full path
   * (not watching, or files the snapshots skip: nested repos, files over the cap, names git
   * refuses). The result is checked from disk like a watched snapshot: the paths written are
   * read back and must give the target tree.
   */
  async #restoreChanged(
    safety: Snapshot,
    target: string,
    targetTree: string,
    signal: AbortSignal | undefined,
  ): Promise<RestoreResult | undefined> {
    if (this.#watched.idleReason() !== undefined) return undefined;
    if (
      this.#largeFiles.list().length > 0 ||
      this.#nested.list().length > 0 ||
      this.#unrecordable.list().length > 0
    )
      return undefined;
    const raw = await this.#watched.diff(this.#headTree, targetTree);
    if (raw === undefined || raw.some((c) => c.srcMode === GITLINK || c.dstMode === GITLINK))
      return undefined;
    this.paths.invalidateLinkCache();
    try {
      await this.#watched.apply(raw);
      // Read back through the watcher (our own writes are its events): O(changed), and it
      // leaves no events behind for the next snapshot.
      const check = await this.#watched.take(targetTree);
      if ('reason' in check) {
        // (a .gitignore came back, say): the next snapshot scans, so nothing is missed.
        this.#watched.stop();
      } else if (!check.unchanged) {
        throw new AgentsError(
          AgentsErrorCode.RollbackFailed,
          `Restoring sandbox "${this.id}" to ${target} left tree ${check.tree} instead of ${targetTree}; restore ${safety.sha} to undo.`,
          { details: { sandboxId: this.id, target, safety: safety.sha } },
        );
      }
    } catch (error) {
      // The disk is somewhere between the two: only a scan knows where.
      this.#watched.stop();
      this.#indexLag.record(raw);
      throw error;
    } finally {
      this.paths.invalidateLinkCache();
    }
    this.#indexLag.record(raw);
    await this.#watched
      .keepRef(target)
      .catch(() => this.#git(['update-ref', `${SNAPSHOT_REF_PREFIX}/${target}`, target], signal));
    const restoredChanges = raw.map(({ status, path }) => ({ status, path }));
    const { changed, keptIgnored } = await this.#withoutPutBackIgnored(
      safety.sha,
      restoredChanges,
      signal,
    );
    await this.#nested.update(raw);
    this.#head = target;
    this.#headTree = targetTree;
    await this.#persistHead();
    return {
      safety,
      changed,
      ...(keptIgnored.length === 0 ? {} : { keptIgnored }),
      writes: 'changed',
    };
  }

  /** Adds nested-repo, refused-path and first-time size-cap warnings to a snapshot. */
  #withWarnings(snapshot: Snapshot): Snapshot {
    const warnings = [
      ...nestedRepoWarnings(this.#nested.list()),
      ...this.#unrecordable.warnings(),
      ...this.#largeFiles.takeWarnings(),
      ...this.#scanWarnings.splice(0),
    ];
    return warnings.length === 0 ? snapshot : { ...snapshot, warnings };
  }

  /** Records the head in the marker, so a reopened sandbox continues from the latest snapshot. */
  /**
   * Puts back the files the target ignores (never its to delete; see putBackIgnoredFiles) and
   * returns the restored changes without them. Both restore paths end with it.
   */
  async #withoutPutBackIgnored(
    safety: string,
    restoredChanges: ChangedPath[],
    signal: AbortSignal | undefined,
  ): Promise<{ changed: ChangedPath[]; keptIgnored: string[] }> {
    const keptIgnored = await putBackIgnoredFiles({
      root: this.root,
      env: storeEnv(this.runDir, this.root),
      safety,
      changed: restoredChanges,
      signal,
      timeoutMs: this.#timeoutMs,
    });
    this.paths.invalidateLinkCache();
    const putBack = new Set(keptIgnored);
    const changed = restoredChanges.filter((change) => !putBack.has(change.path));
    return { changed, keptIgnored };
  }

  async #persistHead(options: { later?: boolean } = {}): Promise<void> {
    this.#marker.head = this.#head;
    this.#marker.nested = { head: this.#head, repos: this.#nested.list() };
    if (options.later === true) return this.#markerWrites.later(this.#marker);
    await this.#markerWrites.settled();
    writeMarkerSync(this.runDir, this.#marker);
  }

  async #diff(from: string, to: string, signal: AbortSignal | undefined): Promise<ChangedPath[]> {
    if (from === to) return [];
    const { stdout } = await this.#git(
      ['diff-tree', '-r', '-z', '--name-status', '--no-renames', from, to],
      signal,
    );
    return parseNameStatus(stdout);
  }

  #git(args: string[], signal: AbortSignal | undefined, okExitCodes?: number[]) {
    return storeGit(this.runDir, this.root, args, {
      signal,
      timeoutMs: this.#timeoutMs,
      ...(okExitCodes === undefined ? {} : { okExitCodes }),
    });
  }

  #indexGit(signal: AbortSignal | undefined): IndexGit {
    return async (args, input) =>
      (
        await storeGit(this.runDir, this.root, args, {
          signal,
          timeoutMs: this.#timeoutMs,
          ...(input === undefined ? {} : { input }),
        })
      ).stdout;
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
