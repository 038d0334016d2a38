import { appendFile, lstat, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AgentsError, AgentsErrorCode } from '../../errors.js';
import type { ChangedPath } from '../../core/change-record.js';
import { runGit, type RunGitResult } from '../git.js';
import { gitEnv } from '../git-env.js';
import type { UnrecordablePaths } from '../unrecordable-paths.js';
import { removeStaleLock } from '../stale-lock.js';
import type { IndexGit } from './index-git.js';

/**
 * The snapshot store: a git dir of the sandbox's own, in its run dir (`<container>/run/git`),
 * with a private index (`run/index`) over the sandbox tree. It is not the `.git` inside the
 * tree, so whatever git commands a tool runs there (commit, reset, branch -D, stash, gc, init of
 * a nested repo, even `rm -rf .git`) never reach the snapshots; git always skips `.git` entries
 * when it walks the tree. The store holds every object it needs (the base tree is copied in at
 * creation), so nothing the user does in their repo (rewriting history, `gc --prune`) can break
 * it either.
 */
export const STORE_DIR = 'git';
/** The private index, next to the store. */
export const INDEX_FILE = 'index';
/** Snapshots are kept reachable under `refs/snapshots/<sha>` (by sha, so forks never overwrite). */
export const SNAPSHOT_REF_PREFIX = 'refs/snapshots';

/** Settings written into the store's own config; global and system config are never read. */
const STORE_CONFIG = `[core]
\tautocrlf = false
\tsafecrlf = false
\tfsmonitor = false
\thooksPath = /dev/null
\tattributesFile = /dev/null
\tquotePath = false
[gc]
\tauto = 0
`;

/**
 * Highest-precedence attributes: no end-of-line conversion, filter, ident or re-encoding, so a
 * snapshot holds the exact bytes of the tree and a restore writes them back, whatever a
 * `.gitattributes` (the tool's to write) says.
 */
const STORE_ATTRIBUTES = '* -text -filter -ident -working-tree-encoding\n';

/** The environment of every git command on the store: its git dir, the tree, the private index. */
export function storeEnv(runDir: string, root: string): Record<string, string> {
  return gitEnv({
    GIT_DIR: join(runDir, STORE_DIR),
    GIT_WORK_TREE: root,
    GIT_INDEX_FILE: join(runDir, INDEX_FILE),
    ...NO_USER_CONFIG,
  });
}

/**
 * Keeps the user's global and system config out of our git commands: a `core.autocrlf`, a
 * `core.fsmonitor`, a filter or `core.splitIndex` there would change what a snapshot holds or
 * run programs inside our `add -A`.
 */
export const NO_USER_CONFIG = {
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_ATTR_NOSYSTEM: '1',
} as const;

/** Options shared by the store's git commands. */
export interface StoreGitOptions {
  signal?: AbortSignal | undefined;
  timeoutMs?: number | undefined;
  /** Told of each fifo the git was let through (see host-git-watch.ts). */
  onFifo?: ((path: string) => void) | undefined;
}

/**
 * Runs git on a sandbox's store (cwd: the tree, so pathspecs are relative to it). A lock file
 * in the run dir that git finds already there and that no process holds open (a git of an
 * earlier process killed mid-command) is removed and the command run once more: only the host
 * writes in the run dir, so nothing else can have made it (issue 35, item 6).
 */
export async function storeGit(
  runDir: string,
  root: string,
  args: readonly string[],
  options: StoreGitOptions & { input?: string; okExitCodes?: number[] } = {},
): Promise<RunGitResult> {
  const run = () =>
    runGit(args, {
      cwd: root,
      env: storeEnv(runDir, root),
      signal: options.signal,
      ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
      ...(options.input === undefined ? {} : { input: options.input }),
      ...(options.okExitCodes === undefined ? {} : { okExitCodes: options.okExitCodes }),
      ...(options.onFifo === undefined ? {} : { onFifo: options.onFifo }),
    });
  try {
    return await run();
  } catch (error) {
    if (!(await removeStaleLock(runDir, error))) throw error;
    return run();
  }
}

/** {@link storeGit} as an {@link IndexGit}: what the size-cap guard runs on the private index. */
export function storeIndexGit(runDir: string, root: string, options: StoreGitOptions): IndexGit {
  return async (args, input) =>
    (await storeGit(runDir, root, args, { ...options, ...(input === undefined ? {} : { input }) }))
      .stdout;
}

/** Makes the empty store in `runDir` (bare: its work tree comes from `GIT_WORK_TREE`). */
export async function initStore(runDir: string, options: StoreGitOptions): Promise<void> {
  const gitDir = join(runDir, STORE_DIR);
  await runGit(['init', '--bare', '-q', '--template=', gitDir], {
    cwd: runDir,
    env: gitEnv({ ...NO_USER_CONFIG }),
    signal: options.signal,
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
  });
  await appendFile(join(gitDir, 'config'), STORE_CONFIG);
  await mkdir(join(gitDir, 'info'), { recursive: true });
  await writeFile(join(gitDir, 'info', 'attributes'), STORE_ATTRIBUTES);
}

/**
 * Copies the objects of one tree (no history) from the user's repo into the store, as one pack
 * written straight into `objects/pack/`. Read-only for the user's repo: `rev-list` and
 * `pack-objects` to a path outside it write nothing there. This is the answer to the prune
 * hazard of sharing objects (alternates): the store depends on nothing the user may delete.
 * Costs about 0.1 s for 10,000 small files (see bench/sandbox.ts).
 */
export async function importTree(
  sourceRepo: string,
  runDir: string,
  tree: string,
  options: StoreGitOptions,
): Promise<void> {
  const common = {
    cwd: sourceRepo,
    signal: options.signal,
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
  };
  const objects = (await runGit(['rev-list', '--objects', tree], common)).stdout;
  // --window=0: no delta search; the pack is a little bigger and made several times faster.
  await runGit(
    ['pack-objects', '-q', '--window=0', join(runDir, STORE_DIR, 'objects', 'pack', 'pack')],
    { ...common, input: objects },
  );
}

/** Largest number of `add -A` retries while learning refused paths (git names one per run). */
const MAX_ADD_ATTEMPTS = 64;

/**
 * `add -A` of the whole tree into the private index, with the private exclude file. Paths git
 * refuses to record (see {@link UnrecordablePaths}) are learnt from its errors and left out, so
 * one odd name never stops every later snapshot.
 *
 * `gitlinks` are the nested repositories the index holds (gitlinks). git runs `git status`
 * inside a gitlink of the index that has a `.git` (to see whether it is dirty), and a nested
 * repo is the tool's: its `.git/config` can name an fsmonitor, a filter driver or any program,
 * and its `.git` can be a file pointing at the user's own repository. So during `add -A` no
 * gitlink of the index is one git looks into: a gitlink with a `.git` (or no folder at all) is
 * dropped from the index first, and `add -A` records it again from its HEAD alone, as it does
 * any new nested repo; one whose folder has no `.git` (an uninitialised submodule) is held
 * with `skip-worktree` for the command, so a `.git` made meanwhile by a process still running
 * in the sandbox is never entered either.
 */
export async function addAll(
  runDir: string,
  root: string,
  excludeFile: string,
  unrecordable: UnrecordablePaths,
  options: StoreGitOptions,
  gitlinks: readonly string[] = [],
): Promise<void> {
  await unrecordable.forgetMissing();
  const { drop, hold } = await sortGitlinks(root, gitlinks);
  const update = (flag: string, paths: readonly string[]) =>
    storeGit(runDir, root, ['update-index', '-z', flag, '--stdin'], {
      ...options,
      input: paths.map((path) => `${path}\0`).join(''),
    });
  if (drop.length > 0) await update('--force-remove', drop);
  if (hold.length > 0) await update('--skip-worktree', hold);
  try {
    await addAllOnce(runDir, root, excludeFile, unrecordable, options);
  } finally {
    if (hold.length > 0) await update('--no-skip-worktree', hold);
  }
}

/** Splits gitlinks into those to drop before `add -A` and those to hold (see {@link addAll}). */
async function sortGitlinks(
  root: string,
  gitlinks: readonly string[],
): Promise<{ drop: string[]; hold: string[] }> {
  const drop: string[] = [];
  const hold: string[] = [];
  await Promise.all(
    gitlinks.map(async (path) => {
      const folder = join(root, ...path.split('/'));
      const dotGit = await lstat(join(folder, '.git')).then(
        () => true,
        () => false,
      );
      const folderThere =
        dotGit ||
        (await lstat(folder).then(
          (stats) => stats.isDirectory(),
          () => false,
        ));
      (dotGit || !folderThere ? drop : hold).push(path);
    }),
  );
  return { drop, hold };
}

async function addAllOnce(
  runDir: string,
  root: string,
  excludeFile: string,
  unrecordable: UnrecordablePaths,
  options: StoreGitOptions,
): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await storeGit(
        runDir,
        root,
        ['-c', `core.excludesFile=${excludeFile}`, 'add', '-A', ...unrecordable.pathspec()],
        {
          ...options,
          onFifo: (path) => {
            unrecordable.noteSpecialFile(path);
            options.onFifo?.(path);
          },
        },
      );
      return;
    } catch (error) {
      const stderr = AgentsError.isInstance(error) ? error.details['stderr'] : undefined;
      if (attempt >= MAX_ADD_ATTEMPTS || typeof stderr !== 'string' || !unrecordable.learn(stderr))
        throw error;
    }
  }
}

/** Mode of a gitlink (a nested repository or submodule) in an index or tree. */
export const GITLINK_MODE = '160000';

/**
 * The gitlinks of the private index, from `ls-files -s -z` (one pass over the index): for when
 * the caller's own record of them may be stale (a snapshot that failed half-way).
 */
export async function indexGitlinks(
  runDir: string,
  root: string,
  options: StoreGitOptions,
): Promise<string[]> {
  const { stdout } = await storeGit(runDir, root, ['ls-files', '-s', '-z'], options);
  const paths: string[] = [];
  for (const record of stdout.split('\0')) {
    if (!record.startsWith(`${GITLINK_MODE} `)) continue;
    const tab = record.indexOf('\t');
    if (tab > 0) paths.push(record.slice(tab + 1));
  }
  return paths;
}

/** The paths that differ between two snapshots (commits or trees) of the store. */
export async function diffSnapshots(
  runDir: string,
  root: string,
  from: string,
  to: string,
  options: StoreGitOptions,
): Promise<ChangedPath[]> {
  if (from === to) return [];
  const args = ['diff-tree', '-r', '-z', '--name-status', '--no-renames', from, to];
  return parseNameStatus((await storeGit(runDir, root, args, options)).stdout);
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

/** Throws `CHECKPOINT_NOT_FOUND` for anything that is not a (possibly short) hex sha. */
export function assertSha(sha: string): void {
  if (!/^[0-9a-f]{4,64}$/.test(sha)) {
    throw new AgentsError(
      AgentsErrorCode.CheckpointNotFound,
      `"${sha}" is not a snapshot sha (expected hex digits).`,
      { details: { sha } },
    );
  }
}
