import type { RunGitResult } from './git.js';
import type { SandboxBaseOrigin, SandboxWarning } from './base-origin.js';
import type { CreateSandboxOptions } from './git/local-sandbox.js';
import type { OpenSandboxOptions } from './git/open-sandbox.js';
import type { SandboxPathMap } from './path-map.js';
import type { RawTreeChange } from './raw-tree-diff.js';
import type { Sandbox } from './types.js';

/** Options every snapshot store call takes. */
export interface SnapshotStoreCallOptions {
  signal?: AbortSignal | undefined;
  timeoutMs?: number | undefined;
}

/** One file of a snapshot: its path, git-style mode (`100644`, `100755`, `120000`) and content id. */
export interface SnapshotEntry {
  path: string;
  mode: string;
  id: string;
}

/**
 * Git-native access to a store that is a git repository. Only what cannot be said without git
 * uses it: committing snapshots to the user's branch (objects shared with the user's repo), text
 * patches, and the shared store's keep commits. A store without it (another backend) gets a clear
 * `SANDBOX_FAILED` from those features instead of a crash.
 */
export interface GitStoreAccess {
  /** Runs git on the store (its git dir, the sandbox tree, the private index). */
  run(
    args: readonly string[],
    options?: SnapshotStoreCallOptions & { okExitCodes?: number[]; input?: string },
  ): Promise<RunGitResult>;
  /** The environment of those commands (for a git run with another cwd that reads the store). */
  env(): Record<string, string>;
  /**
   * Runs git with only the store's git dir, in the environment for reaching a remote (the user's
   * credential helpers apply, transports stay restricted): fetch and push to a shared store.
   */
  runRemote(
    args: readonly string[],
    options?: SnapshotStoreCallOptions & { okExitCodes?: number[]; input?: string },
  ): Promise<RunGitResult>;
}

/**
 * Where a sandbox keeps its snapshots, as delivery, rollback and the shared store read them: list
 * a tree, read a file, diff two snapshots, push and fetch. Snapshot ids are lowercase hex.
 */
export interface SnapshotStore {
  /** Name of the backend that made it (`git`, `memory`, ...). */
  readonly backend: string;
  /** Identifies the store: two handles on the same store have the same location. */
  readonly location: string;
  /** A private folder outside the tree for records about the sandbox (apply journals). */
  readonly recordsDir: string;
  /** The full id of snapshot `rev` (a full id or a unique prefix), or `undefined` when none. */
  resolve(rev: string, options?: SnapshotStoreCallOptions): Promise<string | undefined>;
  /** Every file of a snapshot, sorted by path. */
  listTree(snapshot: string, options?: SnapshotStoreCallOptions): Promise<SnapshotEntry[]>;
  /** The exact bytes of a file of a snapshot, or `undefined` when the snapshot lacks it. */
  readFile(
    snapshot: string,
    path: string,
    options?: SnapshotStoreCallOptions,
  ): Promise<Buffer | undefined>;
  /** The exact bytes of a content id (as {@link listTree} and {@link diff} give them). */
  readBlob(id: string, options?: SnapshotStoreCallOptions): Promise<Buffer>;
  /**
   * What differs between two snapshots (under `paths`, read literally), with both modes and
   * content ids; no rename detection (a move is a delete and an add).
   */
  diff(
    from: string,
    to: string,
    options?: SnapshotStoreCallOptions & { paths?: readonly string[] | undefined },
  ): Promise<RawTreeChange[]>;
  /** Fetches `refspecs` from a shared store (`remote`); absent when the backend cannot share. */
  fetch?(
    remote: string,
    refspecs: readonly string[],
    options?: SnapshotStoreCallOptions,
  ): Promise<void>;
  /** Pushes `refspecs` to a shared store (`remote`); absent when the backend cannot share. */
  push?(
    remote: string,
    refspecs: readonly string[],
    options?: SnapshotStoreCallOptions,
  ): Promise<void>;
  /** Git-native access, for stores that are git repositories (see {@link GitStoreAccess}). */
  readonly git?: GitStoreAccess;
}

/**
 * A sandbox as a {@link SandboxBackend} makes it: the tools' tree, its snapshot store and what
 * it was made from. What actors, the CLI, Studio and delivery hold; nothing outside `sandbox/`
 * needs to know which backend made it.
 */
export interface RunSandbox extends Sandbox {
  /** Name of the backend that made it. */
  readonly backend: string;
  /** `repository`: made from a commit or the working tree of a git repo; `folder`: a plain folder. */
  readonly kind: 'repository' | 'folder';
  /** The user's commit it was made from (`repository` only; absent with no commits). */
  readonly sourceCommit: string | undefined;
  readonly baseOrigin: SandboxBaseOrigin;
  readonly baseWarnings: readonly SandboxWarning[];
  /** The one folder that holds everything of this sandbox (tree, store, records). */
  readonly container: string;
  readonly store: SnapshotStore;
  readonly paths: SandboxPathMap;
  /** Calls `listener` with each new snapshot right after it is made (one listener). */
  onSnapshotCommit(listener: ((sha: string) => void) | undefined): void;
  /**
   * Closes it: by default (`remove: true`) its container is deleted; with `remove: false` it is
   * kept so {@link SandboxBackend.open} can reopen it. Idempotent: the first call decides.
   */
  close(options?: { remove?: boolean }): Promise<void>;
}

/** A sandbox {@link SandboxBackend.open} returned. */
export interface ReopenedSandbox extends RunSandbox {
  /** True when it existed before this call (false: just made). */
  readonly reopened: boolean;
}

/** One sandbox as {@link SandboxBackend.list} names it. */
export interface SandboxListing {
  id: string;
  /** Its container folder (what {@link SandboxBackend.remove} takes). */
  dir: string;
  source: string;
}

/**
 * Makes, reopens, lists and removes sandboxes. One per kind of sandbox (the git one, the
 * in-memory one; a container runtime would be a third), kept in `SANDBOX_BACKENDS`.
 */
export interface SandboxBackend {
  readonly name: string;
  /** True when its snapshots outlive the process (threads can be resumed later). */
  readonly persistent: boolean;
  create(options: CreateSandboxOptions): Promise<RunSandbox>;
  open(options: OpenSandboxOptions): Promise<ReopenedSandbox>;
  /** The sandboxes under `baseDir` (the folder `create` made them in). */
  list(options: { baseDir: string }): Promise<SandboxListing[]>;
  /** Removes the sandbox whose container is `dir`; false when there was none. */
  remove(dir: string): Promise<boolean>;
}
