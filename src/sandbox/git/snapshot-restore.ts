import { AgentsError, AgentsErrorCode } from '../../errors.js';
import type { ChangedPath } from '../../core/change-record.js';
import { putBackIgnoredFiles } from '../ignored-files.js';
import type { LargeFileGuard } from '../large-files.js';
import type { NestedRepoTracker } from '../nested-repos.js';
import type { SandboxPathMap } from '../path-map.js';
import type { RestoreResult } from '../types.js';
import type { UnrecordablePaths } from '../unrecordable-paths.js';
import {
  assertSha,
  diffSnapshots,
  GITLINK_MODE,
  SNAPSHOT_REF_PREFIX,
  storeEnv,
  storeGit,
  storeIndexGit,
} from './snapshot-store.js';
import type { IndexLag, WatchedSnapshots } from './watched-snapshots.js';

/**
 * How a GitSandbox restore writes the disk, apart from the class (issue 39: files under 400
 * lines) so that the class keeps the snapshots, the head and the order of a restore (resolve,
 * safety snapshot, write, move the head), and this file the two ways of writing: the changed
 * paths only (issue 29: the raw diff head → target, read back through the watcher) or the whole
 * tree (`read-tree -u --reset` over the private index). Both end by putting back the files the
 * target ignores. Neither moves the head: the sandbox does, with what they return. They see the
 * sandbox's private state only through {@link SandboxParts}.
 */

/**
 * The parts of a GitSandbox that its restores write through and its snapshots share: tree and
 * store, the records of what snapshots skip, the watcher, the index lag. The sandbox holds them
 * in this one record; its head, queue and marker stay its own.
 */
export interface SandboxParts {
  id: string;
  root: string;
  runDir: string;
  paths: SandboxPathMap;
  timeoutMs: number | undefined;
  largeFiles: LargeFileGuard;
  nested: NestedRepoTracker;
  unrecordable: UnrecordablePaths;
  watched: WatchedSnapshots;
  /** Index entries watched snapshots left behind the head tree (see watched-snapshots.ts). */
  indexLag: IndexLag;
}

/**
 * Why the watcher's change set cannot stand for the whole tree, or undefined when it can: then a
 * snapshot is taken from it (see watched-snapshots.ts) and a restore writes only the changed
 * paths. It cannot while no watcher runs, or while the tree holds files the snapshots skip.
 */
export function unwatchedReason(parts: SandboxParts): string | undefined {
  const idle = parts.watched.idleReason();
  if (idle !== undefined) return idle;
  if (parts.largeFiles.list().length > 0) return 'files over the size cap are skipped';
  if (parts.nested.list().length > 0) return 'the tree holds a nested repository';
  if (parts.unrecordable.list().length > 0) return 'the tree holds names git refuses';
  return undefined;
}

/** One restore: the snapshot it goes to, the safety snapshot that undoes it, its signal. */
export interface RestoreRun {
  target: string;
  targetTree: string;
  safety: string;
  signal: AbortSignal | undefined;
}

/** What a restore wrote: its {@link RestoreResult} but the safety snapshot. */
export type RestoreWrites = Required<Omit<RestoreResult, 'safety'>>;

/** The commit and tree `sha` names in the store; `CHECKPOINT_NOT_FOUND` when it names none. */
export async function resolveRestoreTarget(
  parts: SandboxParts,
  sha: string,
  signal: AbortSignal | undefined,
): Promise<{ target: string; targetTree: string }> {
  assertSha(sha);
  const { runDir, root } = parts;
  const options = { signal, timeoutMs: parts.timeoutMs };
  const args = ['rev-parse', '--verify', '--quiet', `${sha}^{commit}`];
  const resolved = await storeGit(runDir, root, args, { ...options, okExitCodes: [1] });
  const target = resolved.stdout.trim();
  if (resolved.exitCode !== 0 || target === '') {
    throw new AgentsError(
      AgentsErrorCode.CheckpointNotFound,
      `Snapshot ${sha} does not exist in sandbox "${parts.id}"; list the thread's checkpoints to pick an existing one.`,
      { details: { sandboxId: parts.id, sha } },
    );
  }
  const tree = await storeGit(runDir, root, ['rev-parse', `${target}^{tree}`], options);
  return { target, targetTree: tree.stdout.trim() };
}

/**
 * A restore that writes only the paths where the head tree (the safety snapshot: the disk)
 * and the target differ (see tree-restore.ts), or undefined when it must take the full path
 * (not watching, or files the snapshots skip: nested repos, files over the cap, names git
 * refuses). The result is checked from disk like a watched snapshot: the paths written are
 * read back and must give the target tree.
 */
export async function restoreChangedPaths(
  parts: SandboxParts,
  run: RestoreRun,
  headTree: string,
): Promise<RestoreWrites | undefined> {
  const { target, targetTree } = run;
  const { watched, paths } = parts;
  if (unwatchedReason(parts) !== undefined) return undefined;
  const raw = await watched.diff(headTree, targetTree);
  const gitlink = raw?.some((c) => c.srcMode === GITLINK_MODE || c.dstMode === GITLINK_MODE);
  if (raw === undefined || gitlink === true) return undefined;
  paths.invalidateLinkCache();
  try {
    await watched.apply(raw);
    // Read back through the watcher (our own writes are its events): O(changed), and it
    // leaves no events behind for the next snapshot.
    const check = await watched.take(targetTree);
    if ('reason' in check) {
      // (a .gitignore came back, say): the next snapshot scans, so nothing is missed.
      watched.stop();
    } else if (!check.unchanged) {
      throw restoreLeftWrongTree(parts.id, run, check.tree);
    }
  } catch (error) {
    // The disk is somewhere between the two: only a scan knows where.
    watched.stop();
    parts.indexLag.record(raw);
    throw error;
  } finally {
    paths.invalidateLinkCache();
  }
  parts.indexLag.record(raw);
  await watched.keepRef(target).catch(() => keepRef(parts, run));
  const restored = raw.map(({ status, path }) => ({ status, path }));
  const { changed, keptIgnored } = await withoutPutBackIgnored(parts, run, restored);
  await parts.nested.update(raw);
  return { changed, keptIgnored, writes: 'changed' };
}

/**
 * A restore through the private index (`read-tree -u --reset`), first brought up to the head
 * tree for the paths watched snapshots changed; the nested-repo tracker is rescanned from the
 * target after.
 */
export async function restoreFull(parts: SandboxParts, run: RestoreRun): Promise<RestoreWrites> {
  const { target, targetTree, safety } = run;
  const { runDir, root, paths } = parts;
  const options = { signal: run.signal, timeoutMs: parts.timeoutMs };
  const git = (args: string[]) => storeGit(runDir, root, args, options);
  await parts.indexLag.sync(runDir, root, options);
  // Files over the size cap were never captured: moved out of `read-tree`'s way (it would
  // overwrite or delete them) and put back after, whatever happens.
  const kept = await parts.largeFiles.protect(target, storeIndexGit(runDir, root, options));
  // The tree changes under the path map's feet (a restored snapshot may bring a symlink
  // back): drop its cached symlink verdicts, before and after.
  paths.invalidateLinkCache();
  let restored = false;
  try {
    await git(['read-tree', '-u', '--reset', target]);
    restored = true;
  } finally {
    paths.invalidateLinkCache();
    await kept?.putBack(restored);
  }
  const tree = (await git(['write-tree'])).stdout.trim();
  if (tree !== targetTree) throw restoreLeftWrongTree(parts.id, run, tree);
  await keepRef(parts, run);
  const restoredChanges = await diffSnapshots(runDir, root, safety, target, options);
  const { changed, keptIgnored } = await withoutPutBackIgnored(parts, run, restoredChanges);
  await parts.nested.scan((await git(['ls-tree', '-r', '-t', '-z', target])).stdout);
  return { changed, keptIgnored, writes: 'full' };
}

/** Keeps the restored snapshot reachable (a ref of its own, as every snapshot has). */
async function keepRef(parts: SandboxParts, { target, signal }: RestoreRun): Promise<void> {
  const ref = `${SNAPSHOT_REF_PREFIX}/${target}`;
  const options = { signal, timeoutMs: parts.timeoutMs };
  await storeGit(parts.runDir, parts.root, ['update-ref', ref, target], options);
}

/**
 * Puts back the files the target ignores (never its to delete; see putBackIgnoredFiles) and
 * returns the restored changes without them. Both restore paths end with it.
 */
async function withoutPutBackIgnored(
  parts: SandboxParts,
  { safety, signal }: RestoreRun,
  restoredChanges: ChangedPath[],
): Promise<{ changed: ChangedPath[]; keptIgnored: string[] }> {
  const keptIgnored = await putBackIgnoredFiles({
    root: parts.root,
    env: storeEnv(parts.runDir, parts.root),
    safety,
    changed: restoredChanges,
    signal,
    timeoutMs: parts.timeoutMs,
  });
  parts.paths.invalidateLinkCache();
  const putBack = new Set(keptIgnored);
  const changed = restoredChanges.filter((change) => !putBack.has(change.path));
  return { changed, keptIgnored };
}

function restoreLeftWrongTree(sandboxId: string, run: RestoreRun, tree: string): AgentsError {
  const { target, targetTree, safety } = run;
  return new AgentsError(
    AgentsErrorCode.RollbackFailed,
    `Restoring sandbox "${sandboxId}" to ${target} left tree ${tree} instead of ${targetTree}; restore ${safety} to undo.`,
    { details: { sandboxId, target, safety } },
  );
}
