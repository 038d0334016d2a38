import {
  closeSync,
  constants,
  lstatSync,
  mkdirSync,
  openSync,
  readlinkSync,
  rmdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { AgentsError, AgentsErrorCode } from '../../errors.js';
import { join } from 'node:path';
import type { TreeReader } from './git-objects.js';
import type { RawTreeChange } from '../raw-tree-diff.js';

/**
 * A restore that costs what differs (issue 29): the tree on disk equals `from` (a safety
 * snapshot was just taken), so writing the raw diff `from → to` makes it equal `to`, without
 * `read-tree -u --reset` reading and rewriting the whole private index. Deletions first (a path
 * that turns from a file into a folder, or back, must leave before its replacement comes), then
 * folders left empty are removed, then additions and changes are written from the store.
 *
 * Never writes through a symlink: anything in the way of a path or one of its folders (an
 * ignored file, a link a tool planted after the snapshot) is removed first (without following
 * it), and files are created with `wx` (O_EXCL: a link at the last place fails the write).
 */
export async function applyTreeDiff(
  root: string,
  raw: readonly RawTreeChange[],
  trees: TreeReader,
): Promise<void> {
  const writes: RawTreeChange[] = [];
  for (const change of raw) {
    if (change.status === 'D') remove(root, change.path);
    else writes.push(change);
  }
  for (const change of raw) if (change.status === 'D') removeEmptyParents(root, change.path);
  for (const change of writes) {
    const content = await trees.readBlob(change.dstSha);
    makeFolders(root, change.path);
    inFolder(root, change.path, (absolute) => {
      rmSync(absolute, { recursive: true, force: true });
      if (change.dstMode === '120000') symlinkSync(content, absolute);
      else
        writeFileSync(absolute, content, {
          flag: 'wx',
          mode: change.dstMode === '100755' ? 0o777 : 0o666,
        });
    });
  }
}

/**
 * Runs `act` on the path of `path`'s entry as reached through its folder opened without
 * following a link (`O_NOFOLLOW`) and located by the kernel (`/proc/self/fd`): a process in the
 * sandbox that swaps the folder for a symlink after {@link makeFolders} looked at it (issue 35,
 * items 5 and 6) makes the restore stop, never write or delete outside the tree. Where `/proc`
 * cannot say (not Linux), the path itself.
 */
function inFolder(root: string, path: string, act: (absolute: string) => void): void {
  const parts = path.split('/');
  const name = parts.pop()!;
  const folder = join(root, ...parts);
  let fd: number;
  try {
    fd = openSync(folder, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  } catch (error) {
    throw changedDuringRestore(folder, (error as NodeJS.ErrnoException).code);
  }
  try {
    let where: string | undefined;
    try {
      where = readlinkSync(`/proc/self/fd/${fd}`);
    } catch {
      act(join(folder, name));
      return;
    }
    if (where !== folder) throw changedDuringRestore(folder, `now ${where}`);
    act(`/proc/self/fd/${fd}/${name}`);
  } finally {
    closeSync(fd);
  }
}

function changedDuringRestore(folder: string, why: string | undefined): AgentsError {
  return new AgentsError(
    AgentsErrorCode.SandboxFailed,
    `The folder ${folder} changed while the restore wrote into it (${why ?? 'error'}): a process in the sandbox replaced it. Nothing was written outside the sandbox; stop that process and restore again.`,
    { details: { path: folder } },
  );
}

function remove(root: string, path: string): void {
  rmSync(join(root, path), { recursive: true, force: true });
}

/** Removes the folders of `path` that are empty now, deepest first (as `read-tree -u` does). */
function removeEmptyParents(root: string, path: string): void {
  const parts = path.split('/');
  for (let depth = parts.length - 1; depth > 0; depth--) {
    try {
      rmdirSync(join(root, ...parts.slice(0, depth)));
    } catch {
      return;
    }
  }
}

/** Makes the folders of `path` (each a real folder: anything else in the way is removed). */
function makeFolders(root: string, path: string): void {
  const parts = path.split('/');
  let dir = root;
  for (const name of parts.slice(0, -1)) {
    dir = join(dir, name);
    let stats;
    try {
      stats = lstatSync(dir);
    } catch {
      stats = undefined;
    }
    if (stats?.isDirectory() === true) continue;
    if (stats !== undefined) rmSync(dir, { force: true });
    mkdirSync(dir);
  }
}
