import { createHash } from 'node:crypto';

/**
 * Serializes a JSON value with object keys sorted at every depth, so two equal definitions
 * always give the same text whatever order the server wrote the keys in. `undefined` and
 * function members are dropped, as in `JSON.stringify`; `undefined` array items become `null`.
 *
 * The output is part of persisted fingerprints (tool pins), so it must never change format.
 */
export function canonicalJson(value: unknown): string {
  return writeCanonical(value);
}

// Hot during discovery (every tool, every refresh): one string built with `+=` (V8 ropes), no
// intermediate arrays, closures or joins; JSON.stringify only for keys and leaves.
function writeCanonical(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (value === null || typeof value !== 'object') {
    const text = JSON.stringify(value);
    return text === undefined ? 'null' : text;
  }
  if (Array.isArray(value)) {
    let out = '[';
    for (let index = 0; index < value.length; index++) {
      if (index > 0) out += ',';
      const item: unknown = value[index];
      out += item === undefined ? 'null' : writeCanonical(item);
    }
    return `${out}]`;
  }
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record);
  if (keys.length > 1) keys.sort();
  let out = '{';
  let first = true;
  for (const key of keys) {
    const member = record[key];
    if (member === undefined || typeof member === 'function') continue;
    if (!first) out += ',';
    first = false;
    out += `${JSON.stringify(key)}:${writeCanonical(member)}`;
  }
  return `${out}}`;
}

/**
 * sha256 (hex) of the canonical JSON of a whole wire tool definition: name, title,
 * description, inputSchema, outputSchema, annotations, `_meta` and anything else the server
 * sent. Any change anywhere, e.g. one nested property description, changes the fingerprint.
 */
export function fingerprintTool(tool: unknown): string {
  return createHash('sha256').update(canonicalJson(tool)).digest('hex');
}
