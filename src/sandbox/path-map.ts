import { realpathSync } from 'node:fs';
import { isAbsolute, join, resolve, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { CallToolResult } from '@modelcontextprotocol/client';
import { AgentsError, AgentsErrorCode } from '../errors.js';
import { createArgsRewriter } from './path-args.js';
import { checkLinks, PathCheckCache, realLocation, relativeInside } from './path-links.js';
import {
  createFromSandbox,
  rewriteErrorWith,
  rewriteResultWith,
  unique,
} from './path-result-map.js';
import { checkSpelling, isFileUri, isGitComponent } from './path-spelling.js';
import type { PathMap } from './types.js';

// The path map is assembled from files of one concern each: how a path is spelled
// (path-spelling.ts), symlinks and the check cache (path-links.ts), results mapped back to
// logical paths (path-result-map.ts) and path arguments found in nested args (path-args.ts).

/** A {@link PathMap} that also rewrites whole tool arguments and results. */
export interface SandboxPathMap extends PathMap {
  /** Absolute forms under which the user's project is known (its real repo path, lexical and realpath). */
  readonly aliases: readonly string[];
  /**
   * Rewrites one path argument: a plain path becomes an absolute sandbox path, a `file://` URI
   * becomes a `file://` URI into the sandbox. Throws `PATH_OUTSIDE_SANDBOX` like `toSandbox`.
   */
  toSandboxArgument(value: string, argument?: string): string;
  /**
   * Returns a copy of `args` with the values at `pathArguments` (`path`, `paths[]`,
   * `edits[].file`) rewritten into the sandbox. Nothing else is changed: other values reach the
   * server byte-identical, and `args` itself is never mutated. Throws `PATH_OUTSIDE_SANDBOX`
   * (with `details.argument`) on the first value that would escape.
   */
  rewriteArgs(
    args: Record<string, unknown>,
    pathArguments: readonly string[],
  ): Record<string, unknown>;
  /**
   * Maps sandbox paths in a result back to logical paths: text content, embedded resource text,
   * resource URIs (to `file://<project>/…` when an alias is known) and every string in
   * `structuredContent`. Paths outside the sandbox are left as they are. Returns the same object
   * when nothing changed. Binary data and `_meta` are never touched.
   */
  rewriteResult(result: CallToolResult): CallToolResult;
  /**
   * Maps sandbox and project paths in an error's message back to logical paths, in place (the
   * same error object, so its type, code and cause stay), and returns it. Errors from servers
   * (JSON-RPC errors, spawn failures) often quote the absolute path they tried.
   */
  rewriteError<T>(error: T): T;
  /** True when `path` (absolute) lies inside the sandbox root, by whole path components. */
  isInside(path: string): boolean;
  /**
   * Turns on caching of the symlink checks (the per-component `lstat` walk, tens of µs per
   * call on a slow filesystem). The caller promises that every change to the sandbox tree from
   * now on is announced: write-class tool calls run between {@link beginWrite} and its `end`,
   * and anything else that changes the tree (a restore, a checkout) calls
   * {@link invalidateLinkCache} afterwards. Until this is called nothing is cached. Idempotent.
   */
  trackWrites(): void;
  /**
   * Announces a write-class call that is about to run. Cached verdicts are dropped now and
   * again when the returned `end` is called (the write may have created a symlink), and
   * nothing is cached or reused while any write is in flight. `end` is idempotent; call it
   * in a `finally`.
   */
  beginWrite(): () => void;
  /** Drops every cached symlink verdict (after a change to the tree made outside tool calls). */
  invalidateLinkCache(): void;
}

/** Options for {@link createPathMap}. */
export interface CreatePathMapOptions {
  /**
   * Absolute paths that mean the project outside the sandbox (the user's real repo path). A path
   * under an alias maps to the same place in the sandbox. The first one is used for `file://`
   * URIs in results.
   */
  aliases?: readonly string[];
}

interface Base {
  path: string;
  kind: 'root' | 'alias';
}

/**
 * Creates the path map of a sandbox rooted at `root`.
 *
 * Accepted inputs: a logical path (`src/main.py`, relative to the root), an absolute path under
 * the root (lexical or realpath form) or under an alias, or a `file://` URI of either. Refused
 * with `PATH_OUTSIDE_SANDBOX`: `..` escapes, absolute paths elsewhere, `~` and `$VAR` (never
 * expanded), NUL bytes, percent-encoded dots/slashes, backslashes and drive letters, URLs other
 * than `file://`, any `.git` component, and symlinks (existing components, ancestors, dangling
 * links, loops) that resolve outside the root. Containment is decided by path components, never
 * by string prefix. The check runs when the call is made; the server does the I/O, so a swap
 * between our check and its open needs OS-level sandboxing of the server.
 */
/** True when a relative path's `..` segments reach above its start at any point. */
function climbsAbove(path: string): boolean {
  let depth = 0;
  for (const part of path.split(/[\\/]/)) {
    if (part === '..') depth--;
    else if (part !== '' && part !== '.') depth++;
    if (depth < 0) return true;
  }
  return false;
}

export function createPathMap(root: string, options: CreatePathMapOptions = {}): SandboxPathMap {
  const lexicalRoot = resolve(root);
  const realRoot = realpathSync.native(lexicalRoot);
  const rootForms = unique([realRoot, lexicalRoot]);
  const aliasForms: string[] = [];
  for (const alias of options.aliases ?? []) {
    const lexical = resolve(alias);
    aliasForms.push(lexical);
    try {
      aliasForms.push(realpathSync.native(lexical));
    } catch {
      // An alias that does not exist (yet) still maps lexically.
    }
  }
  const bases: Base[] = [
    ...rootForms.map((path): Base => ({ path, kind: 'root' })),
    ...unique(aliasForms)
      .filter((path) => !rootForms.includes(path))
      .map((path): Base => ({ path, kind: 'alias' })),
  ].sort((a, b) => b.path.length - a.path.length);
  const aliases = bases.filter((base) => base.kind === 'alias').map((base) => base.path);
  const fromSandbox = createFromSandbox({
    rootForms,
    aliasForms: aliases,
    primaryAlias: bases.find((base) => base.kind === 'alias')?.path,
  });
  const cache = new PathCheckCache();

  const refuse = (input: string, reason: string, argument?: string): never => {
    // The model's own input, with the host's sandbox and project folders shown as logical.
    const logical = typeof input === 'string' ? fromSandbox(input) : String(input);
    const shown = logical.length > 200 ? `${logical.slice(0, 200)}…` : logical;
    const where = argument === undefined ? '' : ` (argument "${argument}")`;
    throw new AgentsError(
      AgentsErrorCode.PathOutsideSandbox,
      // Never names the host's project or sandbox folder: the model works with logical paths.
      `Path "${shown.replace(/\0/g, '\\0')}"${where} was refused: ${reason}. Use a path relative to the project root (for example "src/main.py").`,
      { details: { path: input, reason, ...(argument === undefined ? {} : { argument }) } },
    );
  };

  const toSandbox = (input: string, argument?: string): string => {
    // A path mapped before, with the tree unchanged since (see trackWrites): the same answer.
    // Only successful mappings are kept; a refusal is worked out (and thrown) every time.
    const cacheable = cache.usable;
    if (cacheable) {
      const known = cache.mapped(input);
      if (known !== undefined) return known;
    }
    const spelled = checkSpelling(input);
    if ('reason' in spelled) return refuse(String(input), spelled.reason, argument);
    const path = spelled.path;
    const absolute = isAbsolute(path) ? resolve(path) : resolve(realRoot, path);
    let rel: string | undefined;
    for (const base of bases) {
      rel = relativeInside(base.path, absolute);
      if (rel !== undefined) break;
    }
    // Set when the answer rests on a realpath outside the root, which no write announces.
    let viaRealLocation = false;
    if (rel === undefined && isAbsolute(path)) {
      // Another spelling of the root (a symlinked parent, macOS /tmp → /private/tmp): accept it
      // only when its real location is inside the real root.
      const real = realLocation(absolute);
      if (real !== undefined) rel = relativeInside(realRoot, real);
      viaRealLocation = true;
    }
    if (rel === undefined) {
      return refuse(
        input,
        isAbsolute(path) ? 'it is outside the project' : 'it escapes the project with ".."',
        argument,
      );
    }
    // `../../repo/src/main.py` lands inside, but lets a model probe the names of the folders
    // above the project (a refusal or not tells whether `repo` is its name): refused.
    if (!isAbsolute(path) && climbsAbove(path))
      return refuse(
        input,
        'it climbs out of the project with ".." (even to come back in)',
        argument,
      );

    const components = rel === '' ? [] : rel.split(sep);
    if (components.some(isGitComponent)) {
      return refuse(
        input,
        'paths inside ".git" (or a name git treats as ".git" on some platform) are not available to tools',
        argument,
      );
    }
    if (components.length > 0) {
      if (!cacheable || !cache.checkedPaths.has(rel)) {
        checkLinks(realRoot, cache, refuse, input, components, argument, cacheable);
        if (cacheable) cache.rememberChecked(rel);
      }
    }
    const mapped = components.length === 0 ? realRoot : join(realRoot, ...components);
    if (cacheable && !viaRealLocation) cache.rememberMapping(input, mapped);
    return mapped;
  };

  const toSandboxArgument = (value: string, argument?: string): string => {
    const mapped = toSandbox(value, argument);
    return isFileUri(value) ? pathToFileURL(mapped).href : mapped;
  };

  return {
    root: realRoot,
    aliases,
    toSandbox: (path: string) => toSandbox(path),
    toSandboxArgument,
    fromSandbox,
    rewriteArgs: createArgsRewriter(toSandboxArgument),
    rewriteResult: (result: CallToolResult) => rewriteResultWith(result, fromSandbox),
    rewriteError: <T>(error: T): T => rewriteErrorWith(error, fromSandbox),
    isInside: (path: string) =>
      rootForms.some((form) => relativeInside(form, resolve(path)) !== undefined),
    trackWrites: () => cache.turnOn(),
    beginWrite: () => cache.beginWrite(),
    invalidateLinkCache: () => cache.invalidate(),
  };
}
