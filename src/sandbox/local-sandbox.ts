import { randomBytes } from 'node:crypto';
import {
  copyFile,
  cp,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  realpath,
  rename,
  rm,
  rmdir,
  stat,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { AgentsError, AgentsErrorCode, errorMessage } from '../errors.js';
import type { ChangedPath } from '../registry/tool-descriptor.js';
import { gitEnv, porcelainGit, runGit, wrapGitError } from './git.js';
import { NestedRepoTracker, nestedRepoWarnings, type NestedRepo } from './nested-repos.js';
import { createPathMap, type SandboxPathMap } from './path-map.js';
import {
  captureRepoIntegrity,
  repoIntegrityCheckFailed,
  repoIntegrityError,
  type RepoIntegrityGuard,
} from './repo-integrity.js';
import {
  LargeFileGuard,
  parseRawTreeDiff,
  validateMaxFileBytes,
  type IndexGit,
  type OversizedFile,
} from './large-files.js';
import {
  EXCLUDE_FILE,
  readRecordedExcludes,
  validateExcludes,
  writeExcludeFile,
} from './sandbox-excludes.js';
import type { Sandbox, Snapshot } from './types.js';

/** Ref namespace for snapshots: `refs/agents/<sandbox id>/<sha>`. Keyed by sha so forks never overwrite. */
export const SANDBOX_REF_PREFIX = 'refs/agents';

/** Name prefix of the folder that holds one sandbox (its tree and its run dir). */
const CONTAINER_PREFIX = 'agents-sandbox-';
/** Marker written into each sandbox's run dir; prune only touches folders that carry it. */
const MARKER_FILE = 'sandbox.json';
const MARKER_KIND = 'agents-sandbox';
/** Lock file in the run dir while a process uses a reopenable sandbox (see {@link openSandbox}). */
const LOCK_FILE = 'lock';

const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
const SHA_PATTERN = /^[0-9a-f]{4,64}$/;

/** Options for {@link createSandbox}. */
export interface CreateSandboxOptions {
  /** The user's repo or folder. It is never modified (for a repo: only `.git/worktrees/` and `refs/agents/` gain entries). */
  source: string;
  /** Revision to check out for a git source. Default `HEAD`. Ignored for a plain folder. */
  revision?: string;
  /** Sandbox id (`[A-Za-z0-9_-]`, up to 64 chars); used in refs and folder names. Default: random. */
  id?: string;
  /** Where sandbox folders are made. Default `os.tmpdir()`. */
  baseDir?: string;
  /**
   * The exact folder to hold this sandbox (its tree and run dir), instead of a fresh temp folder
   * under `baseDir`. Made when missing; must be empty. {@link openSandbox} reopens it later.
   */
  dir?: string;
  signal?: AbortSignal;
  /** Per git command timeout. Default 120 s. */
  gitTimeoutMs?: number;
  /**
   * Extra gitignore patterns left out of every snapshot (never captured, never removed by a
   * restore), on top of the repo's own ignores and `.agents-output/` (the output-budget spill
   * folder). Kept in a private exclude file in the run dir, never in `.git/info/exclude`.
   * Files matching a `filter=lfs` pattern of the tree's top-level `.gitattributes` are left out
   * the same way.
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
}

/** A sandbox made by {@link createSandbox}; adds what this implementation knows to {@link Sandbox}. */
export interface LocalSandbox extends Sandbox {
  /** `worktree`: a detached git worktree of the source repo; `folder`: a private repo over a copy. */
  readonly kind: 'worktree' | 'folder';
  /** Private folder outside the tree holding the private index and the marker file. */
  readonly runDir: string;
  readonly paths: SandboxPathMap;
  /** The private exclude file passed to the snapshot's `add -A` (`-c core.excludesFile`). */
  readonly excludeFile: string;
  /**
   * Nested git repositories and stray `.git` entries in the tree as of the latest snapshot (one
   * full scan per run, then only what snapshots touched). Their contents are not captured.
   */
  nestedRepos(): NestedRepo[];
  /** The snapshot size cap in bytes (`0`: off); see {@link CreateSandboxOptions.maxFileBytes}. */
  readonly maxFileBytes: number;
  /** Files left out of snapshots for being over {@link LocalSandbox.maxFileBytes}, by path. */
  oversizedFiles(): OversizedFile[];
  /**
   * Checks that the run left the user's git metadata alone (security note T15): the repo's
   * `.git/config`, `.git/hooks/`, `.git/info/` and this sandbox's `.git/worktrees/<id>/`
   * (HEAD, commondir, gitdir, config.worktree; not the index or logs git updates itself),
   * against a copy taken when the sandbox was made (or reopened). Config, hooks and info are put
   * back from that copy, after saving the changed files to a quarantine folder. Throws
   * `SANDBOX_FAILED` naming what changed; resolves when nothing did. Also run before every
   * snapshot (so a planted `core.fsmonitor` or filter never runs in our `add -A`) and by
   * `close()`.
   */
  verifyRepoIntegrity(): Promise<void>;
  /**
   * Closes the sandbox. By default (`remove: true`) its worktree, run dir and refs are deleted.
   * With `remove: false` everything stays on disk (and its run lock is released), so
   * {@link openSandbox} can reopen it in a later process. Idempotent: the first call decides.
   */
  close(options?: { remove?: boolean }): Promise<void>;
}

interface SandboxMarker {
  kind: typeof MARKER_KIND;
  version: 1;
  id: string;
  mode: 'worktree' | 'folder';
  source: string;
  root: string;
  createdAt: number;
  /** Revision the sandbox was made from (as given). */
  revision?: string;
  /** Base commit sha (needed to reopen). */
  base?: string;
  /** Latest snapshot sha, kept current so a reopened sandbox continues from it. */
  head?: string;
  /** The snapshot size cap (`0`: off), kept so a reopened sandbox uses the same one. */
  maxFileBytes?: number;
}

/**
 * Creates a sandbox for one run.
 *
 * - Git source: `git worktree add --detach <dir> <revision>`; snapshots go to the source repo's
 *   object store under `refs/agents/<id>/<sha>`. The user's branches, index, HEAD and working
 *   tree are not touched, no hook runs, and nothing is written to `.git/info` or hooks.
 * - Plain folder: the folder is *copied* into the sandbox dir and a private repo is made over
 *   the copy, so the user's folder is never written to (not even a `.git`).
 *
 * Snapshots use a persistent private index (`GIT_INDEX_FILE` in the run dir, outside the tree),
 * seeded from the worktree's own index so the stat cache is warm. The caller owns the sandbox and
 * must `close()` it (or `await using`). Throws `SANDBOX_FAILED` when the source is missing or git
 * fails; anything half-made is removed first.
 */
export async function createSandbox(options: CreateSandboxOptions): Promise<LocalSandbox> {
  const { signal } = options;
  signal?.throwIfAborted();
  const id = options.id ?? randomBytes(6).toString('hex');
  if (!ID_PATTERN.test(id)) {
    throw new AgentsError(
      AgentsErrorCode.SandboxFailed,
      `Sandbox id "${id}" is not valid: use 1-64 letters, digits, "_" or "-", starting with a letter or digit.`,
      { details: { id } },
    );
  }
  const revision = options.revision ?? 'HEAD';
  if (revision.startsWith('-') || revision.includes('\0')) {
    throw new AgentsError(
      AgentsErrorCode.SandboxFailed,
      `Revision "${revision}" is not valid: it must name a commit.`,
      {
        details: { revision },
      },
    );
  }
  const exclude = validateExcludes(options.exclude ?? []);
  const maxFileBytes = validateMaxFileBytes(options.maxFileBytes);
  const sourceReal = await realSourceDir(options.source);
  const timeoutMs = options.gitTimeoutMs;
  const baseDir = await realpath(options.baseDir ?? tmpdir());

  const topLevel = await gitTopLevel(sourceReal, signal, timeoutMs);
  const container =
    options.dir === undefined
      ? await mkdtemp(join(baseDir, CONTAINER_PREFIX))
      : await prepareEmptyDir(options.dir, id);
  const runDir = join(container, 'run');
  const treeDir = join(container, id);
  const indexFile = join(runDir, 'index');
  await mkdir(runDir);
  let worktreeAdded = false;
  let excludeFile = join(runDir, EXCLUDE_FILE);
  let largeFiles: LargeFileGuard | undefined;
  try {
    let base: string;
    let root: string;
    let source: string;
    if (topLevel !== undefined) {
      source = topLevel;
      base = (
        await runGit(['rev-parse', '--verify', '--quiet', `${revision}^{commit}`], {
          cwd: source,
          signal,
          timeoutMs,
        }).catch((error: unknown) => {
          throw new AgentsError(
            AgentsErrorCode.SandboxFailed,
            `Revision "${revision}" does not name a commit in ${source}; pass an existing branch, tag or sha.`,
            { cause: error, details: { revision, source } },
          );
        })
      ).stdout.trim();
      try {
        await porcelainGit(source, { signal, timeoutMs }).raw([
          'worktree',
          'add',
          '--detach',
          treeDir,
          base,
        ]);
      } catch (error) {
        throw wrapGitError(error, `add a worktree for sandbox "${id}"`, source);
      }
      worktreeAdded = true;
      root = await realpath(treeDir);
      excludeFile = await writeExcludeFile(runDir, root, exclude, signal);
      largeFiles = await LargeFileGuard.open({ root, runDir, excludeFile, maxFileBytes });
      // Seed the private index from the worktree's own fresh index: same content, warm stat data,
      // so the first `add -A` does not re-hash every file.
      const ownIndex = (
        await runGit(['rev-parse', '--git-path', 'index'], { cwd: root, signal, timeoutMs })
      ).stdout.trim();
      try {
        await copyFile(isAbsolute(ownIndex) ? ownIndex : resolve(root, ownIndex), indexFile);
      } catch {
        await runGit(['read-tree', base], {
          cwd: root,
          env: gitEnv({ GIT_INDEX_FILE: indexFile }),
          signal,
          timeoutMs,
        });
      }
      await runGit(['update-ref', `${SANDBOX_REF_PREFIX}/${id}/${base}`, base], {
        cwd: root,
        signal,
        timeoutMs,
      });
    } else {
      source = sourceReal;
      // Copy, so the user's folder stays untouched; symlinks are copied as links (not followed),
      // and the path map refuses any that point outside.
      await cp(sourceReal, treeDir, {
        recursive: true,
        verbatimSymlinks: true,
        force: false,
        errorOnExist: true,
      });
      root = await realpath(treeDir);
      try {
        await porcelainGit(root, { signal, timeoutMs }).init();
      } catch (error) {
        throw wrapGitError(error, `make the private repo of sandbox "${id}"`, root);
      }
      excludeFile = await writeExcludeFile(runDir, root, exclude, signal);
      const env = gitEnv({ GIT_INDEX_FILE: indexFile });
      largeFiles = await LargeFileGuard.open({ root, runDir, excludeFile, maxFileBytes });
      // The copy can hold anything (datasets, build output): keep files over the cap out of
      // the base snapshot before `add -A` reads them.
      await largeFiles.excludeUntracked(indexGit(root, env, signal, timeoutMs));
      await runGit(addAllArgs(excludeFile), { cwd: root, env, signal, timeoutMs });
      const tree = (
        await runGit(['write-tree'], { cwd: root, env, signal, timeoutMs })
      ).stdout.trim();
      base = (
        await runGit(['commit-tree', tree, '-m', `sandbox ${id}: base`], {
          cwd: root,
          env,
          signal,
          timeoutMs,
        })
      ).stdout.trim();
      await runGit(['update-ref', `${SANDBOX_REF_PREFIX}/${id}/${base}`, base], {
        cwd: root,
        signal,
        timeoutMs,
      });
    }
    const baseTree = (
      await runGit(['rev-parse', `${base}^{tree}`], { cwd: root, signal, timeoutMs })
    ).stdout.trim();
    const marker: SandboxMarker = {
      kind: MARKER_KIND,
      version: 1,
      id,
      mode: topLevel !== undefined ? 'worktree' : 'folder',
      source,
      root,
      createdAt: Date.now(),
      revision,
      base,
      head: base,
      maxFileBytes,
    };
    await writeFile(join(runDir, MARKER_FILE), JSON.stringify(marker, null, 2));
    const aliases = [...new Set([resolve(options.source), sourceReal, source])];
    const integrity = await captureIntegrity(id, root, signal, timeoutMs);
    const nested = new NestedRepoTracker(root);
    await nested.scan(
      (await runGit(['ls-tree', '-r', '-t', '-z', base], { cwd: root, signal, timeoutMs })).stdout,
    );
    return new GitSandbox({
      integrity,
      nested,
      largeFiles: largeFiles!,
      excludeFile,
      id,
      kind: marker.mode,
      root,
      source,
      container,
      runDir,
      indexFile,
      base,
      baseTree,
      timeoutMs,
      paths: createPathMap(root, { aliases }),
      marker,
    });
  } catch (error) {
    await removeSandboxFiles({
      id,
      source: topLevel,
      root: treeDir,
      container,
      worktree: worktreeAdded,
    }).catch(() => undefined);
    if (AgentsError.isInstance(error)) throw error;
    throw new AgentsError(
      signal?.aborted === true ? AgentsErrorCode.Aborted : AgentsErrorCode.SandboxFailed,
      `Could not create sandbox "${id}" from ${sourceReal}: ${errorMessage(error)}`,
      { cause: error, details: { id, source: sourceReal } },
    );
  }
}

interface GitSandboxInit {
  id: string;
  kind: 'worktree' | 'folder';
  root: string;
  source: string;
  container: string;
  runDir: string;
  indexFile: string;
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
  integrity: { guard: RepoIntegrityGuard; gitDir: string };
  nested: NestedRepoTracker;
  largeFiles: LargeFileGuard;
}

class GitSandbox implements LocalSandbox {
  readonly id: string;
  readonly kind: 'worktree' | 'folder';
  readonly root: string;
  readonly source: string;
  readonly runDir: string;
  readonly base: string;
  readonly paths: SandboxPathMap;
  readonly excludeFile: string;
  readonly #integrity: { guard: RepoIntegrityGuard; gitDir: string };
  readonly #nested: NestedRepoTracker;
  readonly #largeFiles: LargeFileGuard;
  #head: string;
  #headTree: string;
  readonly #container: string;
  readonly #env: Record<string, string>;
  readonly #timeoutMs: number | undefined;
  readonly #marker: SandboxMarker;
  readonly #lockFile: string | undefined;
  /** Serializes snapshot/restore/close so `head` always names the latest snapshot. */
  #queue: Promise<unknown> = Promise.resolve();
  #closing: Promise<void> | undefined;

  constructor(init: GitSandboxInit) {
    this.id = init.id;
    this.kind = init.kind;
    this.root = init.root;
    this.source = init.source;
    this.runDir = init.runDir;
    this.base = init.base;
    this.paths = init.paths;
    this.#head = init.head?.sha ?? init.base;
    this.#headTree = init.head?.tree ?? init.baseTree;
    this.#marker = init.marker;
    this.#lockFile = init.lockFile;
    this.#container = init.container;
    this.#timeoutMs = init.timeoutMs;
    this.#env = gitEnv({ GIT_INDEX_FILE: init.indexFile });
    this.excludeFile = init.excludeFile;
    this.#integrity = init.integrity;
    this.#nested = init.nested;
    this.#largeFiles = init.largeFiles;
  }

  nestedRepos(): NestedRepo[] {
    return this.#nested.list();
  }

  get maxFileBytes(): number {
    return this.#largeFiles.maxFileBytes;
  }

  oversizedFiles(): OversizedFile[] {
    return this.#largeFiles.list();
  }

  verifyRepoIntegrity(): Promise<void> {
    return this.#exclusive(() => this.#verifyIntegrity());
  }

  async #verifyIntegrity(): Promise<void> {
    let report;
    try {
      report = await this.#integrity.guard.check();
    } catch (error) {
      throw repoIntegrityCheckFailed(this.id, error);
    }
    if (report.changes.length > 0)
      throw repoIntegrityError(this.id, this.#integrity.gitDir, report);
  }

  get head(): string {
    return this.#head;
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
    if (from === to) return [];
    const { stdout } = await this.#git(
      ['diff-tree', '-r', '-z', '--name-status', '--no-renames', from, to],
      options.signal,
    );
    return parseNameStatus(stdout);
  }

  restore(
    sha: string,
    options: { signal?: AbortSignal } = {},
  ): Promise<{ safety: Snapshot; changed: ChangedPath[] }> {
    return this.#exclusive(async () => {
      const { signal } = options;
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
      const safety = await this.#snapshot(
        `sandbox ${this.id}: before restore to ${target}`,
        signal,
      );
      // Files over the size cap were never captured: moved out of `read-tree`'s way (it would
      // overwrite or delete them) and put back after, whatever happens.
      const git = indexGit(this.root, this.#env, signal, this.#timeoutMs);
      const kept = await this.#largeFiles.protect(target, git);
      // The tree changes under the path map's feet (a restored snapshot may bring a symlink
      // back): drop its cached symlink verdicts, before and after.
      this.paths.invalidateLinkCache();
      let restored = false;
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
      // Keep the target reachable under our namespace (it may be the user's commit).
      await this.#git(['update-ref', `${SANDBOX_REF_PREFIX}/${this.id}/${target}`, target], signal);
      const changed = await this.#diffUnlocked(safety.sha, target, signal);
      await this.#nested.scan(
        (await this.#git(['ls-tree', '-r', '-t', '-z', target], signal)).stdout,
      );
      this.#head = target;
      this.#headTree = targetTree;
      await this.#persistHead();
      return { safety, changed };
    });
  }

  close(options: { remove?: boolean } = {}): Promise<void> {
    const remove = options.remove ?? true;
    this.#closing ??= this.#queue
      .catch(() => undefined)
      .then(async () => {
        // Checked before the worktree goes (its admin dir is part of what is watched); the
        // sandbox is still closed and removed when the check fails, then the failure is thrown.
        const integrity = await this.#verifyIntegrity().then(
          () => undefined,
          (error: unknown) => error,
        );
        if (this.#lockFile !== undefined) await rm(this.#lockFile, { force: true });
        if (remove) {
          await removeSandboxFiles({
            id: this.id,
            source: this.kind === 'worktree' ? this.source : undefined,
            root: this.root,
            container: this.#container,
            worktree: this.kind === 'worktree',
          });
        }
        if (integrity !== undefined) throw integrity;
      });
    return this.#closing;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  async #snapshot(label: string, signal: AbortSignal | undefined): Promise<Snapshot> {
    // Before `add -A`: a config planted by a tool (core.fsmonitor, a filter driver) would
    // otherwise run inside our own git command. Reverts it and fails the snapshot.
    await this.#verifyIntegrity();
    const git = indexGit(this.root, this.#env, signal, this.#timeoutMs);
    // Files skipped for size that shrank or went away are let back in (no-op when none).
    await this.#largeFiles.release(git);
    await this.#git(addAllArgs(this.excludeFile), signal);
    let tree = (await this.#git(['write-tree'], signal)).stdout.trim();
    const parent = this.#head;
    const unchanged = (): Snapshot => this.#withWarnings({ sha: parent, parent, changed: [] });
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
    if (kept !== undefined) {
      raw = kept;
      tree = (await this.#git(['write-tree'], signal)).stdout.trim();
      if (tree === this.#headTree) return unchanged();
    }
    const sha = (
      await this.#git(['commit-tree', tree, '-p', parent, '-m', label || 'snapshot'], signal)
    ).stdout.trim();
    await this.#git(['update-ref', `${SANDBOX_REF_PREFIX}/${this.id}/${sha}`, sha], signal);
    const changed = raw.map(({ status, path }) => ({ status, path }));
    await this.#nested.update(raw);
    this.#head = sha;
    this.#headTree = tree;
    await this.#persistHead();
    return this.#withWarnings({ sha, parent, changed });
  }

  /** Adds nested-repo warnings and first-time size-cap warnings to a snapshot. */
  #withWarnings(snapshot: Snapshot): Snapshot {
    const warnings = [
      ...nestedRepoWarnings(this.#nested.list()),
      ...this.#largeFiles.takeWarnings(),
    ];
    return warnings.length === 0 ? snapshot : { ...snapshot, warnings };
  }

  /**
   * Records the head in the marker (temp file + rename, so a crash leaves the old or the new
   * one), so a reopened sandbox continues from the latest snapshot, not from its base.
   */
  async #persistHead(): Promise<void> {
    this.#marker.head = this.#head;
    await writeMarker(this.runDir, this.#marker);
  }

  async #diffUnlocked(
    from: string,
    to: string,
    signal: AbortSignal | undefined,
  ): Promise<ChangedPath[]> {
    if (from === to) return [];
    const { stdout } = await this.#git(
      ['diff-tree', '-r', '-z', '--name-status', '--no-renames', from, to],
      signal,
    );
    return parseNameStatus(stdout);
  }

  #git(args: string[], signal: AbortSignal | undefined, okExitCodes?: number[]) {
    return runGit(args, {
      cwd: this.root,
      env: this.#env,
      signal,
      ...(this.#timeoutMs === undefined ? {} : { timeoutMs: this.#timeoutMs }),
      ...(okExitCodes === undefined ? {} : { okExitCodes }),
    });
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
        {
          details: { sandboxId: this.id },
        },
      );
    }
  }
}

/** Options for {@link openSandbox}. */
export interface OpenSandboxOptions {
  /** The folder holding the sandbox (as passed to `createSandbox({ dir })`). */
  dir: string;
  /**
   * The user's repo or folder. Needed to create the sandbox; when reopening, it must name the
   * same source the sandbox was made from (else `SANDBOX_FAILED`). Default: the recorded one.
   */
  source?: string;
  /** Revision for a new sandbox (default `HEAD`); ignored when reopening. */
  revision?: string;
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
  /** Per git command timeout. Default 120 s. */
  gitTimeoutMs?: number;
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
}

/** A sandbox from {@link openSandbox}: `reopened` tells whether it existed before. */
export interface OpenedSandbox extends LocalSandbox {
  /** `true` when an existing sandbox was reopened, `false` when it was made by this call. */
  readonly reopened: boolean;
}

/**
 * Opens the sandbox kept in `dir`, or makes it there on first use: the same worktree, private
 * index and refs, continuing from the latest snapshot it recorded (its head is kept in the
 * marker file). This is what lets a thread's sandbox outlive the process that ran it, so a later
 * process can list, diff or roll it back. Close it with `close({ remove: false })` to keep it,
 * or `close()` to delete it.
 *
 * Files edited in the tree while no one had it open are picked up by the next snapshot. Throws
 * `SANDBOX_FAILED` when `dir` holds no sandbox and `create` is false, when the recorded source
 * or id differs from the one given, or when the worktree or its snapshots are gone (removed
 * or pruned); `RUN_ACTIVE` when `lock` is set and another live process holds the sandbox.
 */
export async function openSandbox(options: OpenSandboxOptions): Promise<OpenedSandbox> {
  const { signal } = options;
  signal?.throwIfAborted();
  const dir = resolve(options.dir);
  const runDir = join(dir, 'run');
  const marker = await readMarker(runDir);
  const timeoutMs = options.gitTimeoutMs;
  if (marker === undefined) {
    if (options.create === false || options.source === undefined) {
      throw new AgentsError(
        AgentsErrorCode.SandboxFailed,
        `No sandbox in ${dir}${options.create === false ? '' : ' and no source to make one from'}; it was never made, or it was removed.`,
        { details: { dir } },
      );
    }
    const made = await createSandbox({
      source: options.source,
      dir,
      ...(options.revision === undefined ? {} : { revision: options.revision }),
      ...(options.id === undefined ? {} : { id: options.id }),
      ...(signal === undefined ? {} : { signal }),
      ...(timeoutMs === undefined ? {} : { gitTimeoutMs: timeoutMs }),
      ...(options.exclude === undefined ? {} : { exclude: options.exclude }),
      ...(options.maxFileBytes === undefined ? {} : { maxFileBytes: options.maxFileBytes }),
    });
    if (!options.lock) return Object.assign(made, { reopened: false as const });
    // Made a moment ago by us: rebuild it through the reopen path so it carries the lock.
    await made.close({ remove: false });
    try {
      return Object.assign(await reopen(dir, runDir, (await readMarker(runDir))!, options), {
        reopened: false as const,
      });
    } catch (error) {
      await made.close().catch(() => undefined);
      throw error;
    }
  }
  return Object.assign(await reopen(dir, runDir, marker, options), { reopened: true as const });
}

async function reopen(
  dir: string,
  runDir: string,
  marker: SandboxMarker,
  options: OpenSandboxOptions,
): Promise<GitSandbox> {
  const { signal } = options;
  const timeoutMs = options.gitTimeoutMs;
  const exclude = options.exclude === undefined ? undefined : validateExcludes(options.exclude);
  const maxFileBytes = validateMaxFileBytes(options.maxFileBytes ?? marker.maxFileBytes);
  const fail = (reason: string, cause?: unknown): never => {
    throw new AgentsError(
      AgentsErrorCode.SandboxFailed,
      `Cannot reopen sandbox "${marker.id}" in ${dir}: ${reason}`,
      { ...(cause === undefined ? {} : { cause }), details: { sandboxId: marker.id, dir } },
    );
  };
  if (options.id !== undefined && options.id !== marker.id) {
    fail(`it is sandbox "${marker.id}", not "${options.id}".`);
  }
  if (marker.base === undefined) fail('its record has no base commit (made by an older version).');
  if (options.source !== undefined) {
    const sourceReal = await realSourceDir(options.source);
    const source =
      marker.mode === 'worktree'
        ? ((await gitTopLevel(sourceReal, signal, timeoutMs)) ?? sourceReal)
        : sourceReal;
    if (source !== marker.source) {
      fail(
        `it was made from ${marker.source}, not ${source}; remove it to start over from the new source.`,
      );
    }
  }
  const root = marker.root;
  try {
    if (!(await stat(root)).isDirectory()) throw new Error('not a directory');
  } catch (error) {
    fail(
      `its tree ${root} is gone (removed or pruned); remove the sandbox and start again.`,
      error,
    );
  }
  const git = (args: string[], env?: Record<string, string>, okExitCodes?: number[]) =>
    runGit(args, {
      cwd: root,
      signal,
      ...(env === undefined ? {} : { env }),
      ...(timeoutMs === undefined ? {} : { timeoutMs }),
      ...(okExitCodes === undefined ? {} : { okExitCodes }),
    });
  const top = await git(['rev-parse', '--show-toplevel'], undefined, [128]);
  if (top.exitCode !== 0 || (await realpath(top.stdout.trim()).catch(() => '')) !== root) {
    fail(`${root} is no longer a git work tree (its worktree record was pruned?).`);
  }
  const base = marker.base!;
  const head = marker.head ?? base;
  const trees: string[] = [];
  for (const sha of [base, head]) {
    const resolved = await git(
      ['rev-parse', '--verify', '--quiet', `${sha}^{tree}`],
      undefined,
      [1],
    );
    if (resolved.exitCode !== 0) fail(`its snapshot ${sha} no longer exists in the repository.`);
    trees.push(resolved.stdout.trim());
  }
  const indexFile = join(runDir, 'index');
  const env = gitEnv({ GIT_INDEX_FILE: indexFile });
  try {
    await stat(indexFile);
  } catch {
    // The private index went missing: rebuild it from the head (stat data is cold, so the next
    // snapshot re-hashes the files once).
    await git(['read-tree', head], env);
  }
  // The private exclude file is rewritten on every open, with the given patterns or else the
  // recorded ones: the LFS patterns of `.gitattributes` are read afresh, and the size-cap
  // section is rebuilt from the recorded skipped files below.
  const excludeFile = await writeExcludeFile(
    runDir,
    root,
    exclude ?? (await readRecordedExcludes(join(runDir, EXCLUDE_FILE))),
    signal,
  );
  const largeFiles = await LargeFileGuard.open({ root, runDir, excludeFile, maxFileBytes });
  const recorded = { ...marker, maxFileBytes };
  if (marker.maxFileBytes !== maxFileBytes) await writeMarker(runDir, recorded);
  // A fresh baseline: edits the user made to their git config between runs are theirs to keep.
  const integrity = await captureIntegrity(marker.id, root, signal, timeoutMs);
  const nested = new NestedRepoTracker(root);
  await nested.scan((await git(['ls-tree', '-r', '-t', '-z', head])).stdout);
  const lockFile = options.lock === true ? await acquireRunLock(runDir, marker.id) : undefined;
  return new GitSandbox({
    excludeFile,
    integrity,
    nested,
    largeFiles,
    id: marker.id,
    kind: marker.mode,
    root,
    source: marker.source,
    container: dir,
    runDir,
    indexFile,
    base,
    baseTree: trees[0]!,
    timeoutMs,
    paths: createPathMap(root, {
      aliases: [
        ...new Set([
          ...(options.source === undefined ? [] : [resolve(options.source)]),
          marker.source,
        ]),
      ],
    }),
    marker: recorded,
    head: { sha: head, tree: trees[1]! },
    ...(lockFile === undefined ? {} : { lockFile }),
  });
}

/**
 * Deletes the sandbox kept in `dir` (worktree, run dir, refs) without opening it, also when its
 * tree is already gone. Refuses with `RUN_ACTIVE` while a live process holds its run lock.
 * Returns false when `dir` holds no sandbox (nothing is deleted then).
 */
export async function removeSandbox(dir: string): Promise<boolean> {
  const container = resolve(dir);
  const runDir = join(container, 'run');
  const marker = await readMarker(runDir);
  if (marker === undefined) return false;
  const holder = await lockHolder(runDir);
  if (holder !== undefined) {
    throw new AgentsError(
      AgentsErrorCode.RunActive,
      `Sandbox "${marker.id}" is in use by process ${holder}; wait for its run to end before removing it.`,
      { details: { sandboxId: marker.id, pid: holder } },
    );
  }
  const source = marker.mode === 'worktree' ? marker.source : undefined;
  let sourceExists = false;
  if (source !== undefined)
    sourceExists = await stat(source).then(
      () => true,
      () => false,
    );
  await removeSandboxFiles({
    id: marker.id,
    source: sourceExists ? source : undefined,
    root: marker.root,
    container,
    worktree: marker.mode === 'worktree',
  });
  return true;
}

/** Writes the marker file (temp file + rename, so a crash leaves the old or the new one). */
async function writeMarker(runDir: string, marker: SandboxMarker): Promise<void> {
  const file = join(runDir, MARKER_FILE);
  const temp = `${file}.${process.pid}.tmp`;
  await writeFile(temp, JSON.stringify(marker, null, 2));
  await rename(temp, file);
}

/** Makes `dir` (with parents) for a new sandbox and checks that it is empty. */
async function prepareEmptyDir(dir: string, id: string): Promise<string> {
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

/** The live process holding the run lock of a run dir, or undefined (no lock, or a stale one). */
async function lockHolder(runDir: string): Promise<number | undefined> {
  let pid: unknown;
  try {
    pid = (JSON.parse(await readFile(join(runDir, LOCK_FILE), 'utf8')) as { pid?: unknown }).pid;
  } catch {
    return undefined;
  }
  if (typeof pid !== 'number' || !Number.isInteger(pid) || pid <= 0) return undefined;
  if (pid === process.pid) return pid;
  try {
    process.kill(pid, 0);
    return pid;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else; still alive.
    return (error as NodeJS.ErrnoException).code === 'EPERM' ? pid : undefined;
  }
}

async function acquireRunLock(runDir: string, id: string): Promise<string> {
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
        throw new AgentsError(
          AgentsErrorCode.RunActive,
          holder === undefined
            ? `Cannot lock sandbox "${id}" (${file}): ${errorMessage(error)}.`
            : `Sandbox "${id}" is in use by process ${holder} (a run or a rollback on its thread); wait for it to finish before starting another.`,
          {
            cause: error,
            details: { sandboxId: id, ...(holder === undefined ? {} : { pid: holder }) },
          },
        );
      }
      const holder = await lockHolder(runDir);
      if (holder !== undefined) {
        throw new AgentsError(
          AgentsErrorCode.RunActive,
          `Sandbox "${id}" is in use by process ${holder} (a run or a rollback on its thread); wait for it to finish before starting another.`,
          { details: { sandboxId: id, pid: holder } },
        );
      }
      // Left by a process that died: take it over. A narrow race remains when two processes
      // take over the same stale lock at the same moment; a live lock is never taken.
      await rm(file, { force: true });
    }
  }
}

/** Options for {@link pruneSandboxes}. */
export interface PruneSandboxesOptions {
  /** A git repo: prune its worktree sandboxes and orphaned `refs/agents/<id>/` refs. */
  source?: string;
  /** A base dir: prune folder sandboxes (and stale containers) made there. */
  baseDir?: string;
  /** Sandboxes idle (no snapshot) for longer than this are removed. */
  olderThanMs: number;
  /** Clock, for tests. Default `Date.now()`. */
  now?: number;
  /** Ids never to remove (e.g. sandboxes of runs still active in this process). */
  keep?: readonly string[];
  signal?: AbortSignal;
}

/**
 * Bounds disk use: removes sandboxes idle for longer than `olderThanMs` (worktree, run dir and
 * refs), prunes stale worktree records, and deletes `refs/agents/<id>/` refs whose sandbox is
 * gone and whose newest snapshot is older than the cutoff. Only folders carrying our marker file
 * are touched. Never runs `git gc` (git's auto-gc reclaims the objects later).
 * Returns the ids it removed.
 */
export async function pruneSandboxes(
  options: PruneSandboxesOptions,
): Promise<{ removed: string[] }> {
  const { signal } = options;
  signal?.throwIfAborted();
  const cutoff = (options.now ?? Date.now()) - options.olderThanMs;
  const keep = new Set(options.keep ?? []);
  const removed = new Set<string>();
  const errors: unknown[] = [];

  if (options.source !== undefined) {
    const top = await gitTopLevel(await realSourceDir(options.source), signal);
    if (top === undefined) {
      throw new AgentsError(
        AgentsErrorCode.SandboxFailed,
        `${options.source} is not a git repository; pass baseDir to prune folder sandboxes.`,
      );
    }
    const listing = (await runGit(['worktree', 'list', '--porcelain', '-z'], { cwd: top, signal }))
      .stdout;
    // Never `git worktree prune`: it would also drop the user's own records of worktrees on a
    // moved or unmounted disk. Only records of our own vanished sandboxes are removed.
    await removeVanishedSandboxRecords(top, listing, signal);
    const live = new Set<string>();
    for (const field of listing.split('\0')) {
      if (!field.startsWith('worktree ')) continue;
      const path = field.slice('worktree '.length);
      const marker = await readMarker(join(dirname(path), 'run'));
      if (marker === undefined) continue;
      live.add(marker.id);
      if (keep.has(marker.id) || (await lastActivity(join(dirname(path), 'run'), marker)) > cutoff)
        continue;
      if ((await lockHolder(join(dirname(path), 'run'))) !== undefined) continue;
      try {
        await removeSandboxFiles({
          id: marker.id,
          source: top,
          root: path,
          container: dirname(path),
          worktree: true,
        });
        removed.add(marker.id);
        live.delete(marker.id);
      } catch (error) {
        errors.push(error);
      }
    }
    // Refs left behind by sandboxes whose folders vanished (crash, tmp cleaned on reboot).
    const refs = (
      await runGit(
        ['for-each-ref', '--format=%(refname)%00%(committerdate:unix)', `${SANDBOX_REF_PREFIX}/`],
        { cwd: top, signal },
      )
    ).stdout;
    const newest = new Map<string, number>();
    for (const line of refs.split('\n')) {
      const [ref, date] = line.split('\0');
      if (ref === undefined || date === undefined) continue;
      const id = ref.slice(SANDBOX_REF_PREFIX.length + 1).split('/')[0];
      if (id === undefined || id === '') continue;
      newest.set(id, Math.max(newest.get(id) ?? 0, Number(date) * 1000));
    }
    for (const [id, when] of newest) {
      if (live.has(id) || keep.has(id) || when > cutoff) continue;
      await deleteRefs(top, id, signal);
      removed.add(id);
    }
  }

  if (options.baseDir !== undefined) {
    const baseDir = await realpath(options.baseDir);
    for (const name of await readdir(baseDir)) {
      if (!name.startsWith(CONTAINER_PREFIX)) continue;
      const container = join(baseDir, name);
      const marker = await readMarker(join(container, 'run'));
      if (marker === undefined || marker.mode !== 'folder') continue;
      if (keep.has(marker.id) || (await lastActivity(join(container, 'run'), marker)) > cutoff)
        continue;
      try {
        await rm(container, { recursive: true, force: true });
        removed.add(marker.id);
      } catch (error) {
        errors.push(error);
      }
    }
  }
  if (errors.length > 0)
    throw new AggregateError(errors, `Pruning sandboxes failed for ${errors.length} sandbox(es).`);
  return { removed: [...removed] };
}

/**
 * `add -A` with the sandbox's private exclude file, and fsmonitor off so no configured hook
 * program runs inside our snapshot.
 */
function addAllArgs(excludeFile: string): string[] {
  return ['-c', `core.excludesFile=${excludeFile}`, '-c', 'core.fsmonitor=false', 'add', '-A'];
}

/** Runs git on a sandbox's private index, with optional stdin; resolves to its stdout. */
function indexGit(
  root: string,
  env: Record<string, string>,
  signal: AbortSignal | undefined,
  timeoutMs: number | undefined,
): IndexGit {
  return async (args, input) =>
    (
      await runGit(args, {
        cwd: root,
        env,
        signal,
        ...(timeoutMs === undefined ? {} : { timeoutMs }),
        ...(input === undefined ? {} : { input }),
      })
    ).stdout;
}

/** Takes the T15 baseline for the repo behind the sandbox tree at `root`. */
async function captureIntegrity(
  id: string,
  root: string,
  signal: AbortSignal | undefined,
  timeoutMs: number | undefined,
): Promise<{ guard: RepoIntegrityGuard; gitDir: string }> {
  const [common = '', own = ''] = (
    await runGit(['rev-parse', '--git-common-dir', '--git-dir'], {
      cwd: root,
      signal,
      ...(timeoutMs === undefined ? {} : { timeoutMs }),
    })
  ).stdout
    .trim()
    .split('\n');
  const commonDir = await realpath(isAbsolute(common) ? common : resolve(root, common));
  const worktreeDir = await realpath(isAbsolute(own) ? own : resolve(root, own));
  try {
    return {
      guard: await captureRepoIntegrity({ commonDir, worktreeDir, id }),
      gitDir: commonDir,
    };
  } catch (error) {
    throw repoIntegrityCheckFailed(id, error);
  }
}

/** The git status letters of `diff-tree -z --name-status` → changed paths. */
function parseNameStatus(output: string): ChangedPath[] {
  const fields = output.split('\0');
  const changed: ChangedPath[] = [];
  for (let index = 0; index + 1 < fields.length; index += 2) {
    const status = fields[index]!;
    const path = fields[index + 1]!;
    if (status === '') break;
    changed.push({ status: status.charAt(0), path });
  }
  return changed;
}

function assertSha(sha: string): void {
  if (!SHA_PATTERN.test(sha)) {
    throw new AgentsError(
      AgentsErrorCode.CheckpointNotFound,
      `"${sha}" is not a snapshot sha (expected hex digits).`,
      {
        details: { sha },
      },
    );
  }
}

async function realSourceDir(source: string): Promise<string> {
  try {
    const real = await realpath(source);
    if (!(await stat(real)).isDirectory()) throw new Error('not a directory');
    return real;
  } catch (error) {
    throw new AgentsError(
      AgentsErrorCode.SandboxFailed,
      `Sandbox source ${source} is not an existing directory; pass the project's folder or git repo.`,
      { cause: error, details: { source } },
    );
  }
}

/** The realpath of the work tree top containing `dir`, or undefined when `dir` is not in a git work tree. */
async function gitTopLevel(
  dir: string,
  signal?: AbortSignal,
  timeoutMs?: number,
): Promise<string | undefined> {
  const result = await runGit(['rev-parse', '--is-inside-work-tree', '--show-toplevel'], {
    cwd: dir,
    signal,
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
    okExitCodes: [128],
  });
  const [inside, top] = result.stdout.trim().split('\n');
  if (result.exitCode !== 0 || inside !== 'true' || top === undefined || top === '')
    return undefined;
  return realpath(top);
}

async function deleteRefs(cwd: string, id: string, signal?: AbortSignal): Promise<void> {
  const refs = (
    await runGit(['for-each-ref', '--format=%(refname)', `${SANDBOX_REF_PREFIX}/${id}/`], {
      cwd,
      signal,
    })
  ).stdout
    .split('\n')
    .filter((ref) => ref !== '');
  if (refs.length > 0) {
    await runGit(['update-ref', '--stdin'], {
      cwd,
      signal,
      input: refs.map((ref) => `delete ${ref}\n`).join(''),
    });
  }
  // git leaves the empty namespace folder behind; drop it so the user's .git looks as before.
  // rmdir fails harmlessly while another sandbox still has refs there.
  try {
    const common = (await runGit(['rev-parse', '--git-common-dir'], { cwd, signal })).stdout.trim();
    await rmdir(join(isAbsolute(common) ? common : resolve(cwd, common), SANDBOX_REF_PREFIX));
  } catch {
    // Not empty, or already gone.
  }
}

/**
 * Deletes the worktree record (`<common dir>/worktrees/<name>/`) whose `gitdir` points into
 * `root`, if any: the one-worktree form of `git worktree prune`, which would also drop the
 * user's records of worktrees that are only missing for now (a moved or unmounted disk).
 */
async function removeWorktreeRecord(source: string, root: string): Promise<void> {
  const common = (
    await runGit(['rev-parse', '--path-format=absolute', '--git-common-dir'], { cwd: source })
  ).stdout.trim();
  const records = join(common, 'worktrees');
  let names: string[];
  try {
    names = await readdir(records);
  } catch {
    return;
  }
  const target = resolve(root, '.git');
  for (const name of names) {
    const gitdir = await readFile(join(records, name, 'gitdir'), 'utf8').catch(() => undefined);
    if (gitdir === undefined || resolve(gitdir.trim()) !== target) continue;
    await rm(join(records, name), { recursive: true, force: true });
  }
}

/**
 * Drops the records of our sandboxes whose folders vanished (tmp cleaned on reboot, a crash):
 * a `prunable` worktree whose folder name is a sandbox id with refs under `refs/agents/`, or
 * whose container is one of ours. The user's own prunable records are left alone.
 */
async function removeVanishedSandboxRecords(
  top: string,
  listing: string,
  signal: AbortSignal | undefined,
): Promise<void> {
  const ids = new Set(
    (
      await runGit(['for-each-ref', '--format=%(refname)', `${SANDBOX_REF_PREFIX}/`], {
        cwd: top,
        signal,
      })
    ).stdout
      .split('\n')
      .map((ref) => ref.slice(SANDBOX_REF_PREFIX.length + 1).split('/')[0])
      .filter((id): id is string => id !== undefined && id !== ''),
  );
  let path: string | undefined;
  for (const field of listing.split('\0')) {
    if (field.startsWith('worktree ')) path = field.slice('worktree '.length);
    else if (field.startsWith('prunable') && path !== undefined) {
      const ours = ids.has(basename(path)) || basename(dirname(path)).startsWith(CONTAINER_PREFIX);
      if (ours) await removeWorktreeRecord(top, path);
    }
  }
}

/** Removes a sandbox's refs, worktree record and folders; tolerant of parts already gone. */
async function removeSandboxFiles(target: {
  id: string;
  source: string | undefined;
  root: string;
  container: string;
  worktree: boolean;
}): Promise<void> {
  const errors: unknown[] = [];
  if (target.source !== undefined) {
    await deleteRefs(target.source, target.id).catch((error: unknown) => errors.push(error));
    if (target.worktree) {
      try {
        await porcelainGit(target.source).raw([
          'worktree',
          'remove',
          '--force',
          '--force',
          target.root,
        ]);
      } catch {
        // Already removed or its folder vanished: drop its stale record below.
      }
      await removeWorktreeRecord(target.source, target.root).catch((error: unknown) =>
        errors.push(error),
      );
    }
  }
  await rm(target.container, { recursive: true, force: true }).catch((error: unknown) =>
    errors.push(error),
  );
  if (errors.length > 0) {
    throw new AgentsError(
      AgentsErrorCode.SandboxFailed,
      `Sandbox "${target.id}" was not fully removed (${target.container}): ${errors.map(errorMessage).join('; ')}`,
      { cause: errors[0], details: { sandboxId: target.id } },
    );
  }
}

async function readMarker(runDir: string): Promise<SandboxMarker | undefined> {
  try {
    const parsed: unknown = JSON.parse(await readFile(join(runDir, MARKER_FILE), 'utf8'));
    if (typeof parsed !== 'object' || parsed === null) return undefined;
    const record = parsed as Record<string, unknown>;
    if (
      record['kind'] !== MARKER_KIND ||
      typeof record['id'] !== 'string' ||
      !ID_PATTERN.test(record['id'])
    )
      return undefined;
    if (record['mode'] !== 'worktree' && record['mode'] !== 'folder') return undefined;
    const optionalSha = (key: string): Record<string, string> => {
      const value = record[key];
      return typeof value === 'string' && SHA_PATTERN.test(value) ? { [key]: value } : {};
    };
    return {
      kind: MARKER_KIND,
      version: 1,
      id: record['id'],
      mode: record['mode'],
      source: String(record['source']),
      root: String(record['root']),
      createdAt: typeof record['createdAt'] === 'number' ? record['createdAt'] : 0,
      ...(typeof record['revision'] === 'string' ? { revision: record['revision'] } : {}),
      ...optionalSha('base'),
      ...optionalSha('head'),
      ...(typeof record['maxFileBytes'] === 'number' &&
      Number.isSafeInteger(record['maxFileBytes']) &&
      record['maxFileBytes'] >= 0
        ? { maxFileBytes: record['maxFileBytes'] }
        : {}),
    };
  } catch {
    return undefined;
  }
}

/** Last time the sandbox did anything: its private index changes on every snapshot. */
async function lastActivity(runDir: string, marker: SandboxMarker): Promise<number> {
  try {
    return Math.max(marker.createdAt, (await stat(join(runDir, 'index'))).mtimeMs);
  } catch {
    return marker.createdAt;
  }
}
