import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  openSync,
  readlinkSync,
  readSync,
  type Stats,
} from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import {
  serializeTree,
  sortTree,
  TREE_MODE,
  type TreeEntry,
  type TreeReader,
} from './git-objects.js';
import type { IgnoreChecker } from './ignore-checker.js';
import type { ObjectBatch } from './object-batch.js';
import type { TreeWatcher } from './tree-watcher.js';

/**
 * A snapshot's new tree from the previous one and the paths that changed (from the watcher),
 * rewriting only those paths' ancestors: no index, no walk of the tree. It must give exactly the
 * tree `git add -A` would; where that would take knowledge it does not have, it gives up with a
 * reason and the caller scans (see `GitSandbox`): ignore rules changed, a nested repository, a
 * name git refuses, a file over the size cap, a hard link, a special file.
 */

/** What building needs: the tree, the store's objects, readers, the watcher, the size cap. */
export interface TreeBuildContext {
  root: string;
  /**
   * Where new objects go: named at once, written when the snapshot is (one pack, or loose when
   * few). Trees are also kept in `trees`' cache, so a build reads its own trees before that.
   */
  objects: ObjectBatch;
  trees: TreeReader;
  ignore: IgnoreChecker;
  watcher: TreeWatcher;
  /** Bytes; 0: no cap. */
  maxFileBytes: number;
}

/** Thrown inside a build when only a full scan can give the right tree. */
export class NeedsScan extends Error {}

/** A new tree, or why the caller must scan instead. */
export type TreeBuild = { tree: string } | { scan: string };

/** A gitlink (a nested repository's commit) in a tree. */
export const GITLINK_MODE = '160000';

/**
 * A name `add -A` treats specially or refuses (`.git` and the names some platform reads as
 * `.git`), or one that did not survive decoding as UTF-8: the scan decides those.
 */
function needsScanForName(name: string): string | undefined {
  if (name === '.gitignore') return 'a .gitignore changed (the ignore rules may differ)';
  if (/^\.git/i.test(name) || /^git~\d/i.test(name) || name.includes('\uFFFD'))
    return `the name "${name}" is one git treats specially`;
  return undefined;
}

interface Trie {
  /** This path itself changed (re-read it from disk). */
  leaf: boolean;
  /**
   * It was made, deleted or moved: a folder here is read whole and watched afresh, whatever its
   * inode (a folder deleted and made again can get the same inode number, with a dead watch).
   */
  renamed: boolean;
  children: Map<string, Trie>;
}

/**
 * Builds the tree `add -A` would record, from `headTree` (the last snapshot's tree, equal to
 * the disk except at `paths`). Each changed path is re-read from disk; a folder the watcher
 * did not know yet (new, or replaced) is read whole, and watched first.
 */
export async function buildTree(
  context: TreeBuildContext,
  headTree: string,
  paths: readonly string[],
  renamed: ReadonlySet<string> = new Set(),
): Promise<TreeBuild> {
  const trie: Trie = { leaf: false, renamed: false, children: new Map() };
  for (const path of paths) {
    let node = trie;
    for (const name of path.split('/')) {
      if (name === '' || name === '.' || name === '..') return { scan: `odd path "${path}"` };
      const reason = needsScanForName(name);
      if (reason !== undefined) return { scan: reason };
      let child = node.children.get(name);
      if (child === undefined) {
        child = { leaf: false, renamed: false, children: new Map() };
        node.children.set(name, child);
      }
      node = child;
    }
    node.leaf = true;
    if (renamed.has(path)) node.renamed = true;
  }
  try {
    await prefetch(context, headTree, trie);
    const tree = await rebuild(context, '', headTree, trie);
    return { tree: tree ?? (await writeTree(context, [])) };
  } catch (error) {
    if (error instanceof NeedsScan) return { scan: error.message };
    throw error;
  }
}

/**
 * Reads the head's folders along the changed paths into the tree cache, one level at a time,
 * each level's folders asked for together: one round trip to `cat-file --batch` per level, not
 * one per folder (on a loaded machine each round trip waits for git to be scheduled: ten
 * changed folders cost ten of them). Best effort: a folder it cannot read, the build reads
 * again and reports.
 */
async function prefetch(context: TreeBuildContext, headTree: string, trie: Trie): Promise<void> {
  let level: Array<{ sha: string; node: Trie }> = [{ sha: headTree, node: trie }];
  while (level.length > 0) {
    const read = await Promise.all(
      level.map(({ sha }) => context.trees.readIndexed(sha).catch(() => undefined)),
    );
    const next: Array<{ sha: string; node: Trie }> = [];
    level.forEach(({ node }, index) => {
      const tree = read[index];
      if (tree === undefined) return;
      for (const [name, child] of node.children) {
        if (child.children.size === 0) continue;
        const at = tree.positions.get(name);
        const entry = at === undefined ? undefined : tree.entries[at];
        if (entry?.mode === TREE_MODE) next.push({ sha: entry.sha, node: child });
      }
    });
    level = next;
  }
}

/** Writes a tree of `entries` (in any order) and keeps it, sorted, in the reader's cache. */
async function writeTree(context: TreeBuildContext, entries: TreeEntry[]): Promise<string> {
  return writeSortedTree(context, sortTree(entries));
}

async function writeSortedTree(context: TreeBuildContext, sorted: TreeEntry[]): Promise<string> {
  const content = serializeTree(sorted);
  const sha = context.objects.add('tree', content);
  context.trees.remember(sha, sorted, content);
  return sha;
}

/**
 * The folder `dir` with the changes of `node` applied; undefined when it ends up empty. The
 * entries stay in the head tree's order unless a name comes or a file becomes a folder (or
 * the reverse): only then is the folder sorted again.
 */
async function rebuild(
  context: TreeBuildContext,
  dir: string,
  treeSha: string,
  node: Trie,
): Promise<string | undefined> {
  const { entries, positions } = await context.trees.readIndexed(treeSha);
  const replaced = new Map<number, TreeEntry | undefined>();
  const added: TreeEntry[] = [];
  let reordered = false;
  for (const [name, child] of node.children) {
    const path = dir === '' ? name : `${dir}/${name}`;
    const at = positions.get(name);
    const old = at === undefined ? undefined : entries[at];
    const next = await examine(context, path, old, child);
    if (at === undefined || old === undefined) {
      if (next !== undefined) added.push(next);
    } else if (next === undefined) {
      replaced.set(at, undefined);
    } else if (old.sha !== next.sha || old.mode !== next.mode) {
      replaced.set(at, next);
      if ((old.mode === TREE_MODE) !== (next.mode === TREE_MODE)) reordered = true;
    }
  }
  if (replaced.size === 0 && added.length === 0) return treeSha;
  const kept: TreeEntry[] = [];
  // Only ids changed (no entry came, went or changed mode): patch the old content's ids.
  const ids = new Map<number, string>();
  for (const [at, next] of replaced) {
    if (next === undefined || next.mode !== entries[at]!.mode) break;
    ids.set(at, next.sha);
  }
  entries.forEach((entry, index) => {
    const change = replaced.has(index) ? replaced.get(index) : entry;
    if (change !== undefined) kept.push(change);
  });
  kept.push(...added);
  if (kept.length === 0) return undefined;
  if (added.length === 0 && ids.size === replaced.size) {
    const content = context.trees.patched(treeSha, ids);
    if (content !== undefined) {
      const sha = context.objects.add('tree', content);
      context.trees.remember(sha, kept, content);
      return sha;
    }
  }
  return writeSortedTree(context, reordered || added.length > 0 ? sortTree(kept) : kept);
}

/** The entry `path` gets now (undefined: none), given its entry in the head tree. */
async function examine(
  context: TreeBuildContext,
  path: string,
  old: TreeEntry | undefined,
  node: Trie,
): Promise<TreeEntry | undefined> {
  const name = path.slice(path.lastIndexOf('/') + 1);
  if (old?.mode === GITLINK_MODE) throw new NeedsScan(`"${path}" is a nested repository`);
  const absolute = join(context.root, path);
  // Synchronous file calls on the hot path of a watched snapshot (see writeObject).
  let stats: Stats | undefined;
  try {
    stats = lstatSync(absolute);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT' && code !== 'ENOTDIR') throw error;
  }
  if (stats === undefined || !stats.isDirectory()) context.watcher.forget(path);
  if (stats === undefined) return undefined;
  const tracked = old !== undefined && old.mode !== TREE_MODE;
  if (stats.isDirectory()) {
    if (!node.renamed && old?.mode === TREE_MODE && context.watcher.isWatched(path, stats.ino)) {
      // The same folder as at the last snapshot: its own watch reported what changed inside.
      const sha = await rebuild(context, path, old.sha, node);
      return sha === undefined ? undefined : { mode: TREE_MODE, name, sha };
    }
    if (old?.mode !== TREE_MODE && (await context.ignore.ignored(path))) return undefined;
    // Watched afresh: a watch kept from before may be dead (see Trie.renamed).
    context.watcher.forget(path);
    const sha = await readFolder(
      context,
      path,
      stats.ino,
      old?.mode === TREE_MODE ? old.sha : undefined,
    );
    return sha === undefined ? undefined : { mode: TREE_MODE, name, sha };
  }
  if (!tracked && (await context.ignore.ignored(path))) return undefined;
  return fileEntry(context, path, name, stats);
}

/** A file or symlink's entry, its blob written; throws NeedsScan for what the scan must decide. */
async function fileEntry(
  context: TreeBuildContext,
  path: string,
  name: string,
  stats: Stats,
): Promise<TreeEntry> {
  const absolute = join(context.root, path);
  if (stats.isSymbolicLink()) {
    const target = readlinkSync(absolute, { encoding: 'buffer' });
    return { mode: '120000', name, sha: context.objects.add('blob', target) };
  }
  if (!stats.isFile()) throw new NeedsScan(`"${path}" is not a regular file, folder or symlink`);
  // A hard link can change without an event in this folder (written through its other name).
  if (stats.nlink > 1) throw new NeedsScan(`"${path}" has hard links`);
  if (context.maxFileBytes > 0 && stats.size > context.maxFileBytes)
    throw new NeedsScan(`"${path}" is over the size cap`);
  const content = await readInside(absolute, stats.ino);
  return {
    mode: (Number(stats.mode) & 0o100) !== 0 ? '100755' : '100644',
    name,
    sha: context.objects.add('blob', content),
  };
}

/**
 * The bytes of the regular file at `absolute`, read by the host only if it is still the file
 * that was examined and still inside the sandbox. A confined tool can swap a file or one of its
 * folders for a symlink between the `lstat` and the read (a server keeps running between
 * calls): `O_NOFOLLOW` refuses a link in the last place, and the open file's own path
 * (`/proc/self/fd`) must be the path asked for, so a folder swapped for a link to the user's
 * home never has the host copy a file from there into the snapshot.
 */
export async function readInside(absolute: string, ino: number | bigint): Promise<Buffer> {
  // Synchronous: a few small calls one after another (see writeObject in git-objects.ts).
  let fd: number;
  try {
    fd = openSync(absolute, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    throw new NeedsScan(
      `"${absolute}" changed while it was read (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
  try {
    const opened = fstatSync(fd);
    let where: string | undefined;
    try {
      where = readlinkSync(`/proc/self/fd/${fd}`);
    } catch {
      where = undefined;
    }
    if (!opened.isFile() || opened.ino !== Number(ino) || where !== absolute)
      throw new NeedsScan(`"${absolute}" changed while it was read`);
    // At most the size examined: a file that grows meanwhile is caught by the next snapshot's
    // event, never read without bound here.
    const content = Buffer.alloc(opened.size);
    let bytesRead = 0;
    while (bytesRead < opened.size) {
      const read = readSync(fd, content, bytesRead, opened.size - bytesRead, bytesRead);
      if (read === 0) break;
      bytesRead += read;
    }
    return content.subarray(0, bytesRead);
  } finally {
    closeSync(fd);
  }
}

/**
 * A folder read whole from disk (new to the watcher), watched first. `oldTree`: the folder's
 * tree at the last snapshot, when it had one (its files are tracked: not subject to ignores).
 */
async function readFolder(
  context: TreeBuildContext,
  dir: string,
  ino: number,
  oldTree: string | undefined,
): Promise<string | undefined> {
  context.watcher.attach(dir, ino);
  const old = new Map(
    (oldTree === undefined ? [] : await context.trees.read(oldTree)).map((entry) => [
      entry.name,
      entry,
    ]),
  );
  const entries: TreeEntry[] = [];
  for (const dirent of await readdir(join(context.root, dir), { withFileTypes: true })) {
    const name = dirent.name;
    if (name.toLowerCase() === '.git')
      throw new NeedsScan(`"${dir}" holds a .git (a nested repository)`);
    const reason = needsScanForName(name);
    if (reason !== undefined) throw new NeedsScan(reason);
    const path = `${dir}/${name}`;
    const previous = old.get(name);
    if (previous?.mode === GITLINK_MODE) throw new NeedsScan(`"${path}" is a nested repository`);
    const stats = await lstat(join(context.root, path)).catch(() => undefined);
    if (stats === undefined) continue;
    if (stats.isDirectory()) {
      if (previous?.mode !== TREE_MODE && (await context.ignore.ignored(path))) continue;
      const sha = await readFolder(
        context,
        path,
        stats.ino,
        previous?.mode === TREE_MODE ? previous.sha : undefined,
      );
      if (sha !== undefined) entries.push({ mode: TREE_MODE, name, sha });
      continue;
    }
    const tracked = previous !== undefined && previous.mode !== TREE_MODE;
    if (!tracked && (await context.ignore.ignored(path))) continue;
    entries.push(await fileEntry(context, path, name, stats));
  }
  return entries.length === 0 ? undefined : writeTree(context, entries);
}
