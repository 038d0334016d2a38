// Queries the size-cap guard (large-files.ts) makes through the sandbox's private index.

/** Runs one git command against the sandbox's private index; resolves to its stdout. */
export type IndexGit = (args: readonly string[], input?: string) => Promise<string>;

/**
 * The object type (`blob`, `tree`, `commit`, or `missing`) at each path of a commit, in one
 * `cat-file --batch-check`. Its input is line-based, so a path with a line break is reported
 * as `unknown` (and treated as a conflict).
 */
export async function objectTypes(
  git: IndexGit,
  commit: string,
  paths: readonly string[],
): Promise<Map<string, string>> {
  const types = new Map<string, string>();
  const queries = [...new Set(paths)].filter((path) => {
    if (!/[\r\n]/.test(path)) return true;
    types.set(path, 'unknown');
    return false;
  });
  if (queries.length === 0) return types;
  const lines = (
    await git(
      ['cat-file', '--batch-check=%(objecttype)'],
      queries.map((path) => `${commit}:${path}\n`).join(''),
    )
  ).split('\n');
  for (const [index, path] of queries.entries()) {
    const line = lines[index] ?? '';
    types.set(path, line.endsWith(' missing') ? 'missing' : line);
  }
  return types;
}

export function nulList(paths: readonly string[]): string {
  return paths.map((path) => `${path}\0`).join('');
}
