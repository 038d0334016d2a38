import { createHash } from 'node:crypto';
import { lstat, readdir, readFile, readlink } from 'node:fs/promises';
import { join, relative } from 'node:path';

/**
 * Every file under `root` (ignored ones included; the top-level `.git` entry left out) as
 * `path → mode:sha256` (symlinks by target), for exact before/after comparisons of a tree.
 */
export async function treeDigest(root: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  async function walk(dir: string): Promise<void> {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      if (dir === root && entry.name === '.git') continue;
      const full = join(dir, entry.name);
      const path = relative(root, full);
      if (entry.isSymbolicLink()) out[path] = `link:${await readlink(full)}`;
      else if (entry.isDirectory()) await walk(full);
      else {
        const mode = ((await lstat(full)).mode & 0o111) === 0 ? '644' : '755';
        out[path] = `${mode}:${createHash('sha256')
          .update(await readFile(full))
          .digest('hex')}`;
      }
    }
  }
  await walk(root);
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)));
}
