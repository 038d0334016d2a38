/**
 * Git plumbing in the user's repository for `commitSandbox`: where its objects are, the commit
 * to build on, a commit with the user's identity, and the three-way replay of the work onto it.
 * Nothing here checks out, moves a ref or touches the user's index.
 */
import { isAbsolute, resolve } from 'node:path';
import { AgentsError, AgentsErrorCode } from '../../errors.js';
import { runGit } from '../git.js';
import { gitEnv, SNAPSHOT_IDENTITY } from '../git-env.js';
import { quotePath } from './guard.js';

/** The user's objects folder (objects the store shares with the user's repo go there). */
export async function userObjectsDir(
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
export async function commitTree(
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

export async function resolveOnto(
  repo: string,
  rev: string,
  git: { cwd: string; signal?: AbortSignal | undefined },
): Promise<string> {
  const found = await runGit(
    ['rev-parse', '--verify', '--quiet', '--end-of-options', `${rev}^{commit}`],
    {
      ...git,
      okExitCodes: [1, 128],
    },
  );
  const sha = found.stdout.trim();
  if (found.exitCode !== 0 || sha === '' || rev.startsWith('-')) {
    throw new AgentsError(
      AgentsErrorCode.RevisionNotFound,
      `--onto "${rev}" names no commit of ${repo}; give a branch, tag or commit (default HEAD).`,
      { details: { onto: rev } },
    );
  }
  return sha;
}

/** `diff-tree` name-status between two trees of the user's repo. */
export async function treeChanges(
  repo: string,
  from: string,
  to: string,
  git: { cwd: string; signal?: AbortSignal | undefined },
): Promise<Array<{ status: string; path: string }>> {
  const out = (
    await runGit(['diff-tree', '-r', '-z', '--name-status', '--no-renames', from, to], git)
  ).stdout;
  const fields = out.split('\0');
  const changes: Array<{ status: string; path: string }> = [];
  for (let index = 0; index + 1 < fields.length && fields[index] !== ''; index += 2)
    changes.push({ status: fields[index]!, path: fields[index + 1]! });
  return changes;
}

/**
 * The three-way merge of `work` onto `onto` against `base` (trees of the user's repo), by
 * `git merge-tree --write-tree` (what `git merge` does, renames included, nothing checked out).
 * Git 2.39 has no `--merge-base`, so the base is given as history: two throwaway commits on a
 * root commit of `base` (unreferenced objects, collected by git's gc). Throws `SANDBOX_FAILED`
 * naming the conflicting paths and what to do instead.
 */
export async function replay(
  repo: string,
  trees: { base: string; onto: string; work: string },
  git: { cwd: string; signal?: AbortSignal | undefined },
): Promise<string> {
  const env = gitEnv();
  const commit = async (tree: string, parents: string[]) =>
    (
      await runGit(
        [
          'commit-tree',
          tree,
          ...parents.flatMap((parent) => ['-p', parent]),
          '-m',
          'agents replay',
        ],
        {
          ...git,
          env,
        },
      )
    ).stdout.trim();
  const root = await commit(trees.base, []);
  const ours = await commit(trees.onto, [root]);
  const theirs = await commit(trees.work, [root]);
  const merged = await runGit(
    ['merge-tree', '--write-tree', '--name-only', '-z', '--no-messages', ours, theirs],
    { ...git, env, okExitCodes: [1] },
  );
  const fields = merged.stdout.split('\0');
  const tree = fields[0]!.trim();
  if (merged.exitCode === 0) return tree;
  const conflicts = [...new Set(fields.slice(1).filter((name) => name !== ''))];
  throw new AgentsError(
    AgentsErrorCode.SandboxFailed,
    `The work conflicts with the commit it would go on (${conflicts.length} path(s): ${conflicts.map(quotePath).join(', ')}); no branch was written. Next steps: put the branch on the commit the sandbox started from (--onto with that commit, then merge it yourself with git), take the work into your working tree with agents sandbox apply (--conflicts markers to get git's markers), or leave these paths out (PATH arguments).`,
    { details: { conflicts } },
  );
}
