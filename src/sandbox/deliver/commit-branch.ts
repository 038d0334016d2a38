import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { AgentsError, AgentsErrorCode } from '../../errors.js';
import { gitEnv, runGit, SNAPSHOT_IDENTITY } from '../git.js';
import { storeEnv } from '../snapshot-store.js';
import { snapshotRange } from './diff.js';
import {
  rawSnapshotDiff,
  storeRun,
  type DeliveryGitOptions,
  type DeliverySandbox,
} from './store-access.js';
import { ABSENT } from './user-files.js';
import { screenChanges, type DeliveryScreenOptions, type SkippedChange } from './screen.js';
import type { RawTreeChange } from '../raw-tree-diff.js';

/** Options of {@link commitSandbox}. */
export interface CommitSandboxOptions extends DeliveryGitOptions, DeliveryScreenOptions {
  /** The new branch (must not exist yet). */
  branch: string;
  /** Commit message; default names the sandbox. */
  message?: string;
  /** Snapshot range and paths, as for `applySandbox`. */
  from?: string;
  to?: string;
  paths?: readonly string[];
}

/** What {@link commitSandbox} made. */
export interface CommitSandboxResult {
  branch: string;
  /** `refs/heads/<branch>`. */
  ref: string;
  commit: string;
  /**
   * The user's commit the sandbox was made from: the new commit's parent, or its grandparent
   * when the base held uncommitted changes (see `baseCommit`).
   */
  parent: string;
  /**
   * For a sandbox made from a working tree with uncommitted changes: the commit holding them
   * (on `parent`), which the work's commit follows, so the branch shows the two apart.
   */
  baseCommit?: string;
  tree: string;
  /** Paths left out on purpose (configuration, symlinks out, nested repositories). */
  skipped: SkippedChange[];
  /** Configuration paths committed because `includeConfig` was given. */
  config: string[];
  /** Symlinks out committed because `allowSymlinksOut` was given. */
  warnings: string[];
}

/**
 * Puts the sandbox's work on a new branch of the user's repository: one commit whose parent is
 * the commit the sandbox was made from, holding that commit's files plus the sandbox's changes
 * (all of them, or those of `paths` / the `from`..`to` range). A sandbox made from a working
 * tree with uncommitted changes gets two: those changes first, then the work. The only delivery function that
 * writes into the user's repo, and only there: the new objects (one pack) and the new branch.
 * HEAD, the index, the working tree and every other ref are left alone. Throws
 * `INVALID_ARGUMENTS` for a bad or existing branch name, `SANDBOX_FAILED` for a sandbox made
 * from a plain folder (no repository to commit to).
 */
export async function commitSandbox(
  sandbox: DeliverySandbox,
  options: CommitSandboxOptions,
): Promise<CommitSandboxResult> {
  const repo = sandbox.source;
  const parent = sandbox.sourceCommit;
  if (sandbox.kind !== 'repository' || parent === undefined) {
    throw new AgentsError(
      AgentsErrorCode.SandboxFailed,
      `Sandbox "${sandbox.id}" was made from a plain folder or a repository with no commits (${repo}), so there is no commit to branch from; use apply to take its work instead.`,
      { details: { sandboxId: sandbox.id } },
    );
  }
  const git = {
    cwd: repo,
    signal: options.signal,
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
  };
  const checked = await runGit(['check-ref-format', '--branch', options.branch], {
    ...git,
    okExitCodes: [1, 128],
  });
  if (checked.exitCode !== 0 || options.branch.startsWith('-')) {
    throw new AgentsError(
      AgentsErrorCode.InvalidArguments,
      `"${options.branch}" is not a valid branch name; pick another (see git check-ref-format).`,
      { details: { branch: options.branch } },
    );
  }
  const ref = `refs/heads/${checked.stdout.trim()}`;
  const existing = await runGit(['rev-parse', '--verify', '--quiet', ref], {
    ...git,
    okExitCodes: [1],
  });
  if (existing.exitCode === 0) {
    throw new AgentsError(
      AgentsErrorCode.InvalidArguments,
      `Branch "${options.branch}" already exists in ${repo}; pick a new name (commit never moves an existing branch).`,
      { details: { branch: options.branch } },
    );
  }
  const { from, to } = await snapshotRange(sandbox, options);
  const baseTree = (
    await storeRun(sandbox, ['rev-parse', `${sandbox.base}^{tree}`], options)
  ).stdout.trim();
  const raw = from === to ? [] : await rawSnapshotDiff(sandbox, from, to, options.paths, options);
  const screened = await screenChanges(sandbox, raw, options);
  const tree = await buildTree(sandbox, {
    ...options,
    from,
    to,
    baseTree,
    kept: screened.kept,
    whole: screened.kept.length === raw.length,
  });
  // A base taken from the working tree may hold uncommitted changes: they get a commit of
  // their own, so the branch shows the user's edits and the run's work apart.
  const parentTree = (await runGit(['rev-parse', `${parent}^{tree}`], git)).stdout.trim();
  const dirtyBase = parentTree !== baseTree;
  // Copy the objects the user's repo lacks (reachable from the new trees, not from the parent
  // commit's tree) as one pack straight into its object store. The user's objects are read
  // as alternates, to leave out what they already have.
  const objectsDir = await userObjectsDir(repo, git);
  const withUserObjects = {
    cwd: sandbox.root,
    env: {
      ...storeEnv(sandbox.runDir, sandbox.root),
      GIT_ALTERNATE_OBJECT_DIRECTORIES: objectsDir,
    },
    ...(options.signal === undefined ? {} : { signal: options.signal }),
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
  };
  const objects = (
    await runGit(
      ['rev-list', '--objects', tree, ...(dirtyBase ? [baseTree] : []), '--not', parentTree],
      withUserObjects,
    )
  ).stdout;
  if (objects.trim() !== '') {
    await runGit(['pack-objects', '-q', '--window=0', join(objectsDir, 'pack', 'pack')], {
      ...withUserObjects,
      input: objects,
    });
  }
  const baseCommit = dirtyBase
    ? await commitTree(
        repo,
        baseTree,
        parent,
        `Uncommitted changes sandbox ${sandbox.id} started from\n\nThe working tree of ${repo} when the sandbox was made, on top of ${parent}.`,
        git,
      )
    : undefined;
  const message =
    options.message ?? `Work of sandbox ${sandbox.id}\n\nMade by agents from snapshot ${to}.`;
  const commit = await commitTree(repo, tree, baseCommit ?? parent, message, git);
  // An empty old value: create only, never overwrite a branch made meanwhile.
  await runGit(['update-ref', '-m', 'agents sandbox commit', ref, commit, ''], git);
  return {
    branch: options.branch,
    ref,
    commit,
    parent,
    ...(baseCommit === undefined ? {} : { baseCommit }),
    tree,
    skipped: screened.skipped,
    config: screened.config,
    warnings: screened.warnings,
  };
}

/** The tree to commit: the whole `to` snapshot, or the base with only the selected changes. */
async function buildTree(
  sandbox: DeliverySandbox,
  options: DeliveryGitOptions & {
    from: string;
    to: string;
    baseTree: string;
    paths?: readonly string[];
    /** The changes to commit; `whole`: all of from..to (nothing screened out). */
    kept: readonly RawTreeChange[];
    whole: boolean;
  },
): Promise<string> {
  const whole =
    options.whole &&
    (options.paths === undefined || options.paths.length === 0) &&
    options.from === sandbox.base;
  if (whole)
    return (await storeRun(sandbox, ['rev-parse', `${options.to}^{tree}`], options)).stdout.trim();
  const raw = options.kept;
  // A temp index over the store, so neither the sandbox's private index nor the user's moves.
  const folder = await mkdtemp(join(tmpdir(), 'agents-commit-'));
  try {
    const env = {
      ...storeEnv(sandbox.runDir, sandbox.root),
      GIT_INDEX_FILE: join(folder, 'index'),
    };
    const run = (args: string[], input?: string) =>
      runGit(args, {
        cwd: sandbox.root,
        env,
        ...(options.signal === undefined ? {} : { signal: options.signal }),
        ...(input === undefined ? {} : { input }),
      });
    await run(['read-tree', options.baseTree]);
    const lines = raw.map((change) =>
      change.dstMode === ABSENT
        ? `0 ${'0'.repeat(change.dstSha.length)}\t${change.path}`
        : `${change.dstMode} ${change.dstSha}\t${change.path}`,
    );
    if (lines.length > 0)
      await run(['update-index', '-z', '--index-info'], lines.join('\0') + '\0');
    return (await run(['write-tree'])).stdout.trim();
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

async function userObjectsDir(
  repo: string,
  git: { cwd: string; signal?: AbortSignal | undefined },
): Promise<string> {
  const path = (await runGit(['rev-parse', '--git-path', 'objects'], git)).stdout.trim();
  return isAbsolute(path) ? path : resolve(repo, path);
}

/**
 * `commit-tree` in the user's repo with their identity (their config is read, as their own
 * commits would); when they have none configured, the sandbox's fixed identity.
 */
async function commitTree(
  repo: string,
  tree: string,
  parent: string,
  message: string,
  git: { cwd: string; signal?: AbortSignal | undefined },
): Promise<string> {
  const withoutIdentity = gitEnv();
  for (const key of Object.keys(SNAPSHOT_IDENTITY)) delete withoutIdentity[key];
  const ident = await runGit(['var', 'GIT_AUTHOR_IDENT'], {
    ...git,
    env: withoutIdentity,
    okExitCodes: [128],
  });
  const env = ident.exitCode === 0 ? withoutIdentity : gitEnv();
  return (
    await runGit(['commit-tree', tree, '-p', parent, '-F', '-'], { ...git, env, input: message })
  ).stdout.trim();
}
