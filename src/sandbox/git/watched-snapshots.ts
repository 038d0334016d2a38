import { mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startGit } from '../git.js';
import { SNAPSHOT_IDENTITY } from '../git-env.js';
import { TreeReader } from './git-objects.js';
import { IgnoreChecker } from './ignore-checker.js';
import { buildTree, type TreeBuildContext } from './incremental-tree.js';
import { diffTrees } from './tree-diff.js';
import { watchTree } from './watch-tree.js';
import { ObjectBatch } from './object-batch.js';
import type { RawTreeChange } from '../raw-tree-diff.js';
import { SNAPSHOT_REF_PREFIX, STORE_DIR, storeEnv, storeGit } from './snapshot-store.js';
import { applyTreeDiff } from './tree-restore.js';
import { TreeWatcher } from './tree-watcher.js';

/**
 * Watched snapshots (issue 29): a snapshot from the watcher's change set instead of a scan of
 * the whole tree. Only the changed paths are read, the new tree is the head tree with their
 * ancestors rewritten, objects, the commit and the ref are written without a git process
 * (`update-ref` is the ref's fallback). `GitSandbox` asks {@link WatchedSnapshots.take} first and
 * scans whenever it answers with a reason instead of a tree.
 */

/** Where a sandbox's watched snapshots live and what they may read. */
export interface WatchedSnapshotsInit {
  root: string;
  runDir: string;
  excludeFile: string;
  timeoutMs: number | undefined;
  maxFileBytes: number;
}

/** A tree built from the watcher's change set: unchanged, or the new tree and its raw diff. */
export type WatchedTree =
  | { unchanged: true }
  | { unchanged: false; tree: string; raw: RawTreeChange[] }
  | { reason: string };

/** What watched snapshots keep running between snapshots. */
interface WatchedState {
  watcher: TreeWatcher;
  context: TreeBuildContext;
  /** `git update-ref --stdin -z`: one transaction per snapshot ref. */
  refs: ReturnType<typeof startGit>;
}

/**
 * Packs in the store past which watched snapshots roll their packs up (`git repack -d
 * --geometric=2`, in the background): git looks an object up pack by pack, so hundreds of small
 * packs would slow every later read of the store.
 */
export const ROLL_UP_PACKS = 32;
/** Wait after a failed roll-up before the next try, doubled with each failure in a row. */
const ROLL_UP_RETRY_MS = 1_000;

/** The watcher and long-lived git processes of one sandbox (started by a full scan). */
export class WatchedSnapshots {
  readonly #init: WatchedSnapshotsInit;
  #state: WatchedState | undefined;
  /** Packs in the store, as last counted plus those written since. */
  #packs = 0;
  /** A roll-up of the store's packs, while one runs (awaited by {@link shutdown}). */
  #rollUp: Promise<void> | undefined;
  /** Roll-ups that failed in a row, and when the next may start (back-off). */
  #failures = 0;
  #retryAt = 0;
  /** Why this sandbox never watches (the system refused a watch); full scans only. */
  #off: string | undefined =
    process.env['AGENTS_SNAPSHOT_SCAN'] === 'full' ? 'AGENTS_SNAPSHOT_SCAN=full' : undefined;

  constructor(init: WatchedSnapshotsInit) {
    this.#init = init;
  }

  /**
   * The tree `add -A` would record now, from `headTree` and the watcher's change set, or why it
   * cannot be known without a scan. The change set is taken either way.
   */
  async take(headTree: string): Promise<WatchedTree> {
    const state = this.#state;
    const idle = this.idleReason();
    if (state === undefined || idle !== undefined) return { reason: idle ?? 'not watching' };
    // A roll-up under way goes on while the tree is read and built; the snapshot waits for it
    // only before it writes its objects (see #flush). Building writes nothing to the store but
    // a file over 1 MiB (a loose object at once), which a roll-up leaves alone: `repack -d`
    // removes only loose objects it finds in a pack.
    await state.watcher.settle();
    const taken = state.watcher.take();
    if ('unknown' in taken) return { reason: `watcher: ${taken.unknown}` };
    if (taken.paths.length === 0) return { unchanged: true };
    const built = await buildTree(state.context, headTree, taken.paths, taken.renamed);
    // The new objects are named, not yet written: a new tree's are written with its commit
    // (one pack per snapshot); otherwise now (harmless, unnamed, as a scan's leftovers).
    if ('scan' in built || built.tree === headTree) await this.#flush(state);
    if ('scan' in built) return { reason: built.scan };
    if (built.tree === headTree) return { unchanged: true };
    const raw = await diffTrees(state.context.trees, headTree, built.tree);
    return { unchanged: false, tree: built.tree, raw };
  }

  /**
   * Writes the objects a build named (before anything that names them), once a roll-up of the
   * store's packs under way has ended: a roll-up never runs while a snapshot writes.
   */
  async #flush(state: WatchedState): Promise<void> {
    await this.#rollUp;
    const before = state.context.objects.packsWritten;
    state.context.objects.flush();
    this.#packs += state.context.objects.packsWritten - before;
  }

  /**
   * Starts a roll-up of the store's packs (`git repack -d --geometric=2`, in the background)
   * when they have piled up: called once a snapshot has written everything (its ref too), and
   * the next snapshot waits for it before it writes (see #flush), so a roll-up never runs while
   * a snapshot writes; it overlaps only the next snapshot's reading and building. A failed
   * roll-up loses nothing (the packs stay); it is tried again after a back-off that doubles
   * with each failure in a row.
   */
  #rollUpIfDue(): void {
    if (this.#packs <= ROLL_UP_PACKS || this.#rollUp !== undefined) return;
    if (Date.now() < this.#retryAt) return;
    const { runDir, root, timeoutMs } = this.#init;
    this.#rollUp = storeGit(
      runDir,
      root,
      ['repack', '-d', '-q', '--geometric=2', '--no-write-bitmap-index'],
      { timeoutMs },
    )
      .then(
        () => true,
        () => false,
      )
      .then((done) => {
        this.#failures = done ? 0 : this.#failures + 1;
        this.#retryAt = done
          ? 0
          : Date.now() + ROLL_UP_RETRY_MS * 2 ** Math.min(this.#failures - 1, 10);
        this.#packs = countPacks(join(runDir, STORE_DIR, 'objects'));
        this.#rollUp = undefined;
      });
  }

  /** Stops watching and waits for a roll-up of the store's packs that is under way. */
  async shutdown(): Promise<void> {
    this.stop();
    await this.#rollUp;
  }

  /** Why no watcher runs now (the next snapshot scans); undefined while watching. */
  idleReason(): string | undefined {
    if (this.#state !== undefined) return undefined;
    return this.#off ?? 'first snapshot of this sandbox in this process';
  }

  /** Writes the snapshot commit of `tree` on `parent` and its ref; resolves to its sha. */
  async commit(tree: string, parent: string, label: string): Promise<string> {
    const state = this.#state;
    if (state === undefined) throw new Error('watched snapshots are not running');
    const now = Math.floor(Date.now() / 1000);
    const who = `${SNAPSHOT_IDENTITY.GIT_COMMITTER_NAME} <${SNAPSHOT_IDENTITY.GIT_COMMITTER_EMAIL}> ${now} +0000`;
    const sha = state.context.objects.add(
      'commit',
      Buffer.from(
        `tree ${tree}\nparent ${parent}\nauthor ${who}\ncommitter ${who}\n\n${label || 'snapshot'}\n`,
      ),
    );
    // The snapshot's objects (with its trees and blobs, named by take()), then its ref.
    await this.#flush(state);
    await this.keepRef(sha);
    this.#rollUpIfDue();
    return sha;
  }

  /**
   * Writes (or rewrites) `refs/snapshots/<sha>`: as a loose ref file the way git's files
   * backend does (see {@link writeLooseRef}), else through the long-lived `update-ref`.
   */
  async keepRef(sha: string): Promise<void> {
    const state = this.#state;
    if (state === undefined) throw new Error('watched snapshots are not running');
    if (writeLooseRef(join(this.#init.runDir, STORE_DIR), sha)) return;
    await state.refs.request(
      `start\0update ${SNAPSHOT_REF_PREFIX}/${sha}\0${sha}\0\0commit\0`,
      (out) => {
        const text = out.toString('utf8');
        const end = text.indexOf('commit: ok\n');
        return end < 0
          ? undefined
          : { value: undefined, used: Buffer.byteLength(text.slice(0, end + 11)) };
      },
    );
  }

  /**
   * The raw diff between two snapshot trees, or undefined when not watching (its tree reader
   * runs with the watcher). Only folders whose ids differ are read.
   */
  async diff(from: string, to: string): Promise<RawTreeChange[] | undefined> {
    const state = this.#state;
    return state === undefined ? undefined : diffTrees(state.context.trees, from, to);
  }

  /** Makes the tree on disk, equal to `from`, equal to `to` (see tree-restore.ts). */
  async apply(raw: readonly RawTreeChange[]): Promise<void> {
    const state = this.#state;
    if (state === undefined) throw new Error('watched snapshots are not running');
    await applyTreeDiff(this.#init.root, raw, state.context.trees);
  }

  /** Starts watching the tree for the next snapshots (no-op when this sandbox cannot watch). */
  async start(headTree: string): Promise<void> {
    // A full scan follows: it writes objects too, so a roll-up under way ends first.
    await this.#rollUp;
    if (this.#off !== undefined) return;
    const { root, runDir, excludeFile, timeoutMs, maxFileBytes } = this.#init;
    const env = storeEnv(runDir, root);
    const start = (args: string[]) =>
      startGit(args, { cwd: root, env, ...(timeoutMs === undefined ? {} : { timeoutMs }) });
    const watcher = new TreeWatcher(root, join(runDir, 'watch'));
    if (!(await watcher.open())) {
      this.#off = 'this system cannot watch folders';
      return;
    }
    const objectsDir = join(runDir, STORE_DIR, 'objects');
    if (this.#rollUp === undefined) this.#packs = countPacks(objectsDir);
    const context: TreeBuildContext = {
      root,
      objects: new ObjectBatch(objectsDir),
      trees: new TreeReader(start(['cat-file', '--batch'])),
      ignore: new IgnoreChecker(
        start([
          '-c',
          `core.excludesFile=${excludeFile}`,
          'check-ignore',
          '--stdin',
          '-z',
          '-v',
          '-n',
          '--no-index',
        ]),
      ),
      watcher,
      maxFileBytes,
    };
    this.#state = { watcher, context, refs: start(['update-ref', '--stdin', '-z']) };
    const refused = await watchTree(context, headTree).catch((error: unknown) =>
      error instanceof Error ? error.message : String(error),
    );
    if (refused !== undefined) {
      this.stop();
      // Out of inotify watches: every later try would fail the same way.
      if (/ENOSPC|EMFILE/.test(refused)) this.#off = `cannot watch the tree (${refused})`;
    }
  }

  stop(): void {
    const state = this.#state;
    this.#state = undefined;
    if (state === undefined) return;
    state.watcher.close();
    state.context.trees.close();
    state.context.ignore.close();
    state.refs.close();
  }
}

/** The packs in an objects folder (0 when it has none). */
function countPacks(objectsDir: string): number {
  try {
    return readdirSync(join(objectsDir, 'pack')).filter((name) => name.endsWith('.idx')).length;
  } catch {
    return 0;
  }
}

/**
 * Writes `refs/snapshots/<sha>` (holding `<sha>`) as git's files backend does, without a git
 * process: the lock file `<ref>.lock` made exclusively (so a git holding the lock is never
 * overwritten), then renamed onto the ref. A snapshot ref names its own sha, so its value never
 * changes and there is no old value to check; the store keeps no reflog (a bare repository).
 * False when that cannot be done here (a lock held, an odd sha, no files backend): then
 * `update-ref` writes it.
 */
export function writeLooseRef(gitDir: string, sha: string): boolean {
  if (!/^[0-9a-f]{40}$/.test(sha)) return false;
  const refs = join(gitDir, 'refs');
  const dir = join(refs, 'snapshots');
  const lock = join(dir, `${sha}.lock`);
  let locked = false;
  try {
    // A store without a `refs` folder is not one the files backend made: leave it to git.
    if (!statSync(refs).isDirectory()) return false;
    mkdirSync(dir, { recursive: true });
    writeFileSync(lock, `${sha}\n`, { flag: 'wx' });
    locked = true;
    renameSync(lock, join(dir, sha));
    return true;
  } catch {
    if (locked) rmSync(lock, { force: true });
    return false;
  }
}

/**
 * Paths whose private-index entry lags the head tree (watched snapshots write trees, not the
 * index): their head entry, or null when the head lacks them. Written to the index before any
 * command that reads it (a full scan, a restore).
 */
export class IndexLag {
  readonly #behind = new Map<string, { mode: string; sha: string } | null>();

  /** Notes one snapshot's changes (made without the index). */
  record(raw: readonly RawTreeChange[]): void {
    for (const change of raw) {
      this.#behind.set(
        change.path,
        change.status === 'D' ? null : { mode: change.dstMode, sha: change.dstSha },
      );
    }
  }

  /** Brings the private index up to the head tree for the paths recorded. */
  async sync(
    runDir: string,
    root: string,
    options: { signal: AbortSignal | undefined; timeoutMs: number | undefined },
  ): Promise<void> {
    if (this.#behind.size === 0) return;
    const zero = '0'.repeat(40);
    const removals: string[] = [];
    const additions: string[] = [];
    for (const [path, entry] of this.#behind) {
      if (entry === null) removals.push(`0 ${zero}\t${path}\0`);
      else additions.push(`${entry.mode} ${entry.sha}\t${path}\0`);
    }
    // Removals first: a path that became a folder (or the reverse) must leave before its
    // replacement comes in. Entries come without stat data, so the next `add -A` re-reads
    // just these files.
    await storeGit(runDir, root, ['update-index', '-z', '--index-info'], {
      ...options,
      input: [...removals, ...additions].join(''),
    });
    this.#behind.clear();
  }
}
