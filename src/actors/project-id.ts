import { createHash } from 'node:crypto';
import { readFile, realpath } from 'node:fs/promises';
import { join } from 'node:path';
import { AgentsError, AgentsErrorCode } from '../errors.js';
import { runGit } from '../sandbox/git.js';

/** The file that names a project in shared stores, committed with it: `.agents/project-id`. */
export const PROJECT_ID_FILE = join('.agents', 'project-id');

/** What a project id may hold: it becomes a path segment of stored thread ids and git refs. */
const PROJECT_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

/** How an id made from the folder's path starts: such an id names a project on one machine only. */
export const PATH_PROJECT_ID_PREFIX = 'path-';

const cache = new Map<string, Promise<string>>();

/**
 * The id that keeps a project's threads apart from other projects' in stores several projects
 * share (a Postgres checkpointer, a snapshot store): the same on every clone, so workers of one
 * project agree on it without setup. In order:
 *
 * 1. the first line of `.agents/project-id` (write one to choose the id, or to keep it when the
 *    history is rewritten);
 * 2. `git-<root commit>` of the project's repository (the oldest root, when there are several);
 * 3. `path-<hash of the folder's real path>`: a project outside git, which is then the same
 *    project only on this machine (write `.agents/project-id` to share it across machines).
 *
 * Throws `CONFIG_INVALID` for a `.agents/project-id` that is not a plain name.
 */
export function projectIdOf(projectDir: string): Promise<string> {
  let found = cache.get(projectDir);
  if (found === undefined) {
    found = resolveProjectId(projectDir);
    cache.set(projectDir, found);
    found.catch(() => cache.delete(projectDir));
  }
  return found;
}

async function resolveProjectId(projectDir: string): Promise<string> {
  const file = join(projectDir, PROJECT_ID_FILE);
  const written = await readFile(file, 'utf8').then(
    (text) => text.split('\n', 1)[0]?.trim() ?? '',
    () => undefined,
  );
  if (written !== undefined && written !== '') {
    if (!PROJECT_ID_PATTERN.test(written)) {
      throw new AgentsError(
        AgentsErrorCode.ConfigInvalid,
        `${file}: "${written}" is not a usable project id; write letters, digits, ".", "_" or "-" (at most 100, no "/").`,
        { details: { file, projectId: written } },
      );
    }
    return written;
  }
  const root = await rootCommitOf(projectDir);
  if (root !== undefined) return `git-${root}`;
  const real = await realpath(projectDir).catch(() => projectDir);
  return `${PATH_PROJECT_ID_PREFIX}${createHash('sha256').update(real).digest('hex').slice(0, 16)}`;
}

/** The oldest root commit of the repository holding `dir`, or undefined outside git / no commit. */
async function rootCommitOf(dir: string): Promise<string | undefined> {
  // runGit builds git's environment from scratch, so a GIT_DIR or GIT_WORK_TREE of the caller's
  // shell cannot point this at another repository.
  const roots = await runGit(['rev-list', '--max-parents=0', 'HEAD'], {
    cwd: dir,
    timeoutMs: 30_000,
  }).then(
    ({ stdout }) => stdout.trim().split('\n').filter(Boolean),
    () => [],
  );
  // Newest first; the last line is the oldest root, which no later merge changes.
  return roots.at(-1);
}
