import { rmdir } from 'node:fs/promises';
import { dirname, relative, resolve, sep } from 'node:path';

/**
 * Removes `dir` and then each parent while it is empty, stopping at (and keeping) `stop`, at the
 * first folder that is not empty or cannot be removed, or when `dir` is not inside `stop`. For
 * undoing the folders a failed or removed sandbox made under the state folder: `rmdir` never
 * removes a folder with anything in it, so a sibling made meanwhile is safe. Never throws.
 */
export async function removeEmptyDirs(dir: string, stop: string): Promise<void> {
  const top = resolve(stop);
  let current = resolve(dir);
  for (;;) {
    const rel = relative(top, current);
    if (rel === '' || rel.startsWith(`..${sep}`) || rel === '..' || resolve(top, rel) !== current)
      return;
    try {
      await rmdir(current);
    } catch (error) {
      // Already gone (another clean-up got there first): go on with its parent.
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') return;
    }
    current = dirname(current);
  }
}
