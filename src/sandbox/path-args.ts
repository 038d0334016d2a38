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

/**
 * Builds `SandboxPathMap.rewriteArgs`: rewrites the string values at each path-argument
 * location (`path`, `paths[]`, `edits[].file`) with `rewrite`, copying only the containers on
 * the way; parsed locations are kept, since a tool names the same ones on every call.
 */
export function createArgsRewriter(
  rewrite: (value: string, location: string) => string,
): (args: Record<string, unknown>, pathArguments: readonly string[]) => Record<string, unknown> {
  const parsedLocations = new Map<string, Segment[]>();
  return (args, pathArguments) => {
    let out = args;
    for (const location of pathArguments) {
      let segments = parsedLocations.get(location);
      if (segments === undefined) {
        segments = parseLocation(location);
        parsedLocations.set(location, segments);
      }
      out = rewriteAt(out, segments, 0, (value) => rewrite(value, location)) as Record<
        string,
        unknown
      >;
    }
    return out;
  };
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
