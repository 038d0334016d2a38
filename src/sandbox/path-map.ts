import { lstatSync, realpathSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { AgentsError, AgentsErrorCode } from '../errors.js';
import type { PathMap } from './types.js';

/** Longest path string accepted (Linux PATH_MAX); longer ones are refused, not truncated. */
const MAX_PATH_LENGTH = 4096;

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
  const primaryAlias = bases.find((base) => base.kind === 'alias')?.path;

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
    const cacheable = linkCacheOn && writesInFlight === 0;
    if (cacheable) {
      const known = mappedPaths.get(input);
      if (known !== undefined) return known;
    }
    if (typeof input !== 'string')
      return refuse(String(input), 'a path must be a string', argument);
    if (input.length === 0) return refuse(input, 'the path is empty', argument);
    if (input.includes('\0')) return refuse(input, 'it contains a NUL byte', argument);
    if (input.length > MAX_PATH_LENGTH)
      return refuse(input, `it is longer than ${MAX_PATH_LENGTH} characters`, argument);
    let path = input;
    if (isFileUri(input)) {
      path = fileUriToPath(input) ?? refuse(input, 'it is not a valid local file:// URI', argument);
    } else if (/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(input)) {
      return refuse(input, 'it is a URL, not a file path', argument);
    }
    if (path.startsWith('~'))
      return refuse(input, '"~" is not expanded to a home folder', argument);
    if (/\$(?:\{|[A-Za-z_])|%[A-Za-z_][A-Za-z0-9_]*%/.test(path)) {
      return refuse(input, 'environment variables are not expanded', argument);
    }
    if (/%(?:2e|2f|5c|00)/i.test(path)) {
      return refuse(
        input,
        'percent-encoded dots or slashes are not accepted; pass the plain path',
        argument,
      );
    }
    if (isMultiplyEncoded(path)) {
      return refuse(
        input,
        'it is encoded more than once (an encoded "%", an overlong UTF-8 form, or full-width dots or slashes); pass the plain path',
        argument,
      );
    }
    if (path.includes('\\'))
      return refuse(input, 'backslashes are not path separators here; use "/"', argument);
    if (/^[A-Za-z]:/.test(path))
      return refuse(input, 'Windows drive paths are not accepted', argument);

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
    const components = rel === '' ? [] : rel.split(sep);
    if (components.some(isGitComponent)) {
      return refuse(
        input,
        'paths inside ".git" (or a name git treats as ".git" on some platform) are not available to tools',
        argument,
      );
    }
    if (components.length > 0) {
      if (!cacheable || !checkedPaths.has(rel)) {
        checkLinks(input, components, argument, cacheable);
        if (cacheable) remember(checkedPaths, rel);
      }
    }
    const mapped = components.length === 0 ? realRoot : join(realRoot, ...components);
    if (cacheable && !viaRealLocation) rememberMapping(input, mapped);
    return mapped;
  };

  // Symlink-check cache (see trackWrites). `checkedPaths`: relative paths whose whole walk
  // passed; `realEntries`: absolute real paths seen to exist and not be symlinks. Both are only
  // read and written while caching is on and no write is in flight, and both are dropped at
  // the start and end of every write, so a link created by a write is always seen.
  let linkCacheOn = false;
  let writesInFlight = 0;
  const checkedPaths = new Set<string>();
  const realEntries = new Set<string>();
  // Whole answers of toSandbox by input string, under the same rules: a read-only call that
  // names a path seen before costs one lookup instead of the checks, resolve and join.
  const mappedPaths = new Map<string, string>();
  const rememberMapping = (input: string, mapped: string): void => {
    if (mappedPaths.size >= LINK_CACHE_LIMIT) mappedPaths.clear();
    mappedPaths.set(input, mapped);
  };
  const invalidateLinkCache = (): void => {
    // Twice per write-class call: clear() allocates a fresh table, so skip empty ones.
    if (checkedPaths.size > 0) checkedPaths.clear();
    if (realEntries.size > 0) realEntries.clear();
    if (mappedPaths.size > 0) mappedPaths.clear();
  };

  /** Walks existing components with lstat; every symlink must resolve (realpath) inside the root. */
  const checkLinks = (
    input: string,
    components: readonly string[],
    argument: string | undefined,
    cacheable: boolean,
  ): void => {
    let current = realRoot;
    for (const component of components) {
      const next = join(current, component);
      if (cacheable && realEntries.has(next)) {
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
        if (cacheable) remember(realEntries, next);
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
  };

  const toSandboxArgument = (value: string, argument?: string): string => {
    const mapped = toSandbox(value, argument);
    return isFileUri(value) ? pathToFileURL(mapped).href : mapped;
  };

  // Result mapping: one regex over every form of the root, built once. `file://` forms come
  // first so a URI is never half-mapped into `file://src/...`. The negative lookahead stops
  // `/x/run-1` from matching inside `/x/run-10` (component boundary, not string prefix).
  const uriForms = unique(
    rootForms.flatMap((form) => [pathToFileURL(form).href, `file://${form}`]),
  );
  const uriAlias = primaryAlias === undefined ? undefined : pathToFileURL(primaryAlias).href;
  // Plain project paths map back too (a server under confinement sees the sandbox at the
  // project's path, and quotes it): the model never needs a host path.
  const aliasPlainForms = bases.filter((base) => base.kind === 'alias').map((base) => base.path);
  const alternatives = [...uriForms, ...rootForms, ...aliasPlainForms]
    .sort((a, b) => b.length - a.length)
    .map(escapeRegExp)
    .join('|');
  // A "." ends the match only when prose goes on after it ("root is /wt."), not in "/wt.bak".
  const pattern = new RegExp(`(?:${alternatives})(?![\\w~@+%-]|\\.[^\\s"'\`,;)\\]}>])(/)?`, 'g');
  // Text that holds none of these has nothing to map (the common case): the root forms, plus
  // the `file://` forms that do not contain one (a root with characters a URI percent-encodes).
  const needles = [
    ...rootForms,
    ...aliasPlainForms,
    ...uriForms.filter(
      (form) => ![...rootForms, ...aliasPlainForms].some((plain) => form.includes(plain)),
    ),
  ];

  const fromSandbox = (text: string): string => {
    let found = false;
    for (let index = 0; index < needles.length && !found; index++) {
      found = text.includes(needles[index]!);
    }
    if (!found) return text;
    return text.replace(pattern, (match: string, slash: string | undefined, offset: number) => {
      if (/^file:/i.test(match)) {
        if (uriAlias === undefined) return match;
        return slash === undefined ? uriAlias : `${uriAlias}/`;
      }
      if (slash === undefined) return '.';
      const after = text.charAt(offset + match.length);
      return after === '' || /[\s"'`,;)\]}>]/.test(after) ? './' : '';
    });
  };

  const mapStrings = (value: unknown, depth: number): unknown => {
    if (typeof value === 'string') return fromSandbox(value);
    if (depth > 64 || typeof value !== 'object' || value === null) return value;
    if (Array.isArray(value)) {
      let changed = false;
      const out = value.map((item: unknown) => {
        const mapped = mapStrings(item, depth + 1);
        if (mapped !== item) changed = true;
        return mapped;
      });
      return changed ? out : value;
    }
    let out: Record<string, unknown> | undefined;
    for (const [key, item] of Object.entries(value)) {
      const mapped = mapStrings(item, depth + 1);
      if (mapped !== item) {
        out ??= { ...(value as Record<string, unknown>) };
        Object.defineProperty(out, key, {
          value: mapped,
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
    }
    return out ?? value;
  };

  const rewriteResult = (result: CallToolResult): CallToolResult => {
    let content: CallToolResult['content'] | undefined;
    const items = Array.isArray(result.content) ? result.content : [];
    for (let index = 0; index < items.length; index++) {
      const item = items[index];
      if (item === undefined) continue; // a hole, which forEach skipped too
      const mapped = mapContentItem(item, fromSandbox);
      if (mapped !== item) {
        content ??= [...items];
        content[index] = mapped;
      }
    }
    const structured =
      result.structuredContent === undefined ? undefined : mapStrings(result.structuredContent, 0);
    if (content === undefined && structured === result.structuredContent) return result;
    return {
      ...result,
      ...(content === undefined ? {} : { content }),
      ...(structured === result.structuredContent
        ? {}
        : { structuredContent: structured as Record<string, unknown> }),
    };
  };

  const rewriteError = <T>(error: T): T => {
    if (!(error instanceof Error)) return error;
    const message = fromSandbox(error.message);
    if (message !== error.message) {
      Object.defineProperty(error, 'message', {
        value: message,
        enumerable: false,
        writable: true,
        configurable: true,
      });
      if (typeof error.stack === 'string') error.stack = fromSandbox(error.stack);
    }
    return error;
  };

  const parsedLocations = new Map<string, Segment[]>();
  const rewriteArgs = (
    args: Record<string, unknown>,
    pathArguments: readonly string[],
  ): Record<string, unknown> => {
    let out = args;
    for (const location of pathArguments) {
      let segments = parsedLocations.get(location);
      if (segments === undefined) {
        segments = parseLocation(location);
        parsedLocations.set(location, segments);
      }
      out = rewriteAt(out, segments, 0, (value) => toSandboxArgument(value, location)) as Record<
        string,
        unknown
      >;
    }
    return out;
  };

  return {
    root: realRoot,
    aliases: bases.filter((base) => base.kind === 'alias').map((base) => base.path),
    toSandbox: (path: string) => toSandbox(path),
    toSandboxArgument,
    fromSandbox,
    rewriteArgs,
    rewriteResult,
    rewriteError,
    isInside: (path: string) =>
      rootForms.some((form) => relativeInside(form, resolve(path)) !== undefined),
    trackWrites: () => {
      linkCacheOn = true;
    },
    beginWrite: () => {
      writesInFlight++;
      invalidateLinkCache();
      let ended = false;
      return () => {
        if (ended) return;
        ended = true;
        writesInFlight--;
        invalidateLinkCache();
      };
    },
    invalidateLinkCache,
  };
}

/** Most entries a link-check cache holds; it starts over when full (paths come from models). */
const LINK_CACHE_LIMIT = 4096;

function remember(set: Set<string>, value: string): void {
  if (set.size >= LINK_CACHE_LIMIT) set.clear();
  set.add(value);
}

/** One step of an argument location: `edits[]` is `{ key: 'edits', each: true }`. */
interface Segment {
  key: string;
  each: boolean;
}

function parseLocation(location: string): Segment[] {
  return location
    .split('.')
    .filter((part) => part !== '')
    .map((part) =>
      part.endsWith('[]') ? { key: part.slice(0, -2), each: true } : { key: part, each: false },
    );
}

/** Rewrites the string leaves at `segments`, copying only the containers on the way. */
function rewriteAt(
  value: unknown,
  segments: readonly Segment[],
  index: number,
  rewrite: (value: string) => string,
): unknown {
  if (index === segments.length) {
    if (typeof value === 'string') return rewrite(value);
    // Lenient: a location declared without `[]` that holds a list of paths.
    if (Array.isArray(value))
      return value.map((item: unknown) => (typeof item === 'string' ? rewrite(item) : item));
    return value;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  const segment = segments[index]!;
  if (!Object.hasOwn(value, segment.key)) return value;
  const record = value as Record<string, unknown>;
  const child = record[segment.key];
  const next =
    segment.each && Array.isArray(child)
      ? child.map((item: unknown) => rewriteAt(item, segments, index + 1, rewrite))
      : rewriteAt(child, segments, index + 1, rewrite);
  if (next === child) return value;
  const copy = { ...record };
  // The spread made `segment.key` an own writable data property of `copy` (it is an own key of
  // `record`), so assigning sets that property, even for "__proto__", never the prototype.
  copy[segment.key] = next;
  return copy;
}

type ContentItem = CallToolResult['content'][number];

function mapContentItem(item: ContentItem, map: (text: string) => string): ContentItem {
  switch (item.type) {
    case 'text': {
      const text = map(item.text);
      return text === item.text ? item : { ...item, text };
    }
    case 'resource_link': {
      const uri = map(item.uri);
      const description = item.description === undefined ? undefined : map(item.description);
      if (uri === item.uri && description === item.description) return item;
      return { ...item, uri, ...(description === undefined ? {} : { description }) };
    }
    case 'resource': {
      const resource = item.resource;
      const uri = map(resource.uri);
      const text =
        'text' in resource && typeof resource.text === 'string' ? map(resource.text) : undefined;
      const textChanged = text !== undefined && 'text' in resource && text !== resource.text;
      if (uri === resource.uri && !textChanged) return item;
      return {
        ...item,
        resource: { ...resource, uri, ...(textChanged ? { text } : {}) },
      } as ContentItem;
    }
    default:
      return item;
  }
}

/**
 * The real location of an absolute path that may not fully exist: realpath of its longest
 * existing ancestor plus the rest. Undefined when an existing part cannot be resolved.
 */
function realLocation(absolute: string): string | undefined {
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
function relativeInside(base: string, target: string): string | undefined {
  if (target === base) return '';
  const prefix = base.endsWith(sep) ? base : base + sep;
  return target.startsWith(prefix) ? target.slice(prefix.length) : undefined;
}

/** Starts with `file:` in any case; a character test, not a regex (it runs per argument). */
function isFileUri(value: string): boolean {
  return (
    value.length >= 5 &&
    value.charCodeAt(4) === 58 /* : */ &&
    (value.charCodeAt(0) | 0x20) === 102 /* f */ &&
    (value.charCodeAt(1) | 0x20) === 105 /* i */ &&
    (value.charCodeAt(2) | 0x20) === 108 /* l */ &&
    (value.charCodeAt(3) | 0x20) === 101 /* e */
  );
}

// Code points HFS+ ignores in names (git's is_hfs_dotgit): `.g\u200cit` is `.git` there.
const HFS_IGNORED = /[\u200c-\u200f\u202a-\u202e\u206a-\u206f\ufeff]/g;

/**
 * Every spelling git treats as `.git` on some platform: any case (case-insensitive file
 * systems), trailing dots and spaces and NTFS streams (`.git.`, `.git `, `.git::$INDEX_ALLOCATION`),
 * the 8.3 short name (`GIT~1`), and HFS+ ignorable code points.
 */
export function isGitComponent(component: string): boolean {
  let name = component.replace(HFS_IGNORED, '').toLowerCase();
  if (/^git~\d+$/.test(name)) return true;
  const stream = name.indexOf(':');
  if (stream !== -1) name = name.slice(0, stream);
  return name.replace(/[. ]+$/, '') === '.git';
}

/**
 * True for a path that is still encoded after one decoding: an encoded `%` followed by hex
 * (`%252e`), overlong UTF-8 forms of `.` and `/` (`%c0%ae`), or characters that compatibility
 * normalization (NFKC, used by some servers) turns into dots, slashes or backslashes.
 */
function isMultiplyEncoded(path: string): boolean {
  if (/%25[0-9a-f]{2}|%c0|%c1|%e0%80/i.test(path)) return true;
  // Plain ASCII (the common case) has no compatibility forms.
  // eslint-disable-next-line no-control-regex
  if (/^[\x00-\x7f]*$/.test(path)) return false;
  const normalized = path.normalize('NFKC');
  return countSeparators(normalized) !== countSeparators(path);
}

function countSeparators(text: string): number {
  let count = 0;
  for (const char of text) if (char === '.' || char === '/' || char === '\\') count++;
  return count;
}

/** A local `file://` URI → path; undefined for a remote host or an encoded separator. */
function fileUriToPath(uri: string): string | undefined {
  try {
    const url = new URL(uri);
    if (url.protocol !== 'file:') return undefined;
    if (url.hostname !== '' && url.hostname !== 'localhost') return undefined;
    url.hostname = '';
    return fileURLToPath(url);
  } catch {
    return undefined;
  }
}

function unique(values: readonly string[]): string[] {
  return [...new Set(values)];
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
