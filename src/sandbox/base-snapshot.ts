import { appendFile, copyFile, lstat, mkdir, readFile, rm } from 'node:fs/promises';
import { isAbsolute, join, resolve } from 'node:path';
import { AgentsError, AgentsErrorCode } from '../errors.js';
import { gitEnv, runGit, type RunGitResult } from './git.js';
import { anchoredPattern, formatSize } from './large-files.js';
import { writeExcludeFile } from './sandbox-excludes.js';
import {
  importTree,
  NO_USER_CONFIG,
  STORE_DIR,
  storeEnv,
  storeGit,
  type StoreGitOptions,
} from './snapshot-store.js';
import type { ToolRepoSource } from './tool-repo.js';

/**
 * What a sandbox's files are made from: `worktree` (the user's files as they are now: tracked
 * and untracked, not ignored, staged and unstaged edits included), `head` (the last commit), or
 * any revision git understands (a branch, tag or sha; `refs/heads/worktree` for a branch that
 * happens to be called `worktree`).
 */
export type SandboxFrom = 'worktree' | 'head' | (string & {});

/** What a sandbox's base snapshot was made from, as recorded in its marker. */
export interface SandboxBaseOrigin {
  /** `folder`: a copy of a plain folder (not a git repository). */
  from: 'worktree' | 'head' | 'revision' | 'folder';
  /** The revision as given (`revision` only). */
  revision?: string;
  /** The user's commit: the one checked out (`head`, `revision`), or HEAD when the working tree was taken (absent in a repository with no commits). */
  commit?: string;
  /** `worktree`: how many paths of the base differ from `commit` (the uncommitted changes it holds). */
  uncommitted?: number;
}

/** The origin recorded in a sandbox's marker (older markers: read from `mode` and `revision`). */
export function originOf(marker: {
  mode: 'repository' | 'folder';
  from?: SandboxBaseOrigin['from'];
  revision?: string;
  sourceCommit?: string;
  uncommitted?: number;
}): SandboxBaseOrigin {
  const from =
    marker.from ??
    (marker.mode === 'folder'
      ? 'folder'
      : marker.revision === undefined || marker.revision === 'HEAD'
        ? 'head'
        : 'revision');
  return {
    from,
    ...(from === 'revision' && marker.revision !== undefined ? { revision: marker.revision } : {}),
    ...(marker.sourceCommit === undefined ? {} : { commit: marker.sourceCommit }),
    ...(marker.uncommitted === undefined ? {} : { uncommitted: marker.uncommitted }),
  };
}

/** Something about a sandbox's base worth telling the user once, as data and as a sentence. */
export interface SandboxWarning {
  /**
   * `uncommitted-changes-left-out`: made from a commit while the user's tree has uncommitted
   * changes, which the sandbox does not see. `untracked-files-too-large`: untracked files over
   * the snapshot size cap were not copied in.
   */
  code: 'uncommitted-changes-left-out' | 'untracked-files-too-large';
  message: string;
  /** The user's repository. */
  source: string;
  /** The paths concerned (at most {@link MAX_WARNING_PATHS}). */
  paths: string[];
  /** How many paths in all. */
  count: number;
}

/** Paths named in one warning; the rest are counted. */
const MAX_WARNING_PATHS = 20;

/** A parsed `from`: which kind of base to make. */
export type BaseRequest =
  { kind: 'worktree' } | { kind: 'head' } | { kind: 'revision'; revision: string };

/**
 * Reads `from` (or the older `revision` option, which names a revision: `HEAD` means `head`).
 * Default `worktree`. Throws `CONFIG_INVALID` for an empty value or one git would read as an
 * option.
 */
export function parseSandboxFrom(from: string | undefined, revision?: string): BaseRequest {
  const given = from ?? revision;
  if (given === undefined) return { kind: 'worktree' };
  if (given.trim() === '' || given.startsWith('-') || /[\0\r\n]/.test(given)) {
    throw new AgentsError(
      AgentsErrorCode.ConfigInvalid,
      `Sandbox "from" ${JSON.stringify(given)} is not valid: use worktree, head, or a branch, tag or commit of the repository.`,
      { details: { from: given } },
    );
  }
  if (from === 'worktree') return { kind: 'worktree' };
  if (given === 'head' || given === 'HEAD') return { kind: 'head' };
  return { kind: 'revision', revision: given };
}

/** The user's commit a base starts from (and HEAD's branch, for the tools' repository). */
export interface BasePlan {
  request: BaseRequest;
  /** Undefined only for `worktree` in a repository with no commits yet. */
  source: ToolRepoSource | undefined;
}

/**
 * Resolves the user's commit for `request` in `repo`, before anything is made on disk, so a
 * bad revision leaves nothing behind. Throws `REVISION_NOT_FOUND` naming the revision (or
 * saying the repository has no commits, for `head`).
 */
export async function resolveBasePlan(
  repo: string,
  request: BaseRequest,
  options: StoreGitOptions,
): Promise<BasePlan> {
  const revision = request.kind === 'revision' ? request.revision : 'HEAD';
  const resolved = await userGit(
    repo,
    ['rev-parse', '--verify', '--quiet', '--end-of-options', `${revision}^{commit}`],
    options,
    [1, 128],
  );
  const commit = resolved.stdout.trim();
  if (resolved.exitCode !== 0 || commit === '') {
    if (request.kind === 'worktree') return { request, source: undefined };
    throw new AgentsError(
      AgentsErrorCode.RevisionNotFound,
      request.kind === 'head'
        ? `The repository ${repo} has no commits yet, so a sandbox cannot start from head; use from: worktree (the default) to start from its files.`
        : `Revision "${revision}" does not name a commit in ${repo}; pass an existing branch, tag or sha, or from: worktree / head.`,
      { details: { revision, source: repo } },
    );
  }
  if (request.kind === 'revision') return { request, source: { repo, commit } };
  const branch = await userGit(repo, ['symbolic-ref', '-q', 'HEAD'], options, [1]);
  const name = branch.stdout.trim();
  return {
    request,
    source:
      branch.exitCode === 0 && name.startsWith('refs/heads/')
        ? { repo, commit, branch: name }
        : { repo, commit },
  };
}

/** What {@link makeRepositoryBase} made. */
export interface RepositoryBase {
  /** The base snapshot commit (in the sandbox's private store). */
  base: string;
  origin: SandboxBaseOrigin;
  warnings: SandboxWarning[];
}

/**
 * Makes the base snapshot of a sandbox of a git repository in its private store (not checked
 * out yet): the user's working tree for `worktree` (see {@link snapshotWorktree}), else the
 * planned commit's tree. A `head` base whose working tree differs says so in `warnings`.
 */
export async function makeRepositoryBase(options: {
  id: string;
  repo: string;
  runDir: string;
  /** The sandbox tree (checked out later); the store's commands need a work tree. */
  root: string;
  plan: BasePlan;
  exclude: readonly string[];
  maxFileBytes: number;
  git: StoreGitOptions;
}): Promise<RepositoryBase> {
  const { id, repo, runDir, root, plan, git } = options;
  const commit = plan.source?.commit;
  const commitBase = async (tree: string, message: string): Promise<string> =>
    (await storeGit(runDir, root, ['commit-tree', tree, '-m', message], git)).stdout.trim();
  if (plan.request.kind === 'worktree') {
    const taken = await snapshotWorktree({ ...options, pack: true });
    const changed = commit === undefined ? undefined : await changedPaths(options, commit, taken);
    const uncommitted = changed?.length ?? 0;
    const base = await commitBase(
      taken.tree,
      `sandbox ${id}: base, working tree of ${repo}` +
        (commit === undefined
          ? ' (no commits yet)'
          : ` (commit ${commit}, ${uncommitted} uncommitted path(s))`),
    );
    return {
      base,
      origin: { from: 'worktree', ...(commit === undefined ? {} : { commit }), uncommitted },
      warnings: taken.tooLarge,
    };
  }
  const source = plan.source!;
  const tree = (
    await userGit(repo, ['rev-parse', `${source.commit}^{tree}`], git, [])
  ).stdout.trim();
  await importTree(repo, runDir, tree, git);
  const base = await commitBase(tree, `sandbox ${id}: base, commit ${source.commit}`);
  const warnings: SandboxWarning[] = [];
  if (plan.request.kind === 'head') {
    // What the sandbox will not see: the working tree against the commit, worked out in the
    // private store (its objects stay there; the user's repo is not written).
    const taken = await snapshotWorktree({ ...options, pack: false });
    const left = await changedPaths(options, source.commit, taken);
    if (left.length > 0) warnings.push(uncommittedWarning(repo, left));
  }
  return {
    base,
    origin:
      plan.request.kind === 'head'
        ? { from: 'head', commit: source.commit }
        : { from: 'revision', revision: plan.request.revision, commit: source.commit },
    warnings,
  };
}

function uncommittedWarning(repo: string, paths: string[]): SandboxWarning {
  const named = paths.slice(0, MAX_WARNING_PATHS);
  const more = paths.length > named.length ? `, and ${paths.length - named.length} more` : '';
  return {
    code: 'uncommitted-changes-left-out',
    message:
      `The sandbox starts from the last commit (from: head), but ${repo} has uncommitted changes ` +
      `the run will not see (${paths.length} path(s): ${named.join(', ')}${more}). ` +
      `Use from: worktree (the default) to start from your files as they are, or commit first.`,
    source: repo,
    paths: named,
    count: paths.length,
  };
}

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
interface WorktreeSnapshot {
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
async function changedPaths(
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

/**
 * For a sandbox made from a working tree with uncommitted changes: the tools' repository (its
 * HEAD is the user's commit) gets the commit's files as its index, so `git status` and `git
 * diff` there show the user's uncommitted changes as changes, as they do in the user's tree.
 */
export async function indexAtCommit(
  root: string,
  commit: string,
  git: StoreGitOptions,
): Promise<void> {
  const common = {
    cwd: root,
    env: gitEnv({ ...NO_USER_CONFIG }),
    ...(git.signal === undefined ? {} : { signal: git.signal }),
    ...(git.timeoutMs === undefined ? {} : { timeoutMs: git.timeoutMs }),
  };
  await runGit(['read-tree', commit], common);
  // Exit 1: some files differ from the commit (the point); the stat data is filled in anyway.
  await runGit(['update-index', '-q', '--refresh'], { ...common, okExitCodes: [1] });
}

/** Read-only git in the user's repository (their config is read, nothing is written). */
function userGit(
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
