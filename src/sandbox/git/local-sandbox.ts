import { cp, mkdir, mkdtemp, realpath } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { AgentsError, AgentsErrorCode, errorMessage } from '../../errors.js';
import { removeTree } from '../remove-tree.js';
import { clearCreationMark, prepareCreationDir } from '../creation-mark.js';
import { killPoint } from '../../core/kill-point.js';
import { indexAtCommit, makeRepositoryBase, resolveBasePlan } from './base-snapshot.js';
import { parseSandboxFrom } from '../base-origin.js';
import type { SandboxBaseOrigin, SandboxWarning } from '../base-origin.js';
import { build } from './build-sandbox.js';
import { LargeFileGuard } from '../large-files.js';
import { validateMaxFileBytes } from '../size-cap.js';
import type { OversizedFile } from '../size-cap.js';
import type { NestedRepo } from '../nested-repos.js';
import {
  acquireRunLock,
  newSandboxId,
  MARKER_KIND,
  MARKER_VERSION,
  writeMarker,
  type SandboxMarker,
} from '../sandbox-marker.js';
import { validateExcludes, writeExcludeFile } from '../sandbox-excludes.js';
import { addAll, INDEX_FILE, initStore, SNAPSHOT_REF_PREFIX, storeGit } from './snapshot-store.js';
import { gitTopLevel, isInside, realSourceDir, SANDBOXES_FOLDER } from '../source-dir.js';
import { agentsStateDir, projectStateDir } from '../state-dir.js';
import { makeToolRepo, type ToolRepoSource } from './tool-repo.js';
import type { CreateSandboxOptions, RunSandbox } from '../backend.js';
import { gitSnapshotStore } from './git-store.js';
import { UnrecordablePaths } from '../unrecordable-paths.js';
import { removeEmptyDirs } from '../empty-dirs.js';

/** Name prefix of the folder that holds one sandbox (its tree and its run dir). */
export const CONTAINER_PREFIX = 'agents-sandbox-';

/** What only the git backend takes besides {@link CreateSandboxOptions}. */
export interface GitSandboxOptions {
  /** Per git command timeout. Default 120 s. */
  gitTimeoutMs?: number;
}
/** A sandbox made by {@link createSandbox}; adds what this implementation knows to {@link Sandbox}. */
export interface LocalSandbox extends RunSandbox {
  /** Private folder outside the tree: the snapshot store (`git/`), index, marker, lock. */
  readonly runDir: string;
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
}

/**
 * Creates a sandbox for one run: a folder of its own, outside the user's working tree, holding
 * the tree the tools work in and a private run dir.
 *
 * - Git source: the user's working tree as it is (default), or the files of a commit (`from`),
 *   checked out from a snapshot store of the sandbox's own (`run/git`, every object of the base
 *   copied in; see `snapshot-store.ts`, `base-snapshot.ts`); the tree holds a repository of its
 *   own for the tools (`tool-repo.ts`). The user's repo is only read: no index, worktree
 *   record, ref, object, config or hook of it changes.
 * - Plain folder: the folder is copied (its `.git`, if any, and the workspace's local state
 *   left out) and the tree gets an empty repository of its own.
 *
 * Snapshots use the private store and a private index (warm stat data from the checkout). The
 * caller owns the sandbox and must `close()` it (or `await using`). Throws `SANDBOX_FAILED`
 * when the source is missing or git fails; anything half-made is removed first.
 */
export async function createSandbox(
  options: CreateSandboxOptions & GitSandboxOptions,
): Promise<LocalSandbox> {
  const { signal } = options;
  signal?.throwIfAborted();
  const id = newSandboxId(options.id);
  const request = parseSandboxFrom(options.from, options.revision);
  const exclude = validateExcludes(options.exclude ?? []);
  const maxFileBytes = validateMaxFileBytes(options.maxFileBytes);
  const sourceReal = await realSourceDir(options.source);
  const timeoutMs = options.gitTimeoutMs;
  const git = { signal, timeoutMs };
  const topLevel = await gitTopLevel(sourceReal, signal, timeoutMs);
  const source = topLevel ?? sourceReal;
  if (topLevel === undefined && options.from !== undefined && request.kind !== 'worktree') {
    throw new AgentsError(
      AgentsErrorCode.ConfigInvalid,
      `Sandbox source ${source} is a plain folder, not a git repository, so it has no ${request.kind === 'head' ? 'head' : `revision "${options.from}"`}; use from: worktree (the default) to copy it as it is.`,
      { details: { source, from: options.from } },
    );
  }
  // Resolved before any folder is made: a bad revision leaves nothing behind.
  const plan = topLevel === undefined ? undefined : await resolveBasePlan(topLevel, request, git);
  let container: string;
  // The first folder this call made on the way to the base folder: a failure removes it again
  // (when empty), so a failed start leaves the state folder as it found it.
  let madeBase: { dir: string; first: string } | undefined;
  if (options.dir === undefined) {
    const baseDir =
      options.baseDir ??
      join(
        projectStateDir(source, { stateDir: options.stateDir ?? agentsStateDir() }),
        SANDBOXES_FOLDER,
      );
    const first = await mkdir(baseDir, { recursive: true });
    if (first !== undefined) madeBase = { dir: baseDir, first: dirname(first) };
    container = await mkdtempIn(baseDir);
  } else {
    container = await prepareCreationDir(options.dir, id);
  }
  const runDir = join(container, 'run');
  const treeDir = join(container, id);
  try {
    if (isInside(container, source)) {
      throw new AgentsError(
        AgentsErrorCode.SandboxFailed,
        `The sandbox folder ${container} is inside its source ${source}; a sandbox must live outside the user's files. Set AGENTS_STATE_DIR (or the sandbox's base folder) to a folder outside ${source}.`,
        { details: { id, source, container } },
      );
    }
    await mkdir(runDir);
    await initStore(runDir, git);
    let toolSource: ToolRepoSource | undefined;
    let origin: SandboxBaseOrigin = { from: 'folder' };
    let warnings: SandboxWarning[] = [];
    let base: string;
    let root: string;
    let excludeFile: string;
    let largeFiles: LargeFileGuard;
    let head: string | undefined;
    const seeded = await options.seed?.(gitSnapshotStore(runDir, treeDir, { timeoutMs }), signal);
    if (seeded !== undefined) {
      // The history is in the store already: check its base out, nothing copied from the source.
      toolSource = plan?.source;
      origin =
        plan === undefined
          ? { from: 'folder' }
          : plan.request.kind === 'revision'
            ? { from: 'revision', revision: plan.request.revision }
            : { from: plan.request.kind };
      await mkdir(treeDir);
      root = await realpath(treeDir);
      base = seeded.base;
      head = seeded.head ?? base;
      await storeGit(runDir, root, ['read-tree', '-u', '--reset', head], git);
      await storeGit(runDir, root, ['update-ref', `${SNAPSHOT_REF_PREFIX}/${head}`, head], git);
      excludeFile = await writeExcludeFile(runDir, root, exclude, signal);
      largeFiles = await LargeFileGuard.open({ root, runDir, excludeFile, maxFileBytes });
    } else if (topLevel !== undefined && plan !== undefined) {
      toolSource = plan.source;
      await mkdir(treeDir);
      root = await realpath(treeDir);
      const made = await makeRepositoryBase({
        id,
        repo: topLevel,
        runDir,
        root,
        plan,
        exclude,
        maxFileBytes,
        git,
      });
      ({ base, origin, warnings } = made);
      // Checks the files out and fills the private index with their stat data.
      await storeGit(runDir, root, ['read-tree', '-u', '--reset', base], git);
      excludeFile = await writeExcludeFile(runDir, root, exclude, signal);
      largeFiles = await LargeFileGuard.open({ root, runDir, excludeFile, maxFileBytes });
    } else {
      // Copy, so the user's folder stays untouched; symlinks are copied as links (not followed),
      // and the path map refuses any that point outside.
      await cp(sourceReal, treeDir, {
        recursive: true,
        verbatimSymlinks: true,
        force: false,
        errorOnExist: true,
        filter: (from) => !isLocalState(relative(sourceReal, from)),
      });
      root = await realpath(treeDir);
      excludeFile = await writeExcludeFile(runDir, root, exclude, signal);
      largeFiles = await LargeFileGuard.open({ root, runDir, excludeFile, maxFileBytes });
      const indexGit = async (args: readonly string[], input?: string) =>
        (await storeGit(runDir, root, args, { ...git, ...(input === undefined ? {} : { input }) }))
          .stdout;
      // The copy can hold anything (datasets, build output): keep files over the cap out of
      // the base snapshot before `add -A` reads them.
      await largeFiles.excludeUntracked(indexGit);
      await addAll(runDir, root, excludeFile, new UnrecordablePaths(root), git);
      const tree = (await storeGit(runDir, root, ['write-tree'], git)).stdout.trim();
      base = (
        await storeGit(runDir, root, ['commit-tree', tree, '-m', `sandbox ${id}: base`], git)
      ).stdout.trim();
    }
    await storeGit(runDir, root, ['update-ref', `${SNAPSHOT_REF_PREFIX}/${base}`, base], git);
    await makeToolRepo(root, join(runDir, INDEX_FILE), toolSource, git);
    if (toolSource !== undefined && (origin.uncommitted ?? 0) > 0)
      await indexAtCommit(root, toolSource.commit, git);
    const marker: SandboxMarker = {
      kind: MARKER_KIND,
      version: MARKER_VERSION,
      id,
      mode: topLevel === undefined ? 'folder' : 'repository',
      source,
      root,
      createdAt: Date.now(),
      ...(origin.revision === undefined ? {} : { revision: origin.revision }),
      from: origin.from,
      ...(origin.uncommitted === undefined ? {} : { uncommitted: origin.uncommitted }),
      ...(toolSource === undefined ? {} : { sourceCommit: toolSource.commit }),
      base,
      head: head ?? base,
      maxFileBytes,
    };
    killPoint('sandbox-create');
    await writeMarker(runDir, marker);
    if (options.dir !== undefined) await clearCreationMark(container);
    // A run sandbox of the state folder (or a base dir) is locked while open, so `agents
    // sandbox prune` never deletes it under a live run; a `dir` sandbox is locked by
    // `openSandbox({ lock })` when its owner asks.
    const lockFile = options.dir === undefined ? await acquireRunLock(runDir, id) : undefined;
    const sandbox = await build({
      marker,
      container,
      runDir,
      excludeFile,
      largeFiles,
      timeoutMs,
      signal,
      aliases: [resolve(options.source), sourceReal, source],
      baseWarnings: warnings,
      recordNested: true,
      ...(lockFile === undefined ? {} : { lockFile }),
      ...(options.dir === undefined && options.baseDir === undefined
        ? { emptyUpTo: options.stateDir ?? agentsStateDir() }
        : {}),
    });
    for (const warning of warnings) options.onSandboxWarning?.(warning);
    return sandbox;
  } catch (error) {
    await removeTree(container).catch(() => undefined);
    if (madeBase !== undefined) await removeEmptyDirs(madeBase.dir, madeBase.first);
    if (AgentsError.isInstance(error)) throw error;
    throw new AgentsError(
      signal?.aborted === true ? AgentsErrorCode.Aborted : AgentsErrorCode.SandboxFailed,
      `Could not create sandbox "${id}" from ${sourceReal}: ${errorMessage(error)}`,
      { cause: error, details: { id, source: sourceReal } },
    );
  }
}

/**
 * A fresh container folder in `baseDir`. Another sandbox's removal may take an empty `baseDir`
 * away between our `mkdir` and this call: then it is made again, once.
 */
async function mkdtempIn(baseDir: string): Promise<string> {
  try {
    return await mkdtemp(join(await realpath(baseDir), CONTAINER_PREFIX));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    await mkdir(baseDir, { recursive: true });
    return await mkdtemp(join(await realpath(baseDir), CONTAINER_PREFIX));
  }
}

/**
 * What a plain-folder copy leaves out: its `.git` (the sandbox has a repository of its own) and
 * the files `agents` writes into a workspace while it runs (checkpoints, audit log, output
 * spills, sandboxes of older versions), which are the user's state, not project files.
 */
function isLocalState(rel: string): boolean {
  const parts = rel.split(sep);
  if (parts[0] === '.git') return true;
  if (parts[0] !== '.agents' || parts.length < 2) return false;
  const name = parts[1]!;
  return (
    name.startsWith('checkpoints.sqlite') ||
    name === 'audit.jsonl' ||
    name === 'sandboxes' ||
    name === 'output'
  );
}
