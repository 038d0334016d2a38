import { createHash } from 'node:crypto';
import { lstat, mkdir, readFile, readlink, rename, rm, rmdir, symlink } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { AgentsError, AgentsErrorCode } from '../../errors.js';
import { writeFileAtomic } from '../../core/atomic-write.js';
import { quotePath } from './guard.js';

/** Git's modes for what a path can hold in a tree. */
export const REGULAR = '100644';
export const EXECUTABLE = '100755';
export const SYMLINK = '120000';
export const GITLINK = '160000';
export const ABSENT = '000000';

/** A file as git sees it: mode and exact bytes (a symlink's bytes are its target). */
export interface FileState {
  mode: string;
  bytes: Buffer;
}

/**
 * What is at `rel` in the user's folder: a file state, `undefined` when nothing is there, or a
 * reason it cannot be read or written safely (a folder in the way, a symlinked parent folder
 * that could lead a write out of the tree).
 */
export async function readUserPath(
  target: string,
  rel: string,
): Promise<FileState | undefined | { blocked: string }> {
  const parts = rel.split('/');
  for (let depth = 1; depth < parts.length; depth++) {
    const parent = join(target, ...parts.slice(0, depth));
    const stats = await lstat(parent).catch(() => undefined);
    if (stats === undefined) return undefined;
    if (stats.isSymbolicLink())
      return { blocked: `${quotePath(parts.slice(0, depth).join('/'))} is a symlink` };
    if (!stats.isDirectory())
      return { blocked: `${quotePath(parts.slice(0, depth).join('/'))} is a file` };
  }
  const path = join(target, rel);
  const stats = await lstat(path).catch(() => undefined);
  if (stats === undefined) return undefined;
  if (stats.isSymbolicLink()) return { mode: SYMLINK, bytes: Buffer.from(await readlink(path)) };
  if (stats.isFile()) {
    return { mode: (stats.mode & 0o111) !== 0 ? EXECUTABLE : REGULAR, bytes: await readFile(path) };
  }
  return { blocked: `${quotePath(rel)} is a ${stats.isDirectory() ? 'folder' : 'special file'}` };
}

/** The git blob id of some bytes, in the store's hash (sha1: 40 hex digits, sha256: 64). */
export function blobId(bytes: Buffer, like: string): string {
  return createHash(like.length === 64 ? 'sha256' : 'sha1')
    .update(`blob ${bytes.length}\0`)
    .update(bytes)
    .digest('hex');
}

/** A short fingerprint of a file state (or of its absence), to notice later edits. */
export function fingerprint(state: FileState | undefined): string {
  if (state === undefined) return 'absent';
  return `${state.mode}:${createHash('sha256').update(state.bytes).digest('hex')}`;
}

/** Whether git would treat these bytes as binary (a NUL in the first 8000 bytes). */
export function looksBinary(bytes: Buffer): boolean {
  return bytes.subarray(0, 8000).includes(0);
}

function assertInside(target: string, path: string): void {
  const rel = relative(target, path);
  if (rel === '' || rel.startsWith(`..${sep}`) || rel === '..') {
    throw new AgentsError(
      AgentsErrorCode.PathOutsideSandbox,
      `Refusing to write ${path}: it is not inside ${target}.`,
      { details: { target, path } },
    );
  }
}

/**
 * Puts `state` at `rel` in the user's folder (or removes what is there for `undefined`): parent
 * folders made as needed, files written to a temp name and renamed over, so a reader never sees
 * half a file. Folders left empty by a removal are removed too, as git does.
 */
export async function writeUserPath(
  target: string,
  rel: string,
  state: FileState | undefined,
): Promise<void> {
  const path = join(target, rel);
  assertInside(target, path);
  if (state === undefined) {
    await rm(path, { force: true });
    let folder = dirname(path);
    while (folder !== target && relative(target, folder) !== '') {
      const removed = await rmdir(folder).then(
        () => true,
        () => false,
      );
      if (!removed) break;
      folder = dirname(folder);
    }
    return;
  }
  if (state.mode !== SYMLINK) {
    await writeFileAtomic(path, state.bytes, { mode: state.mode === EXECUTABLE ? 0o755 : 0o644 });
    return;
  }
  // A link is swapped in the same way as a file, through a temp link beside it (links are the
  // one thing `writeFileAtomic` does not write).
  await mkdir(dirname(path), { recursive: true });
  const temp = join(dirname(path), `.agents-apply-${process.pid}-${Date.now()}.tmp`);
  try {
    await symlink(state.bytes.toString(), temp);
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true }).catch(() => undefined);
    throw error;
  }
}
