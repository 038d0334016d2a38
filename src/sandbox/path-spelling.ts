import { fileURLToPath } from 'node:url';

/** Longest path string accepted (Linux PATH_MAX); longer ones are refused, not truncated. */
export const MAX_PATH_LENGTH = 4096;

/**
 * Checks how a path argument is spelled, before anything touches the disk: a string, not empty,
 * no NUL, not too long, a local `file://` URI or a plain path (no other URL), no `~` or
 * environment variables (never expanded), no percent-encoded or multiply encoded dots and
 * slashes, no backslashes or drive letters. Returns the plain path to resolve (a URI decoded),
 * or why it is refused.
 */
export function checkSpelling(input: unknown): { path: string } | { reason: string } {
  if (typeof input !== 'string') return { reason: 'a path must be a string' };
  if (input.length === 0) return { reason: 'the path is empty' };
  if (input.includes('\0')) return { reason: 'it contains a NUL byte' };
  if (input.length > MAX_PATH_LENGTH)
    return { reason: `it is longer than ${MAX_PATH_LENGTH} characters` };
  let path = input;
  if (isFileUri(input)) {
    const decoded = fileUriToPath(input);
    if (decoded === undefined) return { reason: 'it is not a valid local file:// URI' };
    path = decoded;
  } else if (/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(input)) {
    return { reason: 'it is a URL, not a file path' };
  }
  if (path.startsWith('~')) return { reason: '"~" is not expanded to a home folder' };
  if (/\$(?:\{|[A-Za-z_])|%[A-Za-z_][A-Za-z0-9_]*%/.test(path)) {
    return { reason: 'environment variables are not expanded' };
  }
  if (/%(?:2e|2f|5c|00)/i.test(path)) {
    return { reason: 'percent-encoded dots or slashes are not accepted; pass the plain path' };
  }
  if (isMultiplyEncoded(path)) {
    return {
      reason:
        'it is encoded more than once (an encoded "%", an overlong UTF-8 form, or full-width dots or slashes); pass the plain path',
    };
  }
  if (path.includes('\\')) return { reason: 'backslashes are not path separators here; use "/"' };
  if (/^[A-Za-z]:/.test(path)) return { reason: 'Windows drive paths are not accepted' };
  return { path };
}

/** Starts with `file:` in any case; a character test, not a regex (it runs per argument). */
export function isFileUri(value: string): boolean {
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
