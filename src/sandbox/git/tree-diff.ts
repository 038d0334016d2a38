import { compareEntries, TREE_MODE, type TreeReader } from './git-objects.js';
import type { TreeEntry } from './git-objects.js';
import type { RawTreeChange } from '../raw-tree-diff.js';

/**
 * The change list between two stored trees, from the trees alone (a watched snapshot's raw diff,
 * and what a watched restore writes): no git process, only folders whose ids differ are read.
 */

const FILE_TYPE = (mode: string): string => (mode === TREE_MODE ? 'tree' : mode.slice(0, 2));

/**
 * `diff-tree -r --raw --no-renames` between two trees, from the trees alone (only folders whose
 * ids differ are read): the change list of a snapshot built here. Both entry lists are in git's
 * order (as git writes them, and as {@link TreeReader} keeps the trees written here), so one
 * merge walk pairs them: equal entries are passed over without a sort or a lookup (a root of
 * 1,000 folders costs a string compare per entry, not a sort of the union).
 */
export async function diffTrees(
  trees: TreeReader,
  from: string,
  to: string,
  prefix = '',
): Promise<RawTreeChange[]> {
  if (from === to) return [];
  const before = await trees.read(from);
  const after = await trees.read(to);
  const changes: RawTreeChange[] = [];
  const zero = '0'.repeat(40);
  const removed = async (old: TreeEntry): Promise<void> => {
    const path = `${prefix}${old.name}`;
    if (old.mode === TREE_MODE) {
      changes.push(...(await diffTrees(trees, old.sha, emptyTreeId(trees), `${path}/`)));
      return;
    }
    changes.push({
      status: 'D',
      path,
      srcMode: old.mode,
      dstMode: '000000',
      srcSha: old.sha,
      dstSha: zero,
    });
  };
  const added = async (now: TreeEntry): Promise<void> => {
    const path = `${prefix}${now.name}`;
    if (now.mode === TREE_MODE) {
      changes.push(...(await diffTrees(trees, emptyTreeId(trees), now.sha, `${path}/`)));
      return;
    }
    changes.push({
      status: 'A',
      path,
      srcMode: '000000',
      dstMode: now.mode,
      srcSha: zero,
      dstSha: now.sha,
    });
  };
  let i = 0;
  let j = 0;
  while (i < before.length || j < after.length) {
    const old = before[i];
    const now = after[j];
    if (old !== undefined && now !== undefined && old.name === now.name) {
      const oldTree = old.mode === TREE_MODE;
      if (oldTree === (now.mode === TREE_MODE)) {
        i++;
        j++;
        if (old.sha === now.sha && old.mode === now.mode) continue;
        if (oldTree) {
          changes.push(...(await diffTrees(trees, old.sha, now.sha, `${prefix}${now.name}/`)));
          continue;
        }
        changes.push({
          status: FILE_TYPE(old.mode) === FILE_TYPE(now.mode) ? 'M' : 'T',
          path: `${prefix}${now.name}`,
          srcMode: old.mode,
          dstMode: now.mode,
          srcSha: old.sha,
          dstSha: now.sha,
        });
        continue;
      }
    }
    // Different names (or a file and a folder of one name, which git sorts apart): the one
    // that sorts first is only on its side.
    if (now === undefined || (old !== undefined && compareEntries(old, now) < 0)) {
      await removed(old!);
      i++;
    } else {
      await added(now);
      j++;
    }
  }
  return changes;
}

/** The empty tree's id (git knows it without storing it; we remember it as empty). */
const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';
function emptyTreeId(trees: TreeReader): string {
  trees.remember(EMPTY_TREE, []);
  return EMPTY_TREE;
}
