import { canonicalJson as old } from '../src/mcp/fingerprint.js';
import { createHash } from 'node:crypto';
import { connectBench } from '../bench/connect.js';
import { listAllTools } from '../src/mcp/tool-adapter.js';
function write(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (value === null || typeof value !== 'object') {
    const text = JSON.stringify(value);
    return text === undefined ? 'null' : text;
  }
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out += ',';
      const item: unknown = value[i];
      out += item === undefined ? 'null' : write(item);
    }
    return out + ']';
  }
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record);
  if (keys.length > 1) keys.sort();
  let out = '{';
  for (const key of keys) {
    const member = record[key];
    if (member === undefined || typeof member === 'function') continue;
    if (out.length > 1) out += ',';
    out += JSON.stringify(key) + ':' + write(member);
  }
  return out + '}';
}
const conn = await connectBench('in-memory', { extraTools: 496 });
const tools = await listAllTools(conn.client);
for (const t of tools) if (write(t) !== old(t)) throw new Error('mismatch');
const time = (fn: () => unknown, n = 50) => { for (let i = 0; i < 5; i++) fn(); const t = performance.now(); for (let i = 0; i < n; i++) fn(); return ((performance.now() - t) / n * 1000).toFixed(0); };
for (let r = 0; r < 3; r++) {
  console.log('old', time(() => tools.map((t) => old(t))), 'new', time(() => tools.map((t) => write(t))),
    'hash', time(() => tools.map((t) => createHash('sha256').update(write(t)).digest('hex'))),
    'stringify', time(() => tools.map((t) => JSON.stringify(t))));
}
await conn.close();
