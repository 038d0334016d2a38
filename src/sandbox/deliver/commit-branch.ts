import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentsError, AgentsErrorCode } from '../../errors.js';
import { runGit } from '../git.js';
import { snapshotRange } from './diff.js';
import { commitTree, replay, resolveOnto, treeChanges, userObjectsDir } from './user-repo.js';
import {
  rawSnapshotDiff,
  storeGitAccess,
  storeRun,
  type DeliveryGitOptions,
  type DeliverySandbox,
} from './store-access.js';
import { ABSENT } from './user-files.js';
import { workCommitMessage } from './commit-message.js';
import { screenChanges, type DeliveryScreenOptions, type SkippedChange } from './screen.js';
import type { RawTreeChange } from '../raw-tree-diff.js';

/** Options of {@link commitSandbox}. */
export interface CommitSandboxOptions extends DeliveryGitOptions, DeliveryScreenOptions {
  /** The new branch (must not exist yet). */
  branch: string;
  /**
   * Commit message of a single commit (implies `squash`); default made from the thread (its
   * prompts, the tools that wrote, its id, the base commit, a `Co-authored-by` trailer).
   */
  message?: string;
  /**
   * One commit for all the work. Default: with `thread` (whose `steps` list its checkpoints),
   * one commit per checkpoint that changed files, each with that step's prompt and tools; without
   * it, one commit.
   */
  squash?: boolean;
  /**
   * The commit to put the work on (any revision of the user's repo; default `HEAD`, where the
   * user is now). When it is not the commit the sandbox was made from (the user committed
   * meanwhile), the work is replayed onto it with a three-way merge (`git merge-tree`) against
   * the sandbox's base, so the branch merges back without conflicts; a conflict stops it before
   * any ref is written (`SANDBOX_FAILED`, naming the paths).
   */
  onto?: string;
  /**
   * The user's uncommitted edits the sandbox started from go on the branch too, in a first
   * commit of their own. Default: left out (the branch holds only the agent's work); they are
   * listed in `baseEdits` either way.
   */
  withBaseEdits?: boolean;
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
   * With `withBaseEdits`, for a sandbox made from a working tree with uncommitted changes: the
   * commit holding them (on `onto`), which the work's commit follows.
   */
  baseCommit?: string;
  /** The commit the branch starts from (`onto`, resolved). */
  onto: string;
  /** The work's commits, oldest first (`commit` is the last); not the base edits' commit. */
  commits: Array<{ commit: string; subject: string; checkpointId?: string }>;
  /** The user's uncommitted edits the sandbox started from (on the branch only with `withBaseEdits`). */
  baseEdits: Array<{ status: string; path: string }>;
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
  // One commit per checkpoint that changed files (the thread's steps between from and to), or
  // one for all of it: each step's tree is the base plus the work up to it, screened alike.
  const plan = await commitPlan(sandbox, options, { from, to, tree });
  const trees: string[] = [];
  for (const step of plan) {
    if (step.snapshot === to) {
      trees.push(tree);
      continue;
    }
    const stepRaw = await rawSnapshotDiff(sandbox, from, step.snapshot, options.paths, options);
    const stepScreened = await screenChanges(sandbox, stepRaw, options);
    trees.push(
      await buildTree(sandbox, {
        ...options,
        from,
        to: step.snapshot,
        baseTree,
        kept: stepScreened.kept,
        whole: stepScreened.kept.length === stepRaw.length,
      }),
    );
  }
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
      ...storeGitAccess(sandbox, 'commit to a branch').env(),
      GIT_ALTERNATE_OBJECT_DIRECTORIES: objectsDir,
    },
    ...(options.signal === undefined ? {} : { signal: options.signal }),
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
  };
  const objects = (
    await runGit(
      [
        'rev-list',
        '--objects',
        ...new Set([tree, ...trees]),
        ...(dirtyBase ? [baseTree] : []),
        '--not',
        parentTree,
      ],
      withUserObjects,
    )
  ).stdout;
  if (objects.trim() !== '') {
    await runGit(['pack-objects', '-q', '--window=0', join(objectsDir, 'pack', 'pack')], {
      ...withUserObjects,
      input: objects,
    });
  }
  const onto = await resolveOnto(repo, options.onto ?? 'HEAD', git);
  const baseEdits = dirtyBase ? await treeChanges(repo, parentTree, baseTree, git) : [];
  const ontoTree = (await runGit(['rev-parse', `${onto}^{tree}`], git)).stdout.trim();
  let start = onto;
  let startTree = ontoTree;
  let baseCommit: string | undefined;
  if (dirtyBase && options.withBaseEdits === true) {
    const editsTree = await replay(repo, { base: parentTree, onto: ontoTree, work: baseTree }, git);
    baseCommit = await commitTree(
      repo,
      editsTree,
      onto,
      `Uncommitted changes the agents thread started from\n\nThe working tree of ${repo} when the sandbox was made (on ${parent}).`,
      git,
    );
    start = baseCommit;
    startTree = editsTree;
  }
  // Each step's work is the change from the sandbox's base to its tree: replayed onto where the
  // branch starts, unless that already is the base (nothing to merge). Consecutive trees make
  // each commit show one step.
  const commits: CommitSandboxResult['commits'] = [];
  let commit = start;
  let finalTree = startTree;
  for (const [index, step] of plan.entries()) {
    const stepTree =
      startTree === baseTree
        ? trees[index]!
        : await replay(repo, { base: baseTree, onto: startTree, work: trees[index]! }, git);
    if (stepTree === finalTree && plan.length > 1) continue;
    commit = await commitTree(repo, stepTree, commit, step.message, git);
    finalTree = stepTree;
    commits.push({
      commit,
      subject: step.message.split('\n')[0]!,
      ...(step.checkpointId === undefined ? {} : { checkpointId: step.checkpointId }),
    });
  }
  if (commits.length === 0) {
    // Nothing changed at all: still one commit, so the branch exists as asked.
    commit = await commitTree(repo, finalTree, commit, plan.at(-1)!.message, git);
    commits.push({ commit, subject: plan.at(-1)!.message.split('\n')[0]! });
  }
  // An empty old value: create only, never overwrite a branch made meanwhile.
  await runGit(['update-ref', '-m', 'agents sandbox commit', ref, commit, ''], git);
  return {
    branch: options.branch,
    ref,
    commit,
    parent,
    ...(baseCommit === undefined ? {} : { baseCommit }),
    onto,
    baseEdits,
    commits,
    tree: finalTree,
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
      ...storeGitAccess(sandbox, 'commit to a branch').env(),
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

/** One commit to make: the work up to `snapshot`, with its message. */
interface PlannedCommit {
  snapshot: string;
  message: string;
  checkpointId?: string;
}

/**
 * The commits to make for `from`..`to`: one per thread step in that range (when the thread lists
 * its steps, `to` is one of them and neither `squash` nor `message` is given), else one.
 */
async function commitPlan(
  sandbox: DeliverySandbox,
  options: CommitSandboxOptions,
  range: { from: string; to: string; tree: string },
): Promise<PlannedCommit[]> {
  const thread = options.thread;
  const common = {
    threadId: thread?.threadId,
    actor: thread?.actor,
    baseCommit: sandbox.sourceCommit,
  };
  const all =
    thread?.steps === undefined || options.message !== undefined
      ? []
      : await thread.steps(options.signal);
  const end = all.map((step) => step.snapshot).lastIndexOf(range.to);
  const begin =
    range.from === sandbox.base
      ? 0
      : all
          .slice(0, Math.max(end, 0))
          .map((step) => step.snapshot)
          .lastIndexOf(range.from) + 1;
  const steps =
    end < 0 ? [] : all.slice(begin, end + 1).filter((step) => step.snapshot !== sandbox.base);
  const squashed = (): PlannedCommit[] => [
    {
      snapshot: range.to,
      message:
        options.message ??
        workCommitMessage({
          ...common,
          prompts: steps.flatMap((step) => (step.prompt === undefined ? [] : [step.prompt])),
          tools: steps.flatMap((step) => step.tools),
          checkpoints: steps.length > 0 ? [steps.at(-1)!.checkpointId] : [],
        }),
      ...(steps.length > 0 ? { checkpointId: steps.at(-1)!.checkpointId } : {}),
    },
  ];
  if (options.squash === true || options.message !== undefined || steps.length < 2)
    return squashed();
  return steps.map((step, index) => ({
    snapshot: step.snapshot,
    checkpointId: step.checkpointId,
    message: workCommitMessage({
      ...common,
      prompts: step.prompt === undefined ? [] : [step.prompt],
      tools: step.tools,
      checkpoints: [step.checkpointId],
      position: { index: index + 1, count: steps.length },
    }),
  }));
}
