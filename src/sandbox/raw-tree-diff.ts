import type { RawChange } from './nested-repos.js';

/** A `diff-tree --raw` line with both blob ids. */
export interface RawTreeChange extends RawChange {
  srcSha: string;
  dstSha: string;
}

/** Parses `git diff-tree -r -z --raw` output (`:srcmode dstmode src dst S\0path\0`). */
export function parseRawTreeDiff(output: string): RawTreeChange[] {
  const fields = output.split('\0');
  const changes: RawTreeChange[] = [];
  for (let index = 0; index + 1 < fields.length; index += 2) {
    const meta = fields[index]!;
    const path = fields[index + 1]!;
    if (!meta.startsWith(':')) break;
    const [srcMode = '', dstMode = '', srcSha = '', dstSha = '', status = ''] = meta
      .slice(1)
      .split(' ');
    changes.push({ status: status.charAt(0), path, srcMode, dstMode, srcSha, dstSha });
  }
  return changes;
}
