import * as crypto from 'node:crypto';

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
// intermediate arrays, closures or joins; JSON.stringify only where escaping may be needed.
function writeCanonical(value: unknown): string {
  switch (typeof value) {
    case 'string':
      // Short values repeat as much as keys do (`"string"`, `"object"`, enum members).
      return value.length <= MAX_CACHED_KEY_LENGTH ? quoteKey(value) : quote(value);
    case 'number':
      // What JSON.stringify writes: the shortest round-trip form, `null` for NaN/Infinity.
      return Number.isFinite(value) ? String(value) : 'null';
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object':
      break;
    default: {
      const text = JSON.stringify(value);
      return text === undefined ? 'null' : text;
    }
  }
  if (value === null) return 'null';
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
  if (keys.length > 1) sortKeys(keys);
  let out = '{';
  let first = true;
  for (let index = 0; index < keys.length; index++) {
    const key = keys[index]!;
    const member = record[key];
    if (member === undefined || typeof member === 'function') continue;
    if (!first) out += ',';
    first = false;
    out += quoteKey(key);
    out += ':';
    out += writeCanonical(member);
  }
  return `${out}}`;
}

/**
 * Sorts keys in the order of `Array.prototype.sort()` without a comparator (UTF-16 code units,
 * which is what `<` compares for strings). Schema objects have a handful of keys, and an
 * insertion sort there beats the generic sort's set-up; long lists use the built-in.
 */
function sortKeys(keys: string[]): void {
  if (keys.length > 16) {
    keys.sort();
    return;
  }
  for (let index = 1; index < keys.length; index++) {
    const key = keys[index]!;
    let slot = index - 1;
    while (slot >= 0 && keys[slot]! > key) {
      keys[slot + 1] = keys[slot]!;
      slot--;
    }
    keys[slot + 1] = key;
  }
}

// Characters JSON.stringify escapes: quote, backslash, controls, and (lone) surrogates. A
// string without them is written as is, which spares a native call and a copy for most.
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

function quote(text: string): string {
  return NEEDS_ESCAPE.test(text) ? JSON.stringify(text) : `"${text}"`;
}

// Schema keys repeat across every tool (`type`, `properties`, `description`, ...). Bounded in
// count and key length: the keys come from untrusted servers.
const QUOTED_KEY_LIMIT = 2048;
const MAX_CACHED_KEY_LENGTH = 64;
const quotedKeys = new Map<string, string>();

function quoteKey(key: string): string {
  let quoted = quotedKeys.get(key);
  if (quoted !== undefined) return quoted;
  quoted = quote(key);
  if (key.length <= MAX_CACHED_KEY_LENGTH && quotedKeys.size < QUOTED_KEY_LIMIT) {
    quotedKeys.set(key, quoted);
  }
  return quoted;
}

// One-shot hashing (Node ≥ 20.12) skips building a Hash stream object per tool.
const sha256Hex: (text: string) => string =
  typeof crypto.hash === 'function'
    ? (text) => crypto.hash('sha256', text, 'hex')
    : (text) => crypto.createHash('sha256').update(text).digest('hex');

/**
 * sha256 (hex) of the canonical JSON of a whole wire tool definition: name, title,
 * description, inputSchema, outputSchema, annotations, `_meta` and anything else the server
 * sent. Any change anywhere, e.g. one nested property description, changes the fingerprint.
 */
export function fingerprintTool(tool: unknown): string {
  return sha256Hex(canonicalJson(tool));
}
