import { lstatSync, realpathSync } from 'node:fs';
import { basename, dirname, join, sep } from 'node:path';
import { AgentsError } from '../errors.js';
import { isGitComponent } from './path-spelling.js';

/** Most entries a link-check cache holds; it starts over when full (paths come from models). */
const LINK_CACHE_LIMIT = 4096;

function remember(set: Set<string>, value: string): void {
  if (set.size >= LINK_CACHE_LIMIT) set.clear();
  set.add(value);
}

/**
 * What the path map may reuse while the tree does not change (see `SandboxPathMap.trackWrites`).
 * `checkedPaths`: relative paths whose whole symlink walk passed; `realEntries`: absolute real
 * paths seen to exist and not be symlinks; `mappedPaths`: whole answers of `toSandbox` by input
 * string, so a read-only call that names a path seen before costs one lookup. All three are
 * only read and written while caching is on and no write is in flight, and all are dropped at
 * the start and end of every write, so a link created by a write is always seen.
 */
export class PathCheckCache {
  #on = false;
  #writesInFlight = 0;
  readonly checkedPaths = new Set<string>();
  readonly realEntries = new Set<string>();
  readonly #mappedPaths = new Map<string, string>();

  /** Whether answers may be cached and reused right now. */
  get usable(): boolean {
    return this.#on && this.#writesInFlight === 0;
  }

  /** Turns caching on (the caller announces every change to the tree from now on). */
  turnOn(): void {
    this.#on = true;
  }

  mapped(input: string): string | undefined {
    return this.#mappedPaths.get(input);
  }

  rememberMapping(input: string, mapped: string): void {
    if (this.#mappedPaths.size >= LINK_CACHE_LIMIT) this.#mappedPaths.clear();
    this.#mappedPaths.set(input, mapped);
  }

  rememberChecked(rel: string): void {
    remember(this.checkedPaths, rel);
  }

  rememberReal(path: string): void {
    remember(this.realEntries, path);
  }

  invalidate(): void {
    // Twice per write-class call: clear() allocates a fresh table, so skip empty ones.
    if (this.checkedPaths.size > 0) this.checkedPaths.clear();
    if (this.realEntries.size > 0) this.realEntries.clear();
    if (this.#mappedPaths.size > 0) this.#mappedPaths.clear();
  }

  /** A write begins: drop everything now and when the returned (idempotent) `end` is called. */
  beginWrite(): () => void {
    this.#writesInFlight++;
    this.invalidate();
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.#writesInFlight--;
      this.invalidate();
    };
  }
}

/** Refuses a path with a reason (throws `PATH_OUTSIDE_SANDBOX`). */
export type Refuse = (input: string, reason: string, argument?: string) => never;

/**
 * Walks the existing components of a path under `realRoot` with lstat; every symlink must
 * resolve (realpath) inside the root and outside `.git`, and no file may have a second name (a
 * hard link may share its content with a file outside). Refuses through `refuse` otherwise.
 */
export function checkLinks(
  realRoot: string,
  cache: PathCheckCache,
  refuse: Refuse,
  input: string,
  components: readonly string[],
  argument: string | undefined,
  cacheable: boolean,
): void {
  let current = realRoot;
  for (const component of components) {
    const next = join(current, component);
    if (cacheable && cache.realEntries.has(next)) {
      current = next;
      continue;
    }
    let isLink: boolean;
    try {
      // throwIfNoEntry: a missing component is the common case (new files); no exception cost.
      const stats = lstatSync(next, { throwIfNoEntry: false });
      if (stats === undefined) return;
      isLink = stats.isSymbolicLink();
      // A file with a second name may share its content with a file outside the project (a
      // tool can `ln` one in); a write through it would change that file. Checkouts and
      // copies never make hard links, so treat it like a symlink that leads outside.
      if (!isLink && stats.isFile() && stats.nlink > 1) {
        return refuse(
          input,
          'it is a hard-linked file (it has another name, possibly outside the project)',
          argument,
        );
      }
    } catch (error) {
      if (AgentsError.isInstance(error)) throw error;
      const code = (error as NodeJS.ErrnoException).code;
      // Nothing exists from here on, so nothing further can be a link.
      if (code === 'ENOENT' || code === 'ENOTDIR') return;
      return refuse(input, 'it cannot be checked safely', argument);
    }
    if (!isLink) {
      if (cacheable) cache.rememberReal(next);
      current = next;
      continue;
    }
    let target: string;
    try {
      target = realpathSync.native(next);
    } catch {
      // A dangling link or a loop: never fall back to "parent + basename" (a write through a
      // dangling link would create its target wherever it points).
      return refuse(input, 'it goes through a symbolic link that cannot be resolved', argument);
    }
    const targetRel = relativeInside(realRoot, target);
    if (targetRel === undefined) {
      return refuse(
        input,
        'it goes through a symbolic link that leads outside the project',
        argument,
      );
    }
    if (targetRel !== '' && targetRel.split(sep).some(isGitComponent)) {
      return refuse(input, 'it goes through a symbolic link into ".git"', argument);
    }
    current = target;
  }
}

/**
 * The real location of an absolute path that may not fully exist: realpath of its longest
 * existing ancestor plus the rest. Undefined when an existing part cannot be resolved.
 */
export function realLocation(absolute: string): string | undefined {
  const rest: string[] = [];
  let current = absolute;
  for (;;) {
    try {
      return join(realpathSync.native(current), ...rest.reverse());
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') return undefined;
      const parent = dirname(current);
      if (parent === current) return undefined;
      rest.push(basename(current));
      current = parent;
    }
  }
}

/**
 * The path of `target` relative to `base` when target is base or inside it, else undefined.
 * Both must be absolute and normalized (`path.resolve`). Containment is by whole components:
 * the prefix tested always ends with a separator, so `/x/run-1` never contains `/x/run-10`.
 */
export function relativeInside(base: string, target: string): string | undefined {
  if (target === base) return '';
  const prefix = base.endsWith(sep) ? base : base + sep;
  return target.startsWith(prefix) ? target.slice(prefix.length) : undefined;
}
