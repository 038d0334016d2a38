import { AgentsError, AgentsErrorCode } from '../errors.js';

// The snapshot size cap's setting and the words and patterns that name a capped file; the
// guard that applies the cap: large-files.ts.

/** Default snapshot size cap: files larger than this are not captured (50 MiB). */
export const DEFAULT_MAX_FILE_BYTES = 50 * 1024 * 1024;

const MIB = 1024 * 1024;

/** A file left out of snapshots because it is larger than the sandbox's `maxFileBytes`. */
export interface OversizedFile {
  /** Logical path (relative to the sandbox root). */
  path: string;
  /** Size in bytes when last seen. */
  size: number;
  /**
   * `true` when the snapshots hold an older version of it (they keep that version);
   * `false` when they hold none.
   */
  tracked: boolean;
}

/**
 * Checks `maxFileBytes` and applies the default: a non-negative integer, where `0` (or
 * `Infinity`, taken as `0`) turns the cap off. Throws `CONFIG_INVALID` otherwise.
 */
export function validateMaxFileBytes(value: number | undefined): number {
  if (value === undefined) return DEFAULT_MAX_FILE_BYTES;
  if (value === Number.POSITIVE_INFINITY) return 0;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new AgentsError(
      AgentsErrorCode.ConfigInvalid,
      `Sandbox maxFileBytes ${String(value)} is not valid: give a whole number of bytes, or 0 to capture files of any size.`,
      { details: { maxFileBytes: value } },
    );
  }
  return value;
}

/**
 * The gitignore pattern that matches exactly `path` from the top of the tree: anchored with a
 * leading `/`, glob characters and backslashes escaped, trailing spaces kept. A line break
 * (which no pattern line can hold) becomes `?`, which matches it.
 */
export function anchoredPattern(path: string): string {
  const escaped = path
    .replace(/[\\*?[]/g, (char) => `\\${char}`)
    .replace(/[\r\n]/g, '?')
    .replace(/ +$/, (spaces) => '\\ '.repeat(spaces.length));
  return `/${escaped}`;
}

/** `2.0 MB`, or `812 bytes` below a tenth of a MB. */
export function formatSize(bytes: number): string {
  return bytes >= MIB / 10 ? `${(bytes / MIB).toFixed(1)} MB` : `${bytes} bytes`;
}
