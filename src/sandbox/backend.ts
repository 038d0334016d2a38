/**
 * The seam every sandbox backend plugs into (the bottom of `sandbox/`): what a backend makes
 * (a {@link RunSandbox} with its {@link SnapshotStore}), the options it takes and what it can do.
 * Imports no backend: `git/` and `memory/` implement it, `backends.ts` lists them.
 */
import type { RunGitResult } from './git.js';
import type { SandboxBaseOrigin, SandboxFrom, SandboxWarning } from './base-origin.js';
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

/** Options of {@link SandboxBackend.create} (every backend takes them; see each for what applies). */
export interface CreateSandboxOptions {
  /** The user's repo or folder. It is only read: no ref, object, config or file of it changes. */
  source: string;
  /**
   * What the files of a git source are made from (see {@link SandboxFrom}). Default `worktree`:
   * the user's files as they are now, uncommitted edits and untracked (not ignored) files
   * included, taken without touching their index, refs, objects or config; that snapshot is
   * the base that diff, apply and commit work against. `head`: the last commit (a working tree
   * with uncommitted changes is reported once, through `onSandboxWarning` and `baseWarnings`). Any
   * other value is a revision (branch, tag, sha); one that names no commit throws
   * `REVISION_NOT_FOUND` before anything is made. A plain folder is always copied as it is
   * (`head` or a revision there throws `CONFIG_INVALID`).
   */
  from?: SandboxFrom;
  /**
   * Older spelling of {@link CreateSandboxOptions.from} for a revision (`HEAD` = `head`); used
   * when `from` is absent, ignored for a plain folder.
   */
  revision?: string;
  /**
   * Told once per problem with the base (see {@link SandboxWarning}); also in `baseWarnings`.
   * Named like `createActor`'s: every `onWarning` hook of the library takes a sentence, every
   * `on…Warning` hook the structured record.
   */
  onSandboxWarning?: (warning: SandboxWarning) => void;
  /** Sandbox id (`[A-Za-z0-9_-]`, up to 64 chars); names the tree's folder. Default: random. */
  id?: string;
  /**
   * Where sandbox folders are made. Default: `<state>/projects/<project>/sandboxes`, where
   * `<state>` is `stateDir` (see `agentsStateDir`: `$AGENTS_STATE_DIR`, `$XDG_STATE_HOME/agents`
   * or `~/.local/state/agents`), always outside the user's working tree.
   */
  baseDir?: string;
  /** The per-user state folder; default `agentsStateDir()`. */
  stateDir?: string;
  /**
   * The exact folder to hold this sandbox (its tree and run dir), instead of a fresh folder
   * under `baseDir`. Made when missing; must be empty. {@link SandboxBackend.open} reopens it later.
   */
  dir?: string;
  signal?: AbortSignal;
  /**
   * Extra gitignore patterns left out of every snapshot (never captured, never removed by a
   * restore), on top of the tree's own ignores and `.agents-output/` (the output-budget spill
   * folder). Kept in a private exclude file in the run dir. Files matching a `filter=lfs`
   * pattern of the tree's top-level `.gitattributes` are left out the same way.
   */
  exclude?: readonly string[];
  /**
   * Snapshot size cap in bytes. A new or changed file larger than this is not captured (a
   * snapshot keeps the file's last captured version, if any), is never overwritten or removed
   * by a restore, and is named once in the snapshot's `warnings`; it is captured again once it
   * is back under the cap. Default 50 MiB (`50 * 1024 * 1024`); `0` turns the cap off.
   * Throws `CONFIG_INVALID` for a negative or fractional value.
   */
  maxFileBytes?: number;
  /**
   * Materialise the sandbox from an existing snapshot history instead of the source's files:
   * called once the empty store exists, it fills it (e.g. a `git fetch` from a shared store) and
   * returns the base snapshot and the snapshot to check out (default the base), or `undefined`
   * to make the sandbox from the source as usual. The source is still read for the tool repo
   * (repository mode).
   */
  seed?: SandboxSeed;
}

/** See {@link CreateSandboxOptions.seed}. */
export type SandboxSeed = (
  store: SnapshotStore,
  signal: AbortSignal | undefined,
) => Promise<{ base: string; head?: string } | undefined>;

/** Options of {@link SandboxBackend.open}: reopen the sandbox kept in `dir`, or make it there. */
export interface OpenSandboxOptions {
  /** The folder holding the sandbox (as passed to `createSandbox({ dir })`). */
  dir: string;
  /**
   * The user's repo or folder. Needed to create the sandbox; when reopening, it must name the
   * same source the sandbox was made from (else `SANDBOX_FAILED`). Default: the recorded one.
   */
  source?: string;
  /**
   * What a new sandbox is made from (see {@link CreateSandboxOptions.from}; default
   * `worktree`). Ignored when reopening: a sandbox's base is made once.
   */
  from?: SandboxFrom;
  /** Older spelling of `from` for a revision; ignored when reopening. */
  revision?: string;
  /** Warnings about a new sandbox's base (see {@link CreateSandboxOptions.onSandboxWarning}). */
  onSandboxWarning?: (warning: SandboxWarning) => void;
  /** Sandbox id for a new sandbox; when reopening, it must match the recorded id. */
  id?: string;
  /** Make the sandbox when `dir` holds none (default `true`; needs `source`). */
  create?: boolean;
  /**
   * Take the sandbox's run lock (a `lock` file with this process id in its run dir) until
   * `close()`. A second locking open while a live process holds it fails with `RUN_ACTIVE`;
   * a lock left by a dead process is taken over. Default `false`.
   */
  lock?: boolean;
  signal?: AbortSignal;
  /**
   * Extra snapshot excludes (see {@link CreateSandboxOptions.exclude}). When reopening, given
   * patterns replace the recorded ones; omitted keeps them.
   */
  exclude?: readonly string[];
  /**
   * Snapshot size cap (see {@link CreateSandboxOptions.maxFileBytes}). When reopening, a given
   * value replaces the recorded one; omitted keeps it (50 MiB for a sandbox that recorded none).
   */
  maxFileBytes?: number;
  /** How a new sandbox is materialised from an existing history (see `CreateSandboxOptions.seed`). */
  seed?: SandboxSeed;
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
  /**
   * The user's commit it was made from (`repository` only): the one checked out, or HEAD when
   * the working tree was taken (absent in a repository with no commits).
   */
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

/** The thread whose snapshots a shared store keeps (see {@link SandboxBackend.share}). */
export interface ShareRequest {
  /** Where the store is: a path or URL every worker can reach (`snapshots.remote`). */
  remote: string;
  actor: string;
  threadId: string;
  /** A project id the same on every machine; omitted: the store's namespace without a project. */
  project?: string;
}

/**
 * One thread's snapshots in a store several workers share: a missing sandbox is rebuilt from
 * it, and every new snapshot goes there before the checkpoint that names it is written.
 */
export interface SnapshotReplica {
  /** The store as shown in messages. */
  readonly remote: string;
  /**
   * Fetches the thread's snapshots into `store` (a sandbox's, as a `seed` gets it); returns the
   * base and newest snapshot the shared store holds, or `undefined` when it has not the thread.
   */
  fetchInto(
    store: SnapshotStore,
    signal?: AbortSignal,
  ): Promise<{ base: string; head: string } | undefined>;
  /** Starts sending `sandbox`'s snapshots (those it lacks, and every new one) to the store. */
  attach(sandbox: RunSandbox, signal?: AbortSignal): Promise<void>;
  /** Resolves when every snapshot so far is in the store (throws when a send failed). */
  flush(): Promise<void>;
}

/** What a backend that can share snapshots between workers offers (`snapshots.remote`). */
export interface SnapshotSharing {
  /** The replica of one thread in the shared store `request.remote`; nothing is contacted yet. */
  replica(request: ShareRequest): Promise<SnapshotReplica>;
  /** True when the shared store holds the thread (a worker that never ran it finds its actor). */
  holds(request: ShareRequest & { cwd: string; signal?: AbortSignal }): Promise<boolean>;
}

/**
 * What of an actor's `sandbox:` block depends on the backend; each backend's
 * schema in `settings.ts` says which of these it accepts and refuses the rest.
 */
export interface SandboxBackendSettings {
  from?: SandboxFrom | undefined;
  revision?: string | undefined;
  maxFileBytes?: number | undefined;
  exclude?: readonly string[] | undefined;
}

/**
 * Makes, reopens, lists and removes sandboxes: one per kind of sandbox, each in a file of its
 * own (`git/git-backend.ts`, `memory/memory-backend.ts`), kept in `SANDBOX_BACKENDS`, which the
 * config schema and the runtime are derived from. Callers ask for a capability (`share`,
 * `persistent`) instead of comparing names.
 */
export interface SandboxBackend {
  /** Its `sandbox.backend` name. */
  readonly name: string;
  /** One line for the config reference (`sandbox.backend`). */
  readonly description: string;
  /** True when its snapshots outlive the process (threads can be resumed later). */
  readonly persistent: boolean;
  create(options: CreateSandboxOptions): Promise<RunSandbox>;
  open(options: OpenSandboxOptions): Promise<ReopenedSandbox>;
  /** The sandboxes under `baseDir` (the folder `create` made them in). */
  list(options: { baseDir: string }): Promise<SandboxListing[]>;
  /** Removes the sandbox whose container is `dir`; false when there was none. */
  remove(dir: string): Promise<boolean>;
  /** Keeps threads' snapshots in a store several workers share; absent when it cannot. */
  readonly share?: SnapshotSharing;
}
