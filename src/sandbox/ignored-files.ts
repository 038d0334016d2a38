import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChangedPath } from '../core/change-record.js';
import { runGit } from './git.js';

/** Options of {@link putBackIgnoredFiles}. */
export interface PutBackIgnoredOptions {
  /** The sandbox working tree (absolute). */
  root: string;
  /** Environment of git commands on the snapshot store (its git dir and the tree). */
  env: Record<string, string>;
  /** The safety snapshot taken just before the restore: holds every file the restore deleted. */
  safety: string;
  /** What the restore changed (from the safety snapshot to the target). */
  changed: readonly ChangedPath[];
  signal?: AbortSignal | undefined;
  timeoutMs?: number | undefined;
}

/**
 * Puts back the files a restore deleted although the restored tree ignores them, and returns
 * their paths (sorted).
 *
 * A restore (`read-tree -u --reset`) removes every file of its safety snapshot that the target
 * lacks. When the tree being left had no ignore rule for a file that the target ignores (a rule
 * added or dropped between the two, as when undoing a rollback past the run's `.gitignore`), the
 * safety snapshot captured that file and the restore deleted it, although the target never
 * tracked it and a restore leaves ignored files alone. The file is written back from the safety
 * snapshot with `checkout-index` on a throw-away index, which keeps modes, symlinks and bytes and
 * refuses to write through a symlinked folder.
 */
export async function putBackIgnoredFiles(options: PutBackIgnoredOptions): Promise<string[]> {
  const deleted = options.changed.filter((change) => change.status === 'D').map((c) => c.path);
  if (deleted.length === 0) return [];
  const run = (args: string[], input: string, env = options.env, okExitCodes?: number[]) =>
    runGit(args, {
      cwd: options.root,
      env,
      input,
      ...(options.signal === undefined ? {} : { signal: options.signal }),
      ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
      ...(okExitCodes === undefined ? {} : { okExitCodes }),
    });
  // --no-index: judged by the ignore rules alone. Exit 1: none of them is ignored.
  const checked = await run(
    ['check-ignore', '--no-index', '-z', '--stdin'],
    `${deleted.join('\0')}\0`,
    options.env,
    [1],
  );
  const ignored = checked.stdout.split('\0').filter((path) => path !== '');
  if (ignored.length === 0) return [];
  const scratch = await mkdtemp(join(tmpdir(), 'agents-putback-'));
  try {
    const env = { ...options.env, GIT_INDEX_FILE: join(scratch, 'index') };
    await run(['read-tree', options.safety], '', env);
    await run(['checkout-index', '-f', '-z', '--stdin'], `${ignored.join('\0')}\0`, env);
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
  return ignored.sort();
}
