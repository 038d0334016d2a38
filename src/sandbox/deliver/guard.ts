import { posix } from 'node:path';

/**
 * What delivery refuses to take from a sandbox by default, because a tool could use it to raise
 * its own rights on the next run or to reach outside the project: the library's own
 * configuration (`.agents/`: actors, servers, skills, policy) and symlinks that point out of the
 * working tree or into `.git`. Plus the quoting every listing uses, so a file name cannot forge
 * extra lines.
 */

/** The folder name of a workspace (any depth: a sub-project can hold its own). */
export const CONFIG_FOLDER = '.agents';

/**
 * True when `path` (relative to the project, `/`-separated) is configuration of this library:
 * under a `.agents` folder at any depth, or under one of `extraPrefixes` (a workspace kept
 * elsewhere inside the project, given relative to it).
 */
export function isConfigPath(path: string, extraPrefixes: readonly string[] = []): boolean {
  if (path.split('/').includes(CONFIG_FOLDER)) return true;
  return extraPrefixes.some(
    (prefix) => prefix !== '' && (path === prefix || path.startsWith(`${prefix}/`)),
  );
}

/**
 * Why a symlink at `path` pointing at `target` must not be delivered: an absolute target, one
 * that climbs out of the working tree, or one that leads into a `.git` folder. `undefined` when
 * it stays inside the tree (a dangling link inside is fine: it cannot reach anything else).
 */
export function symlinkEscape(path: string, target: string): string | undefined {
  if (target === '') return 'an empty link target';
  if (posix.isAbsolute(target)) return `points outside the working tree (${quotePath(target)})`;
  const resolved = posix.normalize(posix.join(posix.dirname(path), target));
  if (resolved === '..' || resolved.startsWith('../')) {
    return `points outside the working tree (${quotePath(target)})`;
  }
  if (resolved.split('/').some((part) => part.toLowerCase() === '.git')) {
    return `points into .git (${quotePath(target)})`;
  }
  return undefined;
}

const ESCAPES: Record<string, string> = {
  '\x07': '\\a',
  '\b': '\\b',
  '\t': '\\t',
  '\n': '\\n',
  '\v': '\\v',
  '\f': '\\f',
  '\r': '\\r',
  '"': '\\"',
  '\\': '\\\\',
};

/**
 * A path as git prints it with `core.quotePath`: names holding a control character, DEL, `"` or
 * `\` are put in double quotes with C escapes (octal for the rest), so a name cannot start a
 * new line of a listing or pass for another. Other names (UTF-8 included) are printed as they
 * are, as with `core.quotePath=false`, which keeps non-ASCII names readable.
 */
export function quotePath(path: string): string {
  // eslint-disable-next-line no-control-regex
  if (!/[\x00-\x1f\x7f"\\]/.test(path)) return path;
  let out = '"';
  for (const char of path) {
    const code = char.codePointAt(0)!;
    if (ESCAPES[char] !== undefined) out += ESCAPES[char];
    else if (code < 0x20 || code === 0x7f) out += `\\${code.toString(8).padStart(3, '0')}`;
    else out += char;
  }
  return `${out}"`;
}

/** {@link ESCAPES} backwards: the letter after a backslash → the character. */
const UNESCAPES: Record<string, string> = Object.fromEntries(
  Object.entries(ESCAPES).map(([char, escaped]) => [escaped.slice(1), char]),
);

/** Unquotes a C-style quoted string at the start of `text` (git's quoting of paths). */
export function unquoteC(text: string): { value: string; end: number } | undefined {
  const bytes: number[] = [];
  for (let index = 1; index < text.length; index++) {
    const char = text[index]!;
    if (char === '"') return { value: Buffer.from(bytes).toString('utf8'), end: index + 1 };
    if (char !== '\\') {
      bytes.push(...Buffer.from(char, 'utf8'));
      continue;
    }
    const next = text[++index];
    if (next === undefined) return undefined;
    const octal = /^[0-3][0-7]{2}/.exec(text.slice(index, index + 3));
    if (octal !== null) {
      bytes.push(Number.parseInt(octal[0], 8));
      index += 2;
    } else if (UNESCAPES[next] !== undefined) {
      bytes.push(...Buffer.from(UNESCAPES[next], 'utf8'));
    } else {
      return undefined;
    }
  }
  return undefined;
}
