import { copyFile, mkdir, writeFile } from 'node:fs/promises';
import { isAbsolute, join, resolve } from 'node:path';
import { runGit } from '../git.js';
import { gitEnv } from '../git-env.js';
import { NO_USER_CONFIG, type StoreGitOptions } from './snapshot-store.js';

/** Where the tool repo's branches and tags come from (repository mode). */
export interface ToolRepoSource {
  /** The user's repo (its work tree top). */
  repo: string;
  /** The user's commit the sandbox was made from: the tool repo's HEAD. */
  commit: string;
  /** The branch HEAD names when the sandbox was made from the user's checked-out branch. */
  branch?: string;
}

/**
 * Makes the `.git` a tool sees in the sandbox tree: a repository of the sandbox's own, so git
 * commands a tool runs there (commit, branch -D, tag -f, stash, reset, gc) change only it, and a
 * `git` that looks upward for a repository stops here instead of finding one above the state
 * folder.
 *
 * Made from a git source it looks like a clone: the user's branches and tags (copied as
 * `packed-refs`, not their reflogs or stash), HEAD on the same commit (and branch), an index
 * matching the checked-out files (a copy of the private index, so `git status` is clean). Its
 * objects are borrowed from the user's repo through `objects/info/alternates`: nothing is
 * copied, and git never writes to or prunes an alternate. If the user later prunes history the
 * tool repo can miss old objects; the snapshots cannot (their store is self-contained). There is
 * no `origin` remote, so `git push` has nowhere to go by default. From a plain folder it is an
 * empty repository.
 */
export async function makeToolRepo(
  root: string,
  privateIndex: string,
  source: ToolRepoSource | undefined,
  options: StoreGitOptions,
): Promise<void> {
  const common = {
    signal: options.signal,
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
  };
  await runGit(['init', '-q', root], {
    ...common,
    cwd: root,
    env: gitEnv({ ...NO_USER_CONFIG }),
  });
  if (source === undefined) return;
  const gitDir = join(root, '.git');
  const userCommon = (
    await runGit(['rev-parse', '--git-common-dir'], { ...common, cwd: source.repo })
  ).stdout.trim();
  const userObjects = join(
    isAbsolute(userCommon) ? userCommon : resolve(source.repo, userCommon),
    'objects',
  );
  await mkdir(join(gitDir, 'objects', 'info'), { recursive: true });
  await writeFile(join(gitDir, 'objects', 'info', 'alternates'), `${userObjects}\n`);
  const refs = (
    await runGit(['for-each-ref', '--format=%(objectname) %(refname)', 'refs/heads', 'refs/tags'], {
      ...common,
      cwd: source.repo,
    })
  ).stdout;
  // Sorted by name already (for-each-ref's order), as packed-refs wants.
  await writeFile(join(gitDir, 'packed-refs'), `# pack-refs with: sorted \n${refs}`);
  await writeFile(
    join(gitDir, 'HEAD'),
    source.branch === undefined ? `${source.commit}\n` : `ref: ${source.branch}\n`,
  );
  await copyFile(privateIndex, join(gitDir, 'index'));
}
