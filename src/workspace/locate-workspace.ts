/** Finding the workspace folder for a command, as git finds `.git`. */
import { existsSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

/** The default workspace folder: `.agents` under `cwd`. */
export function defaultWorkspaceDir(cwd: string = process.cwd()): string {
  return join(cwd, '.agents');
}

/**
 * Finds the workspace for a command run in `cwd`, as git finds `.git`: the nearest `.agents`
 * folder in `cwd` or a folder above it. The search stops at the top of the git repository `cwd`
 * is in (the folder holding `.git`, included) and never climbs into the home folder itself from
 * below it (`~/.agents` is used by other tools for other things). Returns undefined when none is
 * found; callers then use {@link defaultWorkspaceDir}.
 */
export function locateWorkspace(
  cwd: string,
  home: string | undefined = process.env['HOME'],
): string | undefined {
  const start = resolve(cwd);
  const homeDir = home === undefined || home === '' ? undefined : resolve(home);
  for (let dir = start; ; dir = dirname(dir)) {
    if (dir === homeDir && dir !== start) return undefined;
    const candidate = join(dir, '.agents');
    if (isDirectorySync(candidate)) return candidate;
    if (existsSync(join(dir, '.git')) || dirname(dir) === dir) return undefined;
  }
}

function isDirectorySync(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
