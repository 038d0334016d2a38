import { lstat } from 'node:fs/promises';
import { join, posix } from 'node:path';
import type { ChangedPath } from '../core/change-record.js';

/** Mode git gives a nested repository (gitlink) in a tree. */
const GITLINK_MODE = '160000';
/** Most tracked folders checked for a stray `.git` in one full scan. */
const MAX_SCANNED_DIRS = 20_000;
/** lstat calls in flight at once during a scan. */
const SCAN_CONCURRENCY = 32;

/** A `.git` found inside a sandbox tree (not the sandbox's own). */
export interface NestedRepo {
  /** Logical path of the folder holding the `.git`. */
  path: string;
  /**
   * `repository`: a nested repo or submodule, stored as a gitlink, so its files are not
   * captured; `git-file` / `git-dir`: a `.git` file or folder git does not treat as a repo
   * (it skips it, so that `.git` is not captured either).
   */
  kind: 'repository' | 'git-file' | 'git-dir';
}

/** One line of `diff-tree --raw`: the change plus both modes. */
export interface RawChange extends ChangedPath {
  srcMode: string;
  dstMode: string;
}

/**
 * Keeps the set of nested repos (and stray `.git` entries) in a sandbox tree current, cheaply:
 * one full scan per run ({@link NestedRepoTracker.scan}, over the tracked folders of a tree,
 * so ignored folders such as `node_modules` are never walked), then per snapshot only the
 * folders the raw diff touched. Nothing is ever renamed or moved.
 */
export class NestedRepoTracker {
  readonly #root: string;
  readonly #found = new Map<string, NestedRepo['kind']>();

  constructor(root: string) {
    this.#root = root;
  }

  /** The nested repos known now, sorted by path. */
  list(): NestedRepo[] {
    return [...this.#found]
      .map(([path, kind]) => ({ path, kind }))
      .sort((a, b) => a.path.localeCompare(b.path));
  }

  /** Takes the set as recorded earlier (the sandbox marker's, for the same head). */
  load(repos: readonly NestedRepo[]): void {
    this.#found.clear();
    for (const { path, kind } of repos) this.#found.set(path, kind);
  }

  /**
   * Full scan from `git ls-tree -r -t -z <tree>` output: gitlinks are nested repos; each
   * tracked folder (up to a bound) is checked for a stray `.git`.
   */
  async scan(lsTreeOutput: string): Promise<void> {
    this.#found.clear();
    const dirs: string[] = [];
    for (const record of lsTreeOutput.split('\0')) {
      const tab = record.indexOf('\t');
      if (tab < 0) continue;
      const [mode, type] = record.slice(0, tab).split(' ');
      const path = record.slice(tab + 1);
      if (mode === GITLINK_MODE || type === 'commit') this.#found.set(path, 'repository');
      else if (type === 'tree' && dirs.length < MAX_SCANNED_DIRS) dirs.push(path);
    }
    await this.#probe(dirs);
  }

  /** Updates the set from one snapshot's raw diff. */
  async update(changes: readonly RawChange[]): Promise<void> {
    const probe = new Set<string>();
    for (const change of changes) {
      if (change.dstMode === GITLINK_MODE && change.status !== 'D') {
        this.#found.set(change.path, 'repository');
      } else if (change.srcMode === GITLINK_MODE) {
        this.#found.delete(change.path);
      }
      if (change.status === 'A') {
        const dir = posix.dirname(change.path);
        if (dir !== '.') probe.add(dir);
      }
    }
    // Strays seen before may be gone now; re-check them with the touched folders.
    for (const [path, kind] of this.#found) if (kind !== 'repository') probe.add(path);
    await this.#probe([...probe]);
  }

  async #probe(dirs: readonly string[]): Promise<void> {
    for (let start = 0; start < dirs.length; start += SCAN_CONCURRENCY) {
      await Promise.all(
        dirs.slice(start, start + SCAN_CONCURRENCY).map(async (dir) => {
          if (this.#found.get(dir) === 'repository') return;
          try {
            const stats = await lstat(join(this.#root, ...dir.split('/'), '.git'));
            this.#found.set(dir, stats.isDirectory() ? 'git-dir' : 'git-file');
          } catch {
            this.#found.delete(dir);
          }
        }),
      );
    }
  }
}

/** Human-readable warnings for nested repos, as put on a snapshot. */
export function nestedRepoWarnings(repos: readonly NestedRepo[]): string[] {
  return repos.map((repo) =>
    repo.kind === 'repository'
      ? `"${repo.path}" is a nested git repository or submodule: it is recorded as a gitlink only, so its files are not captured and a restore will not bring them back.`
      : `"${repo.path}/.git" is a ${repo.kind === 'git-file' ? '.git file' : '.git folder'} that git does not treat as a repository; git skips it, so it is not captured.`,
  );
}
