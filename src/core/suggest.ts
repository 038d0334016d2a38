/**
 * "Did you mean" for typos on the command line and in config files: the closest known word within a small edit distance
 * (insertions, deletions, substitutions and swaps of neighbours, so `--inptu` finds `--input`).
 */

/** Optimal-string-alignment distance: Levenshtein plus adjacent transpositions. */
export function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) =>
    Array.from({ length: cols }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        best = Math.min(best, d[i - 2]![j - 2]! + 1);
      d[i]![j] = best;
    }
  }
  return d[a.length]![b.length]!;
}

/** How far a typo may be from the word meant: one edit for short words, two from five letters. */
function tolerance(word: string): number {
  return word.length < 5 ? 1 : 2;
}

/**
 * The known word `typed` most likely meant, or undefined when none is close: the unique word it
 * is a prefix of (`--inp` → `--input`), else the nearest within {@link tolerance}, ties broken
 * by the order of `known`.
 */
export function closest(typed: string, known: readonly string[]): string | undefined {
  if (typed === '') return undefined;
  const extending = known.filter((word) => word.startsWith(typed));
  if (extending.length === 1) return extending[0];
  let best: { word: string; distance: number } | undefined;
  for (const word of known) {
    const distance = editDistance(typed, word);
    if (distance > tolerance(word) || distance >= word.length) continue;
    if (!best || distance < best.distance) best = { word, distance };
  }
  return best?.word;
}
