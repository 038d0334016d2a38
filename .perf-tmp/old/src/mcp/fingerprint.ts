import { createHash } from 'node:crypto';

/**
 * Serializes a JSON value with object keys sorted at every depth, so two equal definitions
 * always give the same text whatever order the server wrote the keys in. `undefined` members
 * are dropped, as in `JSON.stringify`.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    const text = JSON.stringify(value);
    return text === undefined ? 'null' : text;
  }
  if (Array.isArray(value)) {
    return `[${value.map((item) => (item === undefined ? 'null' : canonicalJson(item))).join(',')}]`;
  }
  const record = value as Record<string, unknown>;
  const parts: string[] = [];
  for (const key of Object.keys(record).sort()) {
    const member = record[key];
    if (member === undefined || typeof member === 'function') continue;
    parts.push(`${JSON.stringify(key)}:${canonicalJson(member)}`);
  }
  return `{${parts.join(',')}}`;
}

/**
 * sha256 (hex) of the canonical JSON of a whole wire tool definition: name, title,
 * description, inputSchema, outputSchema, annotations, `_meta` and anything else the server
 * sent. Any change anywhere, e.g. one nested property description, changes the fingerprint.
 */
export function fingerprintTool(tool: unknown): string {
  return createHash('sha256').update(canonicalJson(tool)).digest('hex');
}
