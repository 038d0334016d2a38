import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { canonicalJson, fingerprintTool } from '../../src/mcp/fingerprint.js';

// The straightforward definition the fast writer must match byte for byte: fingerprints are
// persisted (tool pins), so the canonical text may never change.
function reference(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    const text = JSON.stringify(value);
    return text === undefined ? 'null' : text;
  }
  if (Array.isArray(value)) {
    return `[${value.map((item) => (item === undefined ? 'null' : reference(item))).join(',')}]`;
  }
  const record = value as Record<string, unknown>;
  const parts: string[] = [];
  for (const key of Object.keys(record).sort()) {
    const member = record[key];
    if (member === undefined || typeof member === 'function') continue;
    parts.push(`${JSON.stringify(key)}:${reference(member)}`);
  }
  return `{${parts.join(',')}}`;
}

// Deterministic pseudo-random JSON-ish values, with the awkward cases mixed in.
function generate(seed: number, depth: number): unknown {
  let state = seed;
  const next = (): number => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648;
  };
  const leaves: unknown[] = [
    'plain',
    'quote " and \\ backslash',
    'new\nline\ttab\u0001',
    'lone \ud800 surrogate',
    'pair 😀 and é and \u2028',
    '',
    0,
    -0,
    1.5e300,
    -42,
    Number.NaN,
    Number.POSITIVE_INFINITY,
    true,
    false,
    null,
    undefined,
    () => 1,
  ];
  const build = (level: number): unknown => {
    const roll = next();
    if (level >= depth || roll < 0.4) return leaves[Math.floor(next() * leaves.length)];
    if (roll < 0.65) return Array.from({ length: Math.floor(next() * 4) }, () => build(level + 1));
    const record: Record<string, unknown> = {};
    const keys = ['type', 'b', 'a', '10', '9', 'é', 'key "q"', '__proto_', 'z'.repeat(80)];
    for (let index = Math.floor(next() * 5); index > 0; index--) {
      record[keys[Math.floor(next() * keys.length)]!] = build(level + 1);
    }
    return record;
  };
  return build(0);
}

describe('canonicalJson', () => {
  it('matches the reference definition on 2,000 generated values', () => {
    for (let seed = 1; seed <= 2000; seed++) {
      const value = generate(seed, 5);
      expect(canonicalJson(value)).toBe(reference(value));
    }
  });

  it('gives the same text for both key orders and keeps integer-like keys in string order', () => {
    expect(canonicalJson({ b: 1, a: { 9: 'x', 10: 'y' } })).toBe(
      canonicalJson({ a: { 10: 'y', 9: 'x' }, b: 1 }),
    );
    expect(canonicalJson({ 9: 1, 10: 2 })).toBe('{"10":2,"9":1}');
  });
});

describe('fingerprintTool', () => {
  it('is the sha256 of the reference canonical text of the whole definition', () => {
    const tool = {
      name: 'read_invoice',
      title: 'Read',
      description: 'Reads an "invoice"\n\u2028é',
      inputSchema: {
        type: 'object',
        properties: { id: { type: 'string', description: 'Invoice id' }, n: { enum: [1.5, -0] } },
        required: ['id'],
      },
      annotations: { readOnlyHint: true, destructiveHint: undefined },
      _meta: { 'a/b': [undefined, {}, []] },
    };
    const expected = createHash('sha256').update(reference(tool)).digest('hex');
    expect(fingerprintTool(tool)).toBe(expected);
    expect(fingerprintTool(structuredClone(tool))).toBe(expected);
  });
});
