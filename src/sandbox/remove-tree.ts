import { execFile } from 'node:child_process';
import { rm } from 'node:fs/promises';

/**
 * Removes a folder tree, however deep (issue 35, item 8). Node's recursive `rm` works with
 * whole paths, so a tree a tool made deeper than PATH_MAX (4,096 bytes on Linux) fails with
 * `ENAMETOOLONG` and stays on disk. Then `rm -rf` (argument array, no shell) removes it: it
 * walks with paths relative to open folders. Never follows a symlink in the tree, as neither does.
 */
export async function removeTree(path: string): Promise<void> {
  try {
    await rm(path, { recursive: true, force: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENAMETOOLONG') throw error;
    await new Promise<void>((resolve, reject) => {
      execFile('rm', ['-rf', '--', path], { timeout: 600_000 }, (failure, _stdout, stderr) => {
        if (failure === null) resolve();
        else
          reject(new Error(`rm -rf ${path} failed: ${String(stderr).trim() || failure.message}`));
      });
    });
  }
}
