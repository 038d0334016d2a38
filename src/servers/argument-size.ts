// Worst-case JSON expansion of one UTF-16 code unit: a control character becomes `\u00XX`.
const MAX_EXPANSION = 6;
// Past this many values the walk stops estimating and measures exactly.
const MAX_WALK_NODES = 10_000;

/**
 * The UTF-8 size of `JSON.stringify(args)` when it may exceed `limitBytes`, else undefined.
 * Cheap for ordinary calls: a walk adds up string lengths (times the worst-case JSON expansion)
 * plus a small allowance per value, and only arguments that could be over the limit are
 * serialized to measure them exactly.
 */
export function argumentBytesOverLimit(
  args: Record<string, unknown>,
  limitBytes: number,
): number | undefined {
  if (upperBound(args, limitBytes) <= limitBytes) return undefined;
  let json: string | undefined;
  try {
    json = JSON.stringify(args);
  } catch {
    // Unserializable (e.g. a BigInt): the SDK fails on it anyway; size is not the problem.
    return undefined;
  }
  if (json === undefined) return undefined;
  const bytes = Buffer.byteLength(json, 'utf8');
  return bytes > limitBytes ? bytes : undefined;
}

/** An upper bound of the JSON size, or Infinity once it passes `limitBytes` or the walk budget. */
function upperBound(root: unknown, limitBytes: number): number {
  let total = 0;
  let nodes = 0;
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const value = stack.pop();
    nodes += 1;
    if (nodes > MAX_WALK_NODES) return Number.POSITIVE_INFINITY;
    if (typeof value === 'string') {
      total += value.length * MAX_EXPANSION + 2;
    } else if (Array.isArray(value)) {
      total += 2 + value.length;
      for (const item of value) stack.push(item);
    } else if (typeof value === 'object' && value !== null) {
      total += 2;
      for (const [key, item] of Object.entries(value)) {
        total += key.length * MAX_EXPANSION + 4;
        stack.push(item);
      }
    } else {
      // Numbers, booleans, null: at most ~24 characters each.
      total += 24;
    }
    if (total > limitBytes) return Number.POSITIVE_INFINITY;
  }
  return total;
}
