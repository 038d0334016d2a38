import type { ChangedPath, SkippedPath } from '../core/change-record.js';
import type { SandboxBaseOrigin, SandboxWarning } from './base-origin.js';

/** A snapshot of the sandbox tree: a commit kept under a private ref. */
export interface Snapshot {
  /** Commit sha of the snapshot. */
  sha: string;
  /** The snapshot this one follows (equal to `sha` when nothing changed). */
  parent: string;
  /** What changed between `parent` and `sha`. */
  changed: ChangedPath[];
  /**
   * Things the snapshot could not capture, for people and logs (e.g. a nested git repository
   * kept only as a gitlink). Absent when there is nothing to say.
   */
  warnings?: string[];
  /**
   * How the snapshot found what changed: `watched` (only the paths the sandbox's watcher
   * reported were re-read, the tree rebuilt from the previous one) or `full` (the whole tree was
   * scanned with `add -A`). Absent for sandboxes that do not say.
   */
  scan?: 'watched' | 'full';
  /** Why a `full` scan was needed (the first snapshot of a process, a watcher overflow, ...). */
  scanReason?: string;
}

/** What {@link Sandbox.restore} did. */
export interface RestoreResult {
  /** Snapshot of the exact tree just before the restore. */
  safety: Snapshot;
  /** What changed, from the safety snapshot to the target (files put back left out). */
  changed: ChangedPath[];
  /** Files the restore had deleted that the target ignores, put back as they were; absent when none. */
  keptIgnored?: string[];
  /**
   * How the files were put back: `changed` (only the paths where the two trees differ were
   * written) or `full` (`read-tree -u --reset` over the whole index). Absent for sandboxes that
   * do not say.
   */
  writes?: 'changed' | 'full';
}

/** Maps logical paths (relative to the project) to sandbox paths and back. */
export interface PathMap {
  /** Absolute, realpath'd sandbox root. */
  readonly root: string;
  /**
   * Logical or absolute path → absolute path inside the sandbox.
   * Throws `PATH_OUTSIDE_SANDBOX` for anything that would escape.
   */
  toSandbox(path: string): string;
  /** Replaces sandbox paths inside a string with logical paths. */
  fromSandbox(text: string): string;
}

/**
 * A per-run sandbox: a working tree the tools write in, plus snapshots of it to diff and
 * restore. What backs it is the backend's business (the git backend uses a detached worktree
 * or a private repo; the memory backend, plain memory). The user's files are never touched.
 */
export interface Sandbox extends AsyncDisposable {
  readonly id: string;
  /** Absolute realpath of the sandbox working tree. */
  readonly root: string;
  /** The folder the sandbox was made from (the user's repo or folder). */
  readonly source: string;
  readonly paths: PathMap;
  /** The sha of the latest snapshot (the base commit right after creation). */
  readonly head: string;
  /** The base snapshot taken at creation. */
  readonly base: string;
  /** What the base was made from (the user's working tree, a commit, a folder copy). */
  readonly baseOrigin?: SandboxBaseOrigin;
  /** Warnings about the base from when it was made (none for a reopened sandbox). */
  readonly baseWarnings?: readonly SandboxWarning[];
  /** Snapshots the tree; returns the previous head when nothing changed. */
  snapshot(label: string, options?: { signal?: AbortSignal }): Promise<Snapshot>;
  /**
   * The paths the snapshots leave out right now (see {@link SkippedPath}), sorted by path. Kept
   * in memory by the sandbox: cheap enough to ask after every tool call. Files matching the
   * configured excludes or a Git LFS pattern are left out by pattern and not listed here.
   */
  skippedPaths?(): SkippedPath[];
  /** Lists what differs between two snapshots. */
  diff(from: string, to: string): Promise<ChangedPath[]>;
  /**
   * Restores the tree to a snapshot. Files the sandbox tracked that are not in the target are
   * removed; ignored and never-tracked files are left alone (a file the safety snapshot caught
   * but the target ignores is put back and named in `keptIgnored`). Takes a safety snapshot
   * first and returns it, so the restore can be undone.
   */
  restore(sha: string, options?: { signal?: AbortSignal }): Promise<RestoreResult>;
  /** Removes the working tree and whatever backs its snapshots. Idempotent. */
  close(): Promise<void>;
}
