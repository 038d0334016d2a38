import { realpath, stat } from 'node:fs/promises';
import { isAbsolute, relative, sep } from 'node:path';
import { AgentsError, AgentsErrorCode } from '../errors.js';
import { runGit } from './git.js';

/** Folder of a project's state dir holding its run sandboxes. */
export const SANDBOXES_FOLDER = 'sandboxes';

/** Whether `path` is `folder` or inside it (by whole path components). */
export function isInside(path: string, folder: string): boolean {
  const rel = relative(folder, path);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

/** The realpath of a sandbox source; throws `SANDBOX_FAILED` when it is not a folder. */
export async function realSourceDir(source: string): Promise<string> {
  try {
    const real = await realpath(source);
    if (!(await stat(real)).isDirectory()) throw new Error('not a directory');
    return real;
  } catch (error) {
    throw new AgentsError(
      AgentsErrorCode.SandboxFailed,
      `Sandbox source ${source} is not an existing directory; pass the project's folder or git repo.`,
      { cause: error, details: { source } },
    );
  }
}

/** The realpath of the work tree top containing `dir`, or undefined when `dir` is not in a git work tree. */
export async function gitTopLevel(
  dir: string,
  signal?: AbortSignal,
  timeoutMs?: number,
): Promise<string | undefined> {
  const result = await runGit(['rev-parse', '--is-inside-work-tree', '--show-toplevel'], {
    cwd: dir,
    signal,
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
    okExitCodes: [128],
  });
  const [inside, top] = result.stdout.trim().split('\n');
  if (result.exitCode !== 0 || inside !== 'true' || top === undefined || top === '')
    return undefined;
  return realpath(top);
}
