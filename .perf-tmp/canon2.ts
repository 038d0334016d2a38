import { hash, createHash } from 'node:crypto';
import { canonicalJson } from '../src/mcp/fingerprint.js';
import { connectBench } from '../bench/connect.js';
import { listAllTools } from '../src/mcp/tool-adapter.js';
const quoted = new Map<string, string>();
function q(key: string): string { let s = quoted.get(key); if (s === undefined) { s = JSON.stringify(key); if (quoted.size < 4096) quoted.set(key, s); } return s; }
function B(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (value === null || typeof value !== 'object') { const t = JSON.stringify(value); return t === undefined ? 'null' : t; }
  if (Array.isArray(value)) { let out = '['; for (let i = 0; i < value.length; i++) { if (i > 0) out += ','; const item: unknown = value[i]; out += item === undefined ? 'null' : B(item); } return out + ']'; }
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record); if (keys.length > 1) keys.sort();
  let out = '{'; let first = true;
  for (const key of keys) { const m = record[key]; if (m === undefined || typeof m === 'function') continue; if (!first) out += ','; first = false; out += q(key); out += ':'; out += B(m); }
  return out + '}';
}
const NEEDS = /["\\\u0000-\u001f\ud800-\udfff]/;
function D(value: unknown): string {
  if (typeof value === 'string') return NEEDS.test(value) ? JSON.stringify(value) : '"' + value + '"';
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : 'null';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (value === null || typeof value !== 'object') { const t = JSON.stringify(value); return t === undefined ? 'null' : t; }
  if (Array.isArray(value)) { let out = '['; for (let i = 0; i < value.length; i++) { if (i > 0) out += ','; const item: unknown = value[i]; out += item === undefined ? 'null' : D(item); } return out + ']'; }
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record); if (keys.length > 1) keys.sort();
  let out = '{'; let first = true;
  for (const key of keys) { const m = record[key]; if (m === undefined || typeof m === 'function') continue; if (!first) out += ','; first = false; out += q(key); out += ':'; out += D(m); }
  return out + '}';
}
// C: parts array
function C(value: unknown, parts: string[]): void {
  if (typeof value === 'string') { parts.push(JSON.stringify(value)); return; }
  if (value === null || typeof value !== 'object') { const t = JSON.stringify(value); parts.push(t === undefined ? 'null' : t); return; }
  if (Array.isArray(value)) { parts.push('['); for (let i = 0; i < value.length; i++) { if (i > 0) parts.push(','); const item: unknown = value[i]; if (item === undefined) parts.push('null'); else C(item, parts); } parts.push(']'); return; }
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record); if (keys.length > 1) keys.sort();
  parts.push('{'); let first = true;
  for (const key of keys) { const m = record[key]; if (m === undefined || typeof m === 'function') continue; if (!first) parts.push(','); first = false; parts.push(q(key) + ':'); C(m, parts); }
  parts.push('}');
}
const conn = await connectBench('in-memory', { extraTools: 496 });
const tools = await listAllTools(conn.client);
for (const t of tools) { const p: string[] = []; C(t, p); if (D(t) !== canonicalJson(t) || B(t) !== canonicalJson(t) || p.join('') !== canonicalJson(t)) throw new Error('x'); }
const cases: Record<string, () => unknown> = {
  A: () => tools.map((t) => canonicalJson(t)),
  B: () => tools.map((t) => B(t)),
  D: () => tools.map((t) => D(t)),
  C: () => tools.map((t) => { const p: string[] = []; C(t, p); return p.join(''); }),
  createHash: () => tools.map((t) => createHash('sha256').update(B(t)).digest('hex')),
  hash: () => tools.map((t) => hash('sha256', B(t), 'hex')),
};
const res: Record<string, number[]> = {};
for (let round = 0; round < 21; round++) for (const [k, fn] of Object.entries(cases)) {
  const t = performance.now(); for (let i = 0; i < 5; i++) fn(); (res[k] ??= []).push((performance.now() - t) / 5 * 1000);
}
for (const [k, v] of Object.entries(res)) { v.sort((a, b) => a - b); console.log(k.padEnd(12), Math.round(v[Math.floor(v.length / 2)]!), 'µs / 500'); }
await conn.close();
