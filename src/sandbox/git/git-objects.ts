import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { deflateSync } from 'node:zlib';
import { AgentsError, AgentsErrorCode } from '../../errors.js';
import type { LongLivedGit } from '../git.js';

/**
 * Git objects made and read without a git process per object, for snapshots that cost what
 * changed (see incremental-tree.ts). Objects are written as loose objects in the store's own
 * format (zlib of `<type> <size>\0<content>`, named by its SHA-1: the store is a SHA-1 repo);
 * trees are read through one long-lived `git cat-file --batch`.
 */

/** One entry of a tree object. */
export interface TreeEntry {
  /** Octal mode as git writes it in a tree: 100644, 100755, 120000, 40000, 160000. */
  mode: string;
  name: string;
  /** Hex object id. */
  sha: string;
}

export const TREE_MODE = '40000';

/** The SHA-1 object id of an object's content. */
export function objectId(type: string, content: Buffer): string {
  return createHash('sha1').update(`${type} ${content.length}\0`).update(content).digest('hex');
}

/**
 * Writes one object into `objectsDir` unless it is there already (as a loose object; a packed
 * copy is not looked for, a second loose copy is harmless). Written to a temp file, then renamed
 * into place, so a reader never sees half an object. A rename, not git's link + unlink: the
 * name holds content-addressed bytes, so replacing an identical copy is harmless, and on ext4
 * link + unlink measured 0.6–1.2 ms per object against 0.04–0.06 ms for the rename (22 objects
 * per 10-file snapshot). Synchronous file calls on purpose: a snapshot writes a handful of
 * small objects one after another, and each promise-based call costs a thread-pool round trip
 * (most of a watched snapshot's time on a loaded machine).
 */
export async function writeObject(
  objectsDir: string,
  type: string,
  content: Buffer,
): Promise<string> {
  return writeLooseObject(objectsDir, type, content);
}

/** {@link writeObject}, synchronous (a snapshot's objects go through an ObjectBatch). */
export function writeLooseObject(objectsDir: string, type: string, content: Buffer): string {
  const sha = objectId(type, content);
  const dir = join(objectsDir, sha.slice(0, 2));
  const file = join(dir, sha.slice(2));
  if (existsSync(file)) return sha;
  mkdirSync(dir, { recursive: true });
  const temp = join(dir, `tmp_obj_${process.pid}_${Math.random().toString(36).slice(2)}`);
  try {
    writeFileSync(
      temp,
      zlibWrap(
        Buffer.concat([Buffer.from(`${type} ${content.length}\0`), content]),
        storedMaxBytes(type),
      ),
      { mode: 0o444, flag: 'wx' },
    );
    renameSync(temp, file);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
  return sha;
}

/**
 * Objects up to this size are written as stored (uncompressed) zlib streams: a zlib deflate
 * stream costs 0.1–0.5 ms to set up (most of a small object's write), and a small object takes
 * a file-system block or two whatever its compressed size. Larger ones are deflated (level 1).
 */
const STORED_MAX_BYTES = 16 * 1024;
/** The most one stored block holds. */
const STORED_BLOCK_MAX_BYTES = 0xffff;

/**
 * The largest object of `type` written stored: a tree is mostly object ids, which do not
 * compress (a root of 1,000 folders: 31 KB, 24.5 KB deflated for 0.25 ms of deflate on every
 * snapshot), so trees are stored up to one stored block; blobs up to {@link STORED_MAX_BYTES}.
 */
export function storedMaxBytes(type: string): number {
  return type === 'tree' ? STORED_BLOCK_MAX_BYTES : STORED_MAX_BYTES;
}

/** The zlib stream git expects in a loose object: deflated, or stored blocks when small. */
export function zlibWrap(data: Buffer, storedMax = STORED_MAX_BYTES): Buffer {
  if (data.length > Math.min(storedMax, STORED_BLOCK_MAX_BYTES))
    return deflateSync(data, { level: 1 });
  // One stored block (up to 65,535 bytes): CMF 0x78 (deflate, 32 KiB window), FLG 0x01
  // (0x7801 is a multiple of 31); BFINAL set, BTYPE 00; LEN and its one's complement.
  const out = Buffer.allocUnsafe(2 + 5 + data.length + 4);
  out[0] = 0x78;
  out[1] = 0x01;
  out[2] = 1;
  out.writeUInt16LE(data.length, 3);
  out.writeUInt16LE(~data.length & 0xffff, 5);
  data.copy(out, 7);
  const at = 7 + data.length;
  out.writeUInt32BE(adler32(data), at);
  return out;
}

function adler32(data: Buffer): number {
  let a = 1;
  let b = 0;
  // 5552: the most bytes before the sums must be reduced to stay exact in 32 bits.
  for (let start = 0; start < data.length; start += 5552) {
    const end = Math.min(data.length, start + 5552);
    for (let index = start; index < end; index++) {
      a += data[index]!;
      b += a;
    }
    a %= 65521;
    b %= 65521;
  }
  return ((b << 16) | a) >>> 0;
}

/** The bytes git sorts a tree entry by: its name, a tree's as if it ended in `/`. */
function sortKey(entry: TreeEntry): Buffer {
  return Buffer.from(entry.mode === TREE_MODE ? `${entry.name}/` : entry.name);
}

/** Git's order of tree entries: by name bytes, a tree's name compared as if it ended in `/`. */
export function compareEntries(a: TreeEntry, b: TreeEntry): number {
  return Buffer.compare(sortKey(a), sortKey(b));
}

/** The entries in git's tree order (a sorted copy). */
export function sortTree(entries: readonly TreeEntry[]): TreeEntry[] {
  // One key per entry, not two per comparison (a root tree of 1,000 folders sorts in ~10,000).
  const keyed = entries.map((entry) => ({ entry, key: sortKey(entry) }));
  keyed.sort((a, b) => Buffer.compare(a.key, b.key));
  return keyed.map(({ entry }) => entry);
}

/** A tree object's content from its entries, which must be in git's order ({@link sortTree}). */
export function serializeTree(sorted: readonly TreeEntry[]): Buffer {
  // One buffer, sized first: no small buffer per entry (a root of 1,000 folders is rewritten on
  // every snapshot).
  let size = 0;
  for (const entry of sorted) size += entry.mode.length + Buffer.byteLength(entry.name) + 22;
  const out = Buffer.allocUnsafe(size);
  let at = 0;
  for (const entry of sorted) {
    at += out.write(`${entry.mode} ${entry.name}\0`, at, 'utf8');
    at += out.write(entry.sha, at, 'hex');
  }
  return out;
}

/** Parses a tree object's content. */
export function parseTree(content: Buffer): TreeEntry[] {
  const entries: TreeEntry[] = [];
  let offset = 0;
  while (offset < content.length) {
    const space = content.indexOf(0x20, offset);
    const nul = content.indexOf(0, space);
    if (space < 0 || nul < 0 || nul + 21 > content.length) {
      throw new AgentsError(
        AgentsErrorCode.SandboxFailed,
        'A tree object in the snapshot store is corrupt.',
      );
    }
    entries.push({
      mode: content.toString('latin1', offset, space),
      name: content.toString('utf8', space + 1, nul),
      sha: content.toString('hex', nul + 1, nul + 21),
    });
    offset = nul + 21;
  }
  return entries;
}

/** Most trees kept parsed in memory (a 100,000-file repo in folders of 100 has about 1,000). */
const MAX_CACHED_TREES = 20_000;

/**
 * Reads tree objects through one long-lived `git cat-file --batch`, keeping parsed trees in
 * memory by id (tree ids name their content, so a cached tree is never stale). Trees this
 * process writes go into the cache as they are written, in git's order like those read.
 */
export class TreeReader {
  readonly #git: LongLivedGit;
  readonly #cache = new Map<string, TreeEntry[]>();
  /** Entry positions by name, for the trees a snapshot rewrote (made on first ask). */
  readonly #positions = new Map<string, Map<string, number>>();
  /** Each cached tree's content, so a rewrite that only changes ids can patch a copy. */
  readonly #contents = new Map<string, Buffer>();

  constructor(git: LongLivedGit) {
    this.#git = git;
  }

  /** Keeps a tree's entries (in git's order) by its id. */
  remember(sha: string, entries: TreeEntry[], content?: Buffer): void {
    if (this.#cache.size >= MAX_CACHED_TREES) {
      this.#cache.clear();
      this.#positions.clear();
      this.#contents.clear();
    }
    this.#cache.set(sha, entries);
    if (content !== undefined) this.#contents.set(sha, content);
  }

  /** A tree's entries and each name's position among them. */
  async readIndexed(
    sha: string,
  ): Promise<{ entries: TreeEntry[]; positions: Map<string, number> }> {
    const entries = await this.read(sha);
    let positions = this.#positions.get(sha);
    if (positions === undefined) {
      positions = new Map(entries.map((entry, index) => [entry.name, index]));
      if (this.#positions.size >= MAX_CACHED_TREES) this.#positions.clear();
      this.#positions.set(sha, positions);
    }
    return { entries, positions };
  }

  async read(sha: string): Promise<TreeEntry[]> {
    const cached = this.#cache.get(sha);
    if (cached !== undefined) return cached;
    const content = await this.#object(sha, 'tree');
    const entries = parseTree(content);
    this.remember(sha, entries, content);
    return entries;
  }

  /**
   * The content of cached tree `sha` with the ids of some entries replaced (by position; names
   * and modes unchanged), patched into a copy: a root of 1,000 folders is rewritten on every
   * snapshot, and serialising it again costs ~0.2 ms. Undefined when its content is not kept.
   */
  patched(sha: string, ids: ReadonlyMap<number, string>): Buffer | undefined {
    const content = this.#contents.get(sha);
    if (content === undefined) return undefined;
    const out = Buffer.from(content);
    let offset = 0;
    let index = 0;
    let left = ids.size;
    while (left > 0 && offset < out.length) {
      const nul = out.indexOf(0, offset);
      if (nul < 0) return undefined;
      const id = ids.get(index);
      if (id !== undefined) {
        out.write(id, nul + 1, 'hex');
        left--;
      }
      offset = nul + 21;
      index++;
    }
    return left === 0 ? out : undefined;
  }

  /** A blob's bytes (never cached: a restore writes each once). */
  readBlob(sha: string): Promise<Buffer> {
    return this.#object(sha, 'blob');
  }

  async #object(sha: string, type: 'tree' | 'blob'): Promise<Buffer> {
    const content = await this.#git.request(`${sha}\n`, (out) => {
      const newline = out.indexOf(0x0a);
      if (newline < 0) return undefined;
      const header = out.toString('latin1', 0, newline).split(' ');
      if (header[1] === 'missing' || header.length < 3) {
        return { value: new Error(`object ${sha} is missing`), used: newline + 1 };
      }
      const size = Number(header[2]);
      // Header, content, then one newline.
      if (out.length < newline + 1 + size + 1) return undefined;
      const value =
        header[1] === type
          ? Buffer.from(out.subarray(newline + 1, newline + 1 + size))
          : new Error(`object ${sha} is a ${header[1]}, not a ${type}`);
      return { value, used: newline + 1 + size + 1 };
    });
    if (content instanceof Error) {
      throw new AgentsError(
        AgentsErrorCode.SandboxFailed,
        `Could not read a snapshot ${type}: ${content.message}.`,
        {
          details: { sha },
        },
      );
    }
    return content;
  }

  close(): void {
    this.#git.close();
  }
}
