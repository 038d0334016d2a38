import { closeSync, openSync, watch, writeSync, type FSWatcher } from 'node:fs';
import { lstat, mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Most changed paths one snapshot takes from the watcher. Past it the change set is treated as
 * unknown (full scan): inotify drops events silently when its queue overflows (libuv does not
 * report `IN_Q_OVERFLOW`), and a burst this large is where that could happen.
 */
export const MAX_WATCHED_CHANGES = 5_000;
/** The marker file {@link TreeWatcher.settle} writes to, in a folder of the watcher's own. */
const MARKER_NAME = 'marker';
const MARKER_BYTE = Buffer.from('m');
/** How long {@link TreeWatcher.settle} waits for its own marker event before giving up. */
const SETTLE_TIMEOUT_MS = 2_000;

/** What changed since the last {@link TreeWatcher.take}, or why that is not known. */
export type WatchedChanges = { paths: string[]; renamed: Set<string> } | { unknown: string };

/**
 * Watches the folders of a sandbox tree (one non-recursive `fs.watch`, an inotify watch, per
 * folder; all share one inotify queue) and collects the paths that changed, so a snapshot
 * re-reads only those. Ignored folders (`node_modules`) are never watched. The watcher only
 * says where to look: a snapshot re-reads every named path from disk, so a spurious or stale
 * name costs a `lstat`, never a wrong tree. When events may have been missed (a watch failed, too
 * many at once, the marker never came back) the change set is unknown and the snapshot scans.
 */
export class TreeWatcher {
  readonly #root: string;
  readonly #markerDir: string;
  readonly #watches = new Map<string, { watcher: FSWatcher; ino: number }>();
  #changed = new Set<string>();
  /** Paths with a `rename` event (made, deleted or moved), not just written or chmod'ed. */
  #renamed = new Set<string>();
  #unknown: string | undefined;
  #marker: FSWatcher | undefined;
  /** The marker file, open for writing: one byte rewritten per settle (an IN_MODIFY event). */
  #markerFd: number | undefined;
  #waiting: (() => void) | undefined;
  #closed = false;

  /** `markerDir`: a folder of our own (outside the tree) for {@link settle}'s marker files. */
  constructor(root: string, markerDir: string) {
    this.#root = root;
    this.#markerDir = markerDir;
  }

  /** Starts the marker watch; false when this system cannot watch at all. */
  async open(): Promise<boolean> {
    await rm(this.#markerDir, { recursive: true, force: true });
    await mkdir(this.#markerDir, { recursive: true });
    try {
      this.#markerFd = openSync(join(this.#markerDir, MARKER_NAME), 'w');
      this.#marker = watch(this.#markerDir, { persistent: false }, (_event, name) => {
        if (name !== null && String(name) === MARKER_NAME) this.#waiting?.();
      });
      this.#marker.on('error', () => this.#markUnknown('the marker watch failed'));
      return true;
    } catch {
      return false;
    }
  }

  /** Is `dir` (relative; `''` for the root) watched, as the same folder (inode) it is now? */
  isWatched(dir: string, ino: number): boolean {
    return this.#watches.get(dir)?.ino === ino;
  }

  /**
   * Watches one folder (relative to the root; `''` for the root). Call it before reading the
   * folder, so nothing made in between is missed. A folder watched before under this name (a
   * stale watch: the name now holds another folder) is unwatched first, with everything under it.
   */
  attach(dir: string, ino: number): void {
    if (this.#closed || this.#unknown !== undefined) return;
    if (this.isWatched(dir, ino)) return;
    this.forget(dir);
    try {
      const watcher = watch(
        join(this.#root, dir),
        { persistent: false, encoding: 'utf8' },
        (event, name) => this.#record(dir, event, name),
      );
      watcher.on('error', () => this.#markUnknown(`the watch on "${dir || '.'}" failed`));
      this.#watches.set(dir, { watcher, ino });
    } catch (error) {
      // ENOSPC: the inotify watch limit (fs.inotify.max_user_watches) is reached.
      this.#markUnknown(
        `could not watch "${dir || '.'}" (${(error as NodeJS.ErrnoException).code ?? String(error)})`,
      );
    }
  }

  /** Unwatches `dir` and every folder under it (it was deleted, or replaced). */
  forget(dir: string): void {
    const prefix = dir === '' ? '' : `${dir}/`;
    for (const [path, { watcher }] of this.#watches) {
      if (path === dir || path.startsWith(prefix)) {
        watcher.close();
        this.#watches.delete(path);
      }
    }
  }

  /**
   * Resolves once every event that happened before the call has been recorded: writes a marker
   * file in a watched folder of our own and waits for its event. inotify queues the events of
   * every watch of the process in one queue, in order, so the tool's writes (done before it
   * answered) come first. A marker that never comes back makes the change set unknown.
   */
  async settle(): Promise<void> {
    const fd = this.#markerFd;
    if (this.#marker === undefined || fd === undefined || this.#unknown !== undefined) return;
    const seen = new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), SETTLE_TIMEOUT_MS);
      this.#waiting = () => {
        clearTimeout(timer);
        // Resolved from the next turn of the event loop, never from inside the watch callback:
        // libuv reads inotify events until none is left, so a caller whose next snapshot
        // (synchronous up to its own marker write) ran from here kept that read going for a
        // whole run of back-to-back snapshots, and no timer, child exit or other I/O was
        // handled meanwhile (the pack roll-up's `git repack` stayed unreaped; issue 38, item 6).
        setImmediate(() => resolve(true));
      };
    });
    // One byte rewritten in place: an event without making or removing a file (two changes to
    // the marker folder per snapshot otherwise). One settle at a time (snapshots are serialised),
    // and a late event after a timeout is harmless: the change set is unknown from then on.
    writeSync(fd, MARKER_BYTE, 0, 1, 0);
    const arrived = await seen;
    this.#waiting = undefined;
    if (!arrived) this.#markUnknown('the watcher did not report its own marker in time');
  }

  /** The paths changed since the last call (or why they are not known), and starts afresh. */
  take(): WatchedChanges {
    const taken: WatchedChanges =
      this.#unknown !== undefined
        ? { unknown: this.#unknown }
        : { paths: [...this.#changed], renamed: this.#renamed };
    this.#changed = new Set();
    this.#renamed = new Set();
    return taken;
  }

  /** True while watching works; false once it failed (only a fresh watcher can recover). */
  get healthy(): boolean {
    return !this.#closed && this.#unknown === undefined;
  }

  close(): void {
    this.#closed = true;
    this.#marker?.close();
    if (this.#markerFd !== undefined) closeSync(this.#markerFd);
    this.#markerFd = undefined;
    for (const { watcher } of this.#watches.values()) watcher.close();
    this.#watches.clear();
  }

  #record(dir: string, event: string, name: string | Buffer | null): void {
    if (name === null) {
      this.#markUnknown('an event without a file name');
      return;
    }
    const text = String(name);
    // The tree's own `.git` is never part of a snapshot.
    if (dir === '' && text === '.git') return;
    const path = dir === '' ? text : `${dir}/${text}`;
    this.#changed.add(path);
    if (event === 'rename') this.#renamed.add(path);
    if (this.#changed.size > MAX_WATCHED_CHANGES)
      this.#markUnknown(`more than ${MAX_WATCHED_CHANGES} paths changed at once`);
  }

  #markUnknown(reason: string): void {
    this.#unknown ??= reason;
  }
}

/** The inode of a folder, or undefined when `path` is not a folder (or is gone). */
export async function folderInode(path: string): Promise<number | undefined> {
  const stats = await lstat(path).catch(() => undefined);
  return stats?.isDirectory() === true ? stats.ino : undefined;
}
