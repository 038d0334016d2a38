import { formatSize } from './size-cap.js';
import type { SkippedPath } from '../core/change-record.js';

const REASONS: Record<SkippedPath['reason'], string> = {
  'size-cap': 'over the snapshot size cap',
  'nested-repo': 'a nested git repository, kept only as a link',
  'git-name': 'a name git refuses to record',
  'empty-repo': 'a nested repository with no commit',
  'special-file': 'a fifo where git reads a file',
};

/** One line naming skipped paths and why: `big.bin (60.0 MiB, over the snapshot size cap), ...`. */
export function formatSkippedPaths(skipped: readonly SkippedPath[]): string {
  return skipped
    .map(
      (item) =>
        `${item.path} (${item.size === undefined ? '' : `${formatSize(item.size)}, `}${REASONS[item.reason]})`,
    )
    .join(', ');
}

/** The entries of `after` that are not in `before` (same path and reason). */
export function newSkippedPaths(
  before: readonly SkippedPath[],
  after: readonly SkippedPath[],
): SkippedPath[] {
  const known = new Set(before.map((item) => `${item.reason}\0${item.path}`));
  return after.filter((item) => !known.has(`${item.reason}\0${item.path}`));
}
