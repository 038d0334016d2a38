/**
 * The one glob matcher of the library, for tool patterns: policy rules (`tools: ['mcp:fs/*']`),
 * pins and Agent Skills' `allowed-tools`. One set of rules:
 *
 * - `*` matches any run of characters, `/` and `:` included (`mcp:*` matches `mcp:fs/read_file`);
 * - `?` matches exactly one character;
 * - every other character matches itself (no classes, braces or escapes: tool ids and names hold
 *   none of those meanings).
 *
 * A pattern without `*` or `?` is an exact name. Matching is case-sensitive unless
 * `ignoreCase` is set (Agent Skills' `allowed-tools`, written by hand for any client's names).
 *
 * Not `picomatch`/`minimatch`: those are file-path globs, where `*` stops at `/` and braces,
 * classes and extglobs have meanings, which would change what existing tool patterns match.
 */

/** True when `pattern` holds glob characters (`*`, `?`). */
export function isGlob(pattern: string): boolean {
  return pattern.includes('*') || pattern.includes('?');
}

/** Options of {@link matchesGlob} and {@link compileGlob}. */
export interface GlobOptions {
  /** Match letters in any case. Default false. */
  ignoreCase?: boolean;
}

// Compiled once per pattern: patterns are checked on every tool call. Bounded, since patterns
// can come from files we do not control (SKILL.md).
const CACHE_LIMIT = 1024;
const cache = new Map<string, RegExp>();

/** The regular expression of a glob (see the module rules), cached. */
export function compileGlob(pattern: string, options: GlobOptions = {}): RegExp {
  const flags = options.ignoreCase === true ? 'si' : 's';
  const key = `${flags}\0${pattern}`;
  let regex = cache.get(key);
  if (regex === undefined) {
    const source = pattern
      .split('')
      .map((char) =>
        char === '*' ? '.*' : char === '?' ? '.' : char.replace(/[\\^$.|+()[\]{}]/g, '\\$&'),
      )
      .join('');
    regex = new RegExp(`^${source}$`, flags);
    if (cache.size >= CACHE_LIMIT) cache.clear();
    cache.set(key, regex);
  }
  return regex;
}

/** Matches `value` against a glob (see the module rules); a pattern without glob characters is an exact name. */
export function matchesGlob(pattern: string, value: string, options: GlobOptions = {}): boolean {
  if (!isGlob(pattern)) {
    return options.ignoreCase === true
      ? pattern.toLowerCase() === value.toLowerCase()
      : pattern === value;
  }
  return compileGlob(pattern, options).test(value);
}
