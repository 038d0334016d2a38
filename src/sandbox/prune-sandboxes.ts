import { readdir, realpath, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { gitTopLevel, realSourceDir, SANDBOXES_FOLDER } from './source-dir.js';
import { lastActivity, lockHolder, readMarker } from './sandbox-marker.js';
import { agentsStateDir, projectStateDir } from './state-dir.js';

/** Options for {@link pruneSandboxes}. */
export interface PruneSandboxesOptions {
  /** A project (repo or folder): prune the run sandboxes made from it in the state folder. */
  source?: string;
  /** A base dir: prune the sandboxes made there (`createSandbox({ baseDir })`). */
  baseDir?: string;
  /** The per-user state folder (default `agentsStateDir()`), for `source`. */
  stateDir?: string;
  /** Sandboxes idle (no snapshot) for longer than this are removed. */
  olderThanMs: number;
  /** Clock, for tests. Default `Date.now()`. */
  now?: number;
  /** Ids never to remove (e.g. sandboxes of runs still active in this process). */
  keep?: readonly string[];
  signal?: AbortSignal;
}

/**
 * Bounds disk use: removes run sandboxes idle for longer than `olderThanMs`, from the state
 * folder of `source` and/or from `baseDir`. Only folders carrying our marker file are touched,
 * never one whose run lock a live process holds, and nothing in the user's repo (a sandbox has
 * no record there). Thread sandboxes (kept for rollback) are removed with `agents sandbox
 * remove`. Returns the ids it removed; failures are gathered into an `AggregateError`.
 */
export async function pruneSandboxes(
  options: PruneSandboxesOptions,
): Promise<{ removed: string[] }> {
  const { signal } = options;
  signal?.throwIfAborted();
  const cutoff = (options.now ?? Date.now()) - options.olderThanMs;
  const keep = new Set(options.keep ?? []);
  const folders: string[] = [];
  if (options.source !== undefined) {
    const real = await realSourceDir(options.source);
    const project = (await gitTopLevel(real, signal)) ?? real;
    folders.push(
      join(
        projectStateDir(project, { stateDir: options.stateDir ?? agentsStateDir() }),
        SANDBOXES_FOLDER,
      ),
    );
  }
  if (options.baseDir !== undefined) folders.push(await realpath(options.baseDir));
  const removed: string[] = [];
  const errors: unknown[] = [];
  for (const folder of folders) {
    let names: string[];
    try {
      names = await readdir(folder);
    } catch {
      continue;
    }
    for (const name of names) {
      signal?.throwIfAborted();
      const container = join(folder, name);
      const runDir = join(container, 'run');
      const marker = await readMarker(runDir);
      if (marker === undefined || marker === 'legacy' || keep.has(marker.id)) continue;
      if ((await lastActivity(runDir, marker)) > cutoff) continue;
      if ((await lockHolder(runDir)) !== undefined) continue;
      try {
        await rm(container, { recursive: true, force: true });
        removed.push(marker.id);
      } catch (error) {
        errors.push(error);
      }
    }
  }
  if (errors.length > 0)
    throw new AggregateError(errors, `Pruning sandboxes failed for ${errors.length} sandbox(es).`);
  return { removed };
}
