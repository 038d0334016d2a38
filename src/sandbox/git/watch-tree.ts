import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { TREE_MODE } from './git-objects.js';
import { GITLINK_MODE, NeedsScan, type TreeBuildContext } from './incremental-tree.js';

/**
 * Watches every folder of the tree that a snapshot could record something in: all but the
 * root's `.git` and untracked ignored folders (never walked: `node_modules` stays unread).
 * Returns a reason when the tree cannot be watched incrementally (a nested repository).
 */
export async function watchTree(
  context: TreeBuildContext,
  headTree: string,
): Promise<string | undefined> {
  const rootIno = (await lstat(context.root)).ino;
  const walk = async (dir: string, ino: number, tree: string | undefined): Promise<void> => {
    context.watcher.attach(dir, ino);
    const old = new Map(
      (tree === undefined ? [] : await context.trees.read(tree)).map((entry) => [
        entry.name,
        entry,
      ]),
    );
    for (const dirent of await readdir(join(context.root, dir), { withFileTypes: true })) {
      if (!dirent.isDirectory()) continue;
      const name = dirent.name;
      if (name === '.git' && dir === '') continue;
      const path = dir === '' ? name : `${dir}/${name}`;
      if (name.toLowerCase() === '.git') throw new NeedsScan(`"${dir}" holds a .git`);
      const previous = old.get(name);
      if (previous?.mode === GITLINK_MODE) throw new NeedsScan(`"${path}" is a nested repository`);
      if (previous?.mode !== TREE_MODE && (await context.ignore.ignored(path))) continue;
      const stats = await lstat(join(context.root, path)).catch(() => undefined);
      if (stats?.isDirectory() !== true) continue;
      await walk(path, stats.ino, previous?.mode === TREE_MODE ? previous.sha : undefined);
    }
  };
  try {
    await walk('', rootIno, headTree);
    return context.watcher.healthy ? undefined : 'a folder could not be watched';
  } catch (error) {
    if (error instanceof NeedsScan) return error.message;
    throw error;
  }
}
