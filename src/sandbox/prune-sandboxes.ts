import { readdir, rmdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { AgentsError } from '../errors.js';
import { acquireRunLock } from './sandbox-marker.js';
import { removeTree } from './remove-tree.js';
import {
  listSandboxes,
  type ListSandboxesOptions,
  type SandboxEntry,
} from './sandbox-inventory.js';
import { THREAD_SANDBOX_FOLDER } from './state-dir.js';

/** A folder without a finished record is pruned only once it is this much older than the cutoff. */
const INCOMPLETE_GRACE_MS = 60 * 60 * 1000;

/** Options for {@link pruneSandboxes}. */
export interface PruneSandboxesOptions {
  /** A project (repo or folder): prune the run sandboxes made from it in the state folder. */
  source?: string;
  /** More projects, as `source`. */
  sources?: readonly string[];
  /** A base dir: prune the sandboxes made there (`createSandbox({ baseDir })`). */
  baseDir?: string;
  /** A workspace folder (`.agents`): prune its thread sandboxes, each with its thread record. */
  workspaceRoot?: string;
  /** Every project and workspace of the state folder (`agents sandbox prune --all`). */
  all?: boolean;
  /** The per-user state folder (default `agentsStateDir()`). */
  stateDir?: string;
  /** Sandboxes idle (no snapshot, no run) for longer than this are removed. */
  olderThanMs: number;
  /** Clock, for tests. Default `Date.now()`. */
  now?: number;
  /** Ids never to remove (e.g. sandboxes of runs still active in this process). */
  keep?: readonly string[];
  /** List what would be removed, remove nothing. */
  dryRun?: boolean;
  signal?: AbortSignal;
}

/** What {@link pruneSandboxes} did. */
export interface PruneSandboxesResult {
  /** Sandbox ids removed (or, with `dryRun`, that would be). */
  removed: string[];
  /** The entries removed (or that would be), as `listSandboxes` lists them. */
  entries: SandboxEntry[];
  /** Old entries left because a live process took them between the listing and the removal. */
  busy: SandboxEntry[];
}

/**
 * Whether a listed sandbox is old enough to prune: idle since `cutoff`, held by no live process,
 * not kept, and of this version (a `legacy` worktree sandbox needs `git worktree prune` in the
 * user's repo, so it is only listed). A folder without a finished record (`incomplete`) gets an
 * hour more, since a process may be making it.
 */
export function isPrunable(
  entry: SandboxEntry,
  cutoff: number,
  keep: ReadonlySet<string>,
): boolean {
  return (
    entry.status !== 'legacy' &&
    entry.activePid === undefined &&
    entry.lastUsedAt <= cutoff &&
    // A folder without a finished record may be one a process is making right now.
    (entry.status !== 'incomplete' || entry.lastUsedAt <= cutoff - INCOMPLETE_GRACE_MS) &&
    (entry.sandboxId === undefined || !keep.has(entry.sandboxId))
  );
}

/**
 * Bounds disk use: removes the sandboxes {@link listSandboxes} lists for the same scope that
 * were idle for longer than `olderThanMs`: run sandboxes of `source` and `baseDir`, thread
 * sandboxes of `workspaceRoot` (each thread's whole folder, its `thread.json` included, so no
 * record is left pointing at nothing), or all of them with `all`. It removes what it lists and
 * nothing else: only folders of the state folder that carry our marker or record, never one
 * whose run lock a live process holds (it takes the lock itself before removing, so a run
 * starting meanwhile is refused, not deleted under), and nothing in the user's repo (a sandbox
 * has no record there). Failures are gathered into an `AggregateError`.
 */
export async function pruneSandboxes(
  options: PruneSandboxesOptions,
): Promise<PruneSandboxesResult> {
  const { signal } = options;
  signal?.throwIfAborted();
  const cutoff = (options.now ?? Date.now()) - options.olderThanMs;
  const keep = new Set(options.keep ?? []);
  const scope: ListSandboxesOptions = {
    ...(options.stateDir === undefined ? {} : { stateDir: options.stateDir }),
    ...(options.all === true ? { all: true } : {}),
    sources: [
      ...(options.source === undefined ? [] : [options.source]),
      ...(options.sources ?? []),
    ],
    ...(options.baseDir === undefined ? {} : { baseDirs: [options.baseDir] }),
    ...(options.workspaceRoot === undefined ? {} : { workspaceRoots: [options.workspaceRoot] }),
    ...(signal === undefined ? {} : { signal }),
  };
  const old = (await listSandboxes(scope)).filter((entry) => isPrunable(entry, cutoff, keep));
  if (options.dryRun === true) {
    return { removed: old.flatMap((entry) => entry.sandboxId ?? []), entries: old, busy: [] };
  }
  const entries: SandboxEntry[] = [];
  const busy: SandboxEntry[] = [];
  const errors: unknown[] = [];
  for (const entry of old) {
    signal?.throwIfAborted();
    try {
      if (entry.status === 'ok' && entry.sandboxId !== undefined) {
        const container = entry.kind === 'run' ? entry.dir : join(entry.dir, THREAD_SANDBOX_FOLDER);
        // Held until the folder is gone: a run that starts now is refused (RUN_ACTIVE), not
        // left working in a folder being deleted.
        await acquireRunLock(join(container, 'run'), entry.sandboxId);
      }
    } catch (error) {
      if (AgentsError.isInstance(error) && error.code === 'RUN_ACTIVE') {
        busy.push(entry);
        continue;
      }
      errors.push(error);
      continue;
    }
    try {
      await removeTree(entry.dir);
      entries.push(entry);
      // The actor's folder of a thread goes with its last thread.
      if (entry.kind === 'thread') await removeIfEmpty(dirname(entry.dir));
    } catch (error) {
      errors.push(error);
    }
  }
  if (errors.length > 0)
    throw new AggregateError(errors, `Pruning sandboxes failed for ${errors.length} sandbox(es).`);
  return { removed: entries.flatMap((entry) => entry.sandboxId ?? []), entries, busy };
}

async function removeIfEmpty(dir: string): Promise<void> {
  try {
    if ((await readdir(dir)).length === 0) await rmdir(dir);
  } catch {
    // Gone already, or a thread was added meanwhile: either way nothing to do.
  }
}
