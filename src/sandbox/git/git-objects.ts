import { createHash } from 'node:crypto';
import { existsSync, linkSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
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
 * copy is not looked for, a second loose copy is harmless). Written to a temp file, then linked
 * into place, so a reader never sees half an object. Synchronous file calls on purpose: a
 * snapshot writes a handful of small objects one after another, and each promise-based call
 * costs a thread-pool round trip (most of a watched snapshot's time on a loaded machine).
 */
export async function writeObject(
  objectsDir: string,
  type: string,
  content: Buffer,
): Promise<string> {
  const sha = objectId(type, content);
  const dir = join(objectsDir, sha.slice(0, 2));
  const file = join(dir, sha.slice(2));
  if (existsSync(file)) return sha;
  mkdirSync(dir, { recursive: true });
  const temp = join(dir, `tmp_obj_${process.pid}_${Math.random().toString(36).slice(2)}`);
  writeFileSync(
    temp,
    deflateSync(Buffer.concat([Buffer.from(`${type} ${content.length}\0`), content]), { level: 1 }),
    { mode: 0o444 },
  );
  try {
    linkSync(temp, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    rmSync(temp, { force: true });
  }
  return sha;
}

/** The bytes git sorts a tree entry by: its name, a tree's as if it ended in `/`. */
function sortKey(entry: TreeEntry): Buffer {
  return Buffer.from(entry.mode === TREE_MODE ? `${entry.name}/` : entry.name);
}

/** Git's order of tree entries: by name bytes, a tree's name compared as if it ended in `/`. */
export function compareEntries(a: TreeEntry, b: TreeEntry): number {
  return Buffer.compare(sortKey(a), sortKey(b));
}

/** A tree object's content from its entries (sorted here). */
export function serializeTree(entries: readonly TreeEntry[]): Buffer {
  // One key per entry, not two per comparison (a root tree of 1,000 folders sorts in ~10,000).
  const keyed = entries.map((entry) => ({ entry, key: sortKey(entry) }));
  keyed.sort((a, b) => Buffer.compare(a.key, b.key));
  const parts: Buffer[] = [];
  for (const { entry } of keyed) {
    parts.push(Buffer.from(`${entry.mode} ${entry.name}\0`), Buffer.from(entry.sha, 'hex'));
  }
  return Buffer.concat(parts);
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
 * process writes go into the cache as they are written.
 */
export class TreeReader {
  readonly #git: LongLivedGit;
  readonly #cache = new Map<string, TreeEntry[]>();

  constructor(git: LongLivedGit) {
    this.#git = git;
  }

  remember(sha: string, entries: TreeEntry[]): void {
    if (this.#cache.size >= MAX_CACHED_TREES) this.#cache.clear();
    this.#cache.set(sha, entries);
  }

  async read(sha: string): Promise<TreeEntry[]> {
    const cached = this.#cache.get(sha);
    if (cached !== undefined) return cached;
    const entries = parseTree(await this.#object(sha, 'tree'));
    this.remember(sha, entries);
    return entries;
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
