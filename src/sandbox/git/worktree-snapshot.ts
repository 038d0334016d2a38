import { appendFile, copyFile, lstat, mkdir, readFile, rm } from 'node:fs/promises';
import { isAbsolute, join, resolve } from 'node:path';
import { AgentsError, AgentsErrorCode } from '../../errors.js';
import { MAX_WARNING_PATHS, type BasePlan, type SandboxWarning } from '../base-origin.js';
import { runGit, type RunGitResult } from '../git.js';
import { anchoredPattern, formatSize } from '../size-cap.js';
import { writeExcludeFile } from '../sandbox-excludes.js';
import { STORE_DIR, storeEnv, type StoreGitOptions } from './snapshot-store.js';

/** Where the user's repository keeps what a working-tree snapshot reads (never writes). */
interface UserGitPaths {
  index: string;
  infoExclude: string;
  objects: string;
}

async function userGitPaths(repo: string, git: StoreGitOptions): Promise<UserGitPaths> {
  const lines = (
    await userGit(
      repo,
      ['rev-parse', '--git-path', 'index', '--git-path', 'info/exclude', '--git-path', 'objects'],
      git,
      [],
    )
  ).stdout
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => (isAbsolute(line) ? line : resolve(repo, line)));
  const [index, infoExclude, objects] = lines;
  if (index === undefined || infoExclude === undefined || objects === undefined) {
    throw new AgentsError(
      AgentsErrorCode.SandboxFailed,
      `Could not locate the git folder of ${repo} (git rev-parse --git-path gave ${lines.length} of 3 paths).`,
      { details: { source: repo } },
    );
  }
  return { index, infoExclude, objects };
}

/**
 * Files an agents workspace keeps in a project while it runs (checkpoints, audit log, output
 * spills, old sandboxes): the user's state, never project files, so never copied in even when
 * not ignored (a plain-folder copy leaves out the same).
 */
const LOCAL_STATE_PATTERNS = [
  '/.agents/checkpoints.sqlite*',
  '/.agents/audit.jsonl',
  '/.agents/sandboxes/',
  '/.agents/output/',
];

/** A working-tree snapshot: its tree in the private store, and what was left out. */
export interface WorktreeSnapshot {
  tree: string;
  /** The environment that reads the store with the user's objects as alternates. */
  env: Record<string, string>;
  tooLarge: SandboxWarning[];
}

/**
 * The user's working tree as a tree object in the sandbox's private store: tracked files as
 * they are on disk (staged and unstaged edits alike), deletions, and untracked files that are
 * not ignored (the repo's `.gitignore` files, its `info/exclude`, the user's global excludes,
 * the sandbox's own excludes and Git LFS patterns).
 *
 * Nothing of the user's repository is written: git runs with the store as its git dir (its
 * config, hooks off, exact bytes: no filter or end-of-line conversion), the user's work tree
 * as the work tree, a temporary copy of the user's index (for its stat data: unchanged files
 * are not read again) and the user's objects as read-only alternates. New blobs and trees go
 * to the store. With `pack`, every object of the tree is then copied into the store as one
 * pack, so the store depends on nothing the user may prune. Untracked files over the size cap
 * are left out and named in a warning.
 */
export async function snapshotWorktree(options: {
  repo: string;
  runDir: string;
  plan: BasePlan;
  exclude: readonly string[];
  maxFileBytes: number;
  pack: boolean;
  git: StoreGitOptions;
}): Promise<WorktreeSnapshot> {
  const { repo, runDir, git } = options;
  const paths = await userGitPaths(repo, git);
  const work = join(runDir, 'base-work');
  await mkdir(work, { recursive: true });
  try {
    // The sandbox's exclude file, made for the user's tree, plus what only the user's repo
    // knows (its info/exclude) and the workspace's local state.
    const excludeFile = await writeExcludeFile(work, repo, options.exclude, git.signal);
    const infoExclude = await readFile(paths.infoExclude, 'utf8').catch(() => '');
    await appendFile(
      excludeFile,
      ["# The repository's info/exclude:", infoExclude.trimEnd(), ...LOCAL_STATE_PATTERNS, ''].join(
        '\n',
      ),
    );
    const env = {
      ...storeEnv(runDir, repo),
      GIT_INDEX_FILE: join(work, 'index'),
      GIT_ALTERNATE_OBJECT_DIRECTORIES: paths.objects,
    };
    const run = (args: readonly string[], input?: string) =>
      runGit(
        [
          '-c',
          `core.excludesFile=${excludeFile}`,
          '-c',
          'core.splitIndex=false',
          '-c',
          'core.untrackedCache=false',
          ...args,
        ],
        {
          cwd: repo,
          env,
          ...(git.signal === undefined ? {} : { signal: git.signal }),
          ...(git.timeoutMs === undefined ? {} : { timeoutMs: git.timeoutMs }),
          ...(input === undefined ? {} : { input }),
        },
      );
    const commit = options.plan.source?.commit;
    const seedFromCommit = async () => {
      await rm(env.GIT_INDEX_FILE, { force: true });
      if (commit !== undefined) await run(['read-tree', commit]);
    };
    // A copy of the user's index carries its stat data (unchanged files are not re-read) and
    // its staged files. An index git cannot read alone (a split index) is replaced by the
    // commit's tree: slower (every file is hashed), same result.
    let seeded = await copyFile(paths.index, env.GIT_INDEX_FILE).then(
      () => true,
      () => false,
    );
    if (!seeded) await seedFromCommit();
    let untracked: string;
    try {
      untracked = (await run(['ls-files', '-z', '--others', '--exclude-standard'])).stdout;
    } catch (error) {
      if (!seeded) throw error;
      seeded = false;
      await seedFromCommit();
      untracked = (await run(['ls-files', '-z', '--others', '--exclude-standard'])).stdout;
    }
    const tooLarge = await untrackedOverCap(
      repo,
      untracked.split('\0').filter((path) => path !== ''),
      options.maxFileBytes,
    );
    if (tooLarge.length > 0) {
      await appendFile(
        excludeFile,
        [
          '# Untracked files over the size cap:',
          ...tooLarge.map(({ path }) => anchoredPattern(path)),
          '',
        ].join('\n'),
      );
    }
    await run(['add', '-A']);
    const tree = (await run(['write-tree'])).stdout.trim();
    if (options.pack) {
      const objects = (await run(['rev-list', '--objects', tree])).stdout;
      // --window=0: no delta search (as importTree), much faster for a slightly bigger pack.
      await run(
        ['pack-objects', '-q', '--window=0', join(runDir, STORE_DIR, 'objects', 'pack', 'pack')],
        objects,
      );
    }
    return {
      tree,
      env,
      tooLarge:
        tooLarge.length === 0
          ? []
          : [
              {
                code: 'untracked-files-too-large',
                message:
                  `${tooLarge.length} untracked file(s) of ${repo} over the snapshot size cap were not copied into the sandbox: ` +
                  tooLarge
                    .slice(0, MAX_WARNING_PATHS)
                    .map(({ path, size }) => `${path} (${formatSize(size)})`)
                    .join(', ') +
                  '. Raise sandbox.maxFileBytes (0: no cap) to include them.',
                source: repo,
                paths: tooLarge.slice(0, MAX_WARNING_PATHS).map(({ path }) => path),
                count: tooLarge.length,
              },
            ],
    };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

async function untrackedOverCap(
  repo: string,
  paths: readonly string[],
  maxFileBytes: number,
): Promise<{ path: string; size: number }[]> {
  const cap = maxFileBytes === 0 ? Infinity : maxFileBytes;
  const over: { path: string; size: number }[] = [];
  for (const path of paths) {
    const stats = await lstat(join(repo, path)).catch(() => undefined);
    if (stats?.isFile() === true && stats.size > cap) over.push({ path, size: stats.size });
  }
  return over;
}

/** Paths where `taken` differs from the user's `commit` (its tree is read through the alternates). */
export async function changedPaths(
  options: { repo: string; git: StoreGitOptions },
  commit: string,
  taken: WorktreeSnapshot,
): Promise<string[]> {
  const output = (
    await runGit(['diff-tree', '-r', '-z', '--name-only', '--no-renames', commit, taken.tree], {
      cwd: options.repo,
      env: taken.env,
      ...(options.git.signal === undefined ? {} : { signal: options.git.signal }),
      ...(options.git.timeoutMs === undefined ? {} : { timeoutMs: options.git.timeoutMs }),
    })
  ).stdout;
  return output.split('\0').filter((path) => path !== '');
}

/** Read-only git in the user's repository (their config is read, nothing is written). */
export function userGit(
  repo: string,
  args: readonly string[],
  git: StoreGitOptions,
  okExitCodes: number[],
): Promise<RunGitResult> {
  return runGit(args, {
    cwd: repo,
    ...(git.signal === undefined ? {} : { signal: git.signal }),
    ...(git.timeoutMs === undefined ? {} : { timeoutMs: git.timeoutMs }),
    okExitCodes,
  });
}
