import { AgentsError, AgentsErrorCode } from '../../errors.js';
import {
  MAX_WARNING_PATHS,
  type BasePlan,
  type BaseRequest,
  type SandboxBaseOrigin,
  type SandboxWarning,
} from '../base-origin.js';
import { runGit } from '../git.js';
import { gitEnv } from '../git-env.js';
import { importTree, NO_USER_CONFIG, storeGit, type StoreGitOptions } from './snapshot-store.js';
import { changedPaths, snapshotWorktree, userGit } from './worktree-snapshot.js';

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
