import { lstat } from 'node:fs/promises';
import { isAbsolute, join, relative, sep } from 'node:path';

/**
 * Why git refuses to record a path: `git-name` — a name git treats as `.git` on some platform
 * (`.git.`, `.git `, `GIT~1`, …; git refuses them everywhere so a checkout on Windows or macOS
 * can never write into a `.git`); `empty-repo` — a nested repository with no commit yet, which
 * has no gitlink to record; `special-file` — a fifo git blocked opening under a name it reads
 * (`.gitignore`, a nested repo's `.git/HEAD`): it was let through as an empty file (see
 * host-git-watch.ts), and git never records a fifo.
 */
export type UnrecordableReason = 'git-name' | 'empty-repo' | 'special-file';

const INVALID_PATH = /^error: invalid path '(.+)'$/gm;
const EMPTY_REPO = /^error: '(.+?)\/?' does not have a commit checked out$/gm;

/**
 * The paths the snapshot's `add -A` must leave out, learnt from git's own refusals. Without
 * this, one such path makes every later `add -A` fail, and nothing is recorded at all. Each is
 * left out (with a warning) while it exists; nothing is renamed or deleted.
 */
export class UnrecordablePaths {
  readonly #root: string;
  readonly #found = new Map<string, UnrecordableReason>();

  constructor(root: string) {
    this.#root = root;
  }

  /** Pathspec arguments for `add -A`: everything but the refused paths (none: no arguments). */
  pathspec(): string[] {
    const refused = [...this.#found].filter(([, reason]) => reason !== 'special-file');
    if (refused.length === 0) return [];
    return ['--', '.', ...refused.map(([path]) => `:(exclude,literal)${path}`)];
  }

  /**
   * Learns the paths a failed `add -A` refused, from its stderr (git stops at the first one, so
   * several runs may be needed). Returns false when the failure was something else.
   */
  learn(stderr: string): boolean {
    let learnt = false;
    for (const [pattern, reason] of [
      [INVALID_PATH, 'git-name'],
      [EMPTY_REPO, 'empty-repo'],
    ] as const) {
      for (const match of stderr.matchAll(pattern)) {
        const path = match[1]!.replace(/\/$/, '');
        if (!this.#found.has(path)) learnt = true;
        this.#found.set(path, reason);
      }
    }
    return learnt;
  }

  /** Notes a fifo git was let through (an absolute path; one outside the tree is ignored). */
  noteSpecialFile(absolute: string): void {
    const path = relative(this.#root, absolute);
    if (path === '' || path.startsWith('..') || isAbsolute(path)) return;
    this.#found.set(path.split(sep).join('/'), 'special-file');
  }

  /**
   * Forgets paths that are gone, so they are recorded normally once they come back fixed. An
   * empty repository is forgotten once it has no `.git` either: git can take a folder for one
   * for a moment (a process swapping it for a symlink while `add -A` reads it, issue 35 item
   * 5), and it must not stay out of every later snapshot for that.
   */
  async forgetMissing(): Promise<void> {
    for (const [path, reason] of [...this.#found]) {
      const absolute = join(this.#root, ...path.split('/'));
      const exists = await lstat(reason === 'empty-repo' ? join(absolute, '.git') : absolute).then(
        (stats) => reason !== 'special-file' || stats.isFIFO(),
        () => false,
      );
      if (!exists) this.#found.delete(path);
    }
  }

  /** The refused paths and why, sorted by path. */
  list(): Array<{ path: string; reason: UnrecordableReason }> {
    return [...this.#found]
      .map(([path, reason]) => ({ path, reason }))
      .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  }

  /** Human-readable warnings, as put on a snapshot. */
  warnings(): string[] {
    return [...this.#found].map(([path, reason]) =>
      reason === 'git-name'
        ? `"${path}" is a name git refuses to record (it stands for ".git" on Windows or macOS); it is left out of snapshots and restores.`
        : reason === 'empty-repo'
          ? `"${path}" is a nested git repository with no commit yet; it is left out of snapshots until it is removed.`
          : `"${path}" is a fifo where git reads a file; the snapshot read it as empty and did not record it.`,
    );
  }
}
