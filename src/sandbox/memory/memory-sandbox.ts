import { createHash } from 'node:crypto';
import {
  chmod,
  lstat,
  mkdir,
  readdir,
  readFile,
  readlink,
  rm,
  rmdir,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import type { ChangedPath } from '../../core/change-record.js';
import { AgentsError, AgentsErrorCode, errorMessage } from '../../errors.js';
import type { RunSandbox, SnapshotEntry, SnapshotStore } from '../backend.js';
import { createPathMap, type SandboxPathMap } from '../path-map.js';
import type { RawTreeChange } from '../raw-tree-diff.js';
import type { RestoreResult, Snapshot } from '../types.js';

/** A file of a snapshot: git-style mode and the id of its bytes (a symlink's bytes: its target). */
interface Entry {
  mode: '100644' | '100755' | '120000';
  id: string;
}
type Tree = ReadonlyMap<string, Entry>;

/** Everything of one sandbox that outlives a handle (kept until the sandbox is removed). */
export interface MemoryState {
  id: string;
  container: string;
  root: string;
  source: string;
  base: string;
  head: string;
  blobs: Map<string, Buffer>;
  snapshots: Map<string, Tree>;
  /** A handle has it open (a second open would race its snapshots). */
  open: boolean;
}

/** Sandboxes of this process by container: what `open` and `list` find. */
export const STATES = new Map<string, MemoryState>();

/** Git's blob id of `bytes`, so ids read the same as the git backend's. */
function blobId(bytes: Buffer): string {
  return createHash('sha1').update(`blob ${bytes.length}\0`).update(bytes).digest('hex');
}

function sameEntry(a: Entry | undefined, b: Entry | undefined): boolean {
  return a?.mode === b?.mode && a?.id === b?.id;
}

const ABSENT_ID = '0'.repeat(40);

/** What differs between two trees, sorted by path, with both modes and ids (`000000` when absent). */
function diffTrees(from: Tree, to: Tree, paths?: readonly string[]): RawTreeChange[] {
  const keep = (path: string) =>
    paths === undefined ||
    paths.length === 0 ||
    paths.some((p) => {
      const prefix = p.replace(/^\.\/+/, '').replace(/\/+$/, '');
      return prefix === '' || path === prefix || path.startsWith(`${prefix}/`);
    });
  const changes: RawTreeChange[] = [];
  for (const path of [...new Set([...from.keys(), ...to.keys()])].sort()) {
    const a = from.get(path);
    const b = to.get(path);
    if (sameEntry(a, b) || !keep(path)) continue;
    changes.push({
      status: a === undefined ? 'A' : b === undefined ? 'D' : 'M',
      path,
      srcMode: a?.mode ?? '000000',
      dstMode: b?.mode ?? '000000',
      srcSha: a?.id ?? ABSENT_ID,
      dstSha: b?.id ?? ABSENT_ID,
    });
  }
  return changes;
}

function toChanged(changes: RawTreeChange[]): ChangedPath[] {
  return changes.map(({ status, path }) => ({ status: status as ChangedPath['status'], path }));
}

/**
 * Reads the tree at `root` into `blobs`: regular files (executable bit kept) and symlinks (by
 * target); `.git` entries are left out at every depth, as git leaves them out of a snapshot.
 */
export async function readTree(
  root: string,
  blobs: Map<string, Buffer>,
): Promise<Map<string, Entry>> {
  const tree = new Map<string, Entry>();
  async function walk(dir: string): Promise<void> {
    for (const item of await readdir(dir, { withFileTypes: true })) {
      if (item.name === '.git') continue;
      const full = join(dir, item.name);
      const path = relative(root, full).split(sep).join('/');
      let bytes: Buffer;
      let mode: Entry['mode'];
      if (item.isSymbolicLink()) {
        bytes = Buffer.from(await readlink(full));
        mode = '120000';
      } else if (item.isDirectory()) {
        await walk(full);
        continue;
      } else if (item.isFile()) {
        bytes = await readFile(full);
        mode = ((await lstat(full)).mode & 0o111) === 0 ? '100644' : '100755';
      } else continue; // sockets, FIFOs: not files a snapshot can hold
      const id = blobId(bytes);
      blobs.set(id, bytes);
      tree.set(path, { mode, id });
    }
  }
  await walk(root);
  return tree;
}

/**
 * A sandbox whose tree is a plain copy of the user's folder and whose snapshots are kept in
 * this process's memory (a map of path → bytes per snapshot). No git anywhere: it is the second
 * backend that keeps the {@link SandboxBackend} seam honest, and a fast choice for tests and
 * short-lived runs that need no resume in another process and no shared store.
 */
export class MemorySandbox implements RunSandbox {
  readonly backend = 'memory';
  readonly kind = 'folder' as const;
  readonly sourceCommit = undefined;
  readonly baseOrigin = { from: 'folder' as const };
  readonly baseWarnings = [];
  readonly paths: SandboxPathMap;
  readonly store: SnapshotStore;
  readonly #state: MemoryState;
  #queue: Promise<unknown> = Promise.resolve();
  #listener: ((sha: string) => void) | undefined;
  #closing: Promise<void> | undefined;

  constructor(state: MemoryState) {
    this.#state = state;
    this.paths = createPathMap(state.root, { aliases: [state.source] });
    this.store = memoryStore(state);
  }

  get id(): string {
    return this.#state.id;
  }
  get root(): string {
    return this.#state.root;
  }
  get source(): string {
    return this.#state.source;
  }
  get container(): string {
    return this.#state.container;
  }
  get base(): string {
    return this.#state.base;
  }
  get head(): string {
    return this.#state.head;
  }

  skippedPaths() {
    return [];
  }

  onSnapshotCommit(listener: ((sha: string) => void) | undefined): void {
    this.#listener = listener;
  }

  snapshot(label: string): Promise<Snapshot> {
    return this.#exclusive(() => this.#snapshot(label));
  }

  async diff(from: string, to: string): Promise<ChangedPath[]> {
    this.#assertOpen();
    return toChanged(diffTrees(this.#tree(from), this.#tree(to)));
  }

  restore(sha: string): Promise<RestoreResult> {
    return this.#exclusive(async () => {
      const target = this.#tree(sha);
      const safety = await this.#snapshot(`before restore to ${sha}`);
      const current = this.#tree(safety.sha);
      const changes = diffTrees(current, target);
      const root = this.#state.root;
      // Deletions first (deepest first), so a file can become a folder and back.
      for (const change of [...changes].reverse()) {
        if (change.dstMode !== '000000') continue;
        await rm(join(root, change.path), { force: true });
        await removeEmptyParents(root, change.path);
      }
      for (const change of changes) {
        if (change.dstMode === '000000') continue;
        const full = join(root, change.path);
        const bytes = this.#state.blobs.get(change.dstSha)!;
        await rm(full, { recursive: true, force: true });
        await mkdir(dirname(full), { recursive: true });
        if (change.dstMode === '120000') await symlink(bytes.toString(), full);
        else {
          await writeFile(full, bytes);
          await chmod(full, change.dstMode === '100755' ? 0o755 : 0o644);
        }
      }
      this.#state.head = sha;
      return { safety, changed: toChanged(changes) };
    });
  }

  close(options: { remove?: boolean } = {}): Promise<void> {
    const remove = options.remove ?? true;
    this.#closing ??= this.#queue
      .catch(() => undefined)
      .then(async () => {
        this.#state.open = false;
        if (remove) await removeState(this.#state);
      });
    return this.#closing;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  async #snapshot(label: string): Promise<Snapshot> {
    this.#assertOpen();
    const state = this.#state;
    const parent = state.head;
    const tree = await readTree(state.root, state.blobs);
    const changes = diffTrees(this.#tree(parent), tree);
    if (changes.length === 0) return { sha: parent, parent, changed: [], scan: 'full' };
    const listing = [...tree].map(([path, { mode, id }]) => `${mode} ${id}\t${path}`).join('\0');
    const sha = createHash('sha1')
      .update(`${parent}\0${label}\0${state.snapshots.size}\0${listing}`)
      .digest('hex');
    state.snapshots.set(sha, tree);
    state.head = sha;
    this.#listener?.(sha);
    return { sha, parent, changed: toChanged(changes), scan: 'full' };
  }

  #tree(sha: string): Tree {
    const tree = this.#state.snapshots.get(sha);
    if (tree === undefined) {
      throw new AgentsError(
        AgentsErrorCode.CheckpointNotFound,
        `"${sha}" is not a snapshot of sandbox "${this.id}"; list the thread's checkpoints to pick one.`,
        { details: { sandboxId: this.id, rev: sha } },
      );
    }
    return tree;
  }

  #assertOpen(): void {
    if (this.#closing !== undefined) {
      throw new AgentsError(AgentsErrorCode.SandboxFailed, `Sandbox "${this.id}" is closed.`, {
        details: { sandboxId: this.id },
      });
    }
  }

  #exclusive<T>(work: () => Promise<T>): Promise<T> {
    const run = this.#queue.catch(() => undefined).then(work);
    this.#queue = run;
    return run;
  }
}

/** Removes `path`'s parent folders inside `root` that the removal left empty. */
async function removeEmptyParents(root: string, path: string): Promise<void> {
  for (let dir = dirname(path); dir !== '.' && dir !== ''; dir = dirname(dir)) {
    try {
      await rmdir(join(root, dir));
    } catch {
      return; // not empty (or already gone): the folders above are not empty either
    }
  }
}

function memoryStore(state: MemoryState): SnapshotStore {
  const tree = (sha: string): Tree => {
    const found = state.snapshots.get(sha);
    if (found === undefined) {
      throw new AgentsError(
        AgentsErrorCode.CheckpointNotFound,
        `"${sha}" is not a snapshot of sandbox "${state.id}".`,
        { details: { sandboxId: state.id, rev: sha } },
      );
    }
    return found;
  };
  return {
    backend: 'memory',
    location: `memory:${state.container}`,
    recordsDir: join(state.container, 'records'),
    async resolve(rev) {
      const found = [...state.snapshots.keys()].filter((sha) => sha.startsWith(rev));
      return found.length === 1 ? found[0] : undefined;
    },
    async listTree(snapshot) {
      return [...tree(snapshot)]
        .map(([path, { mode, id }]): SnapshotEntry => ({ path, mode, id }))
        .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    },
    async readFile(snapshot, path) {
      const entry = tree(snapshot).get(path);
      return entry === undefined ? undefined : state.blobs.get(entry.id);
    },
    async readBlob(id) {
      const bytes = state.blobs.get(id);
      if (bytes === undefined) {
        throw new AgentsError(
          AgentsErrorCode.SandboxFailed,
          `Sandbox "${state.id}" holds no file content ${id}.`,
          { details: { sandboxId: state.id, id } },
        );
      }
      return bytes;
    },
    async diff(from, to, options) {
      return diffTrees(tree(from), tree(to), options?.paths);
    },
  };
}

export async function removeState(state: MemoryState): Promise<void> {
  STATES.delete(state.container);
  try {
    await rm(state.container, { recursive: true, force: true });
  } catch (error) {
    throw new AgentsError(
      AgentsErrorCode.SandboxFailed,
      `Sandbox "${state.id}" was not fully removed (${state.container}): ${errorMessage(error)}`,
      { cause: error, details: { sandboxId: state.id } },
    );
  }
}
