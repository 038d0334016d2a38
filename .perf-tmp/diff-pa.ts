import { detectPathArguments as oldD } from './path-arguments.old.js';
import { detectPathArguments as newD } from '../src/sandbox/path-arguments.js';
let seed = 42;
const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
const pick = <T,>(a: T[]) => a[Math.floor(rnd() * a.length)]!;
const names = ['path', 'source', 'uri', 'url', 'outputFile', 'repo_path', 'content', 'x', 'edits', 'target', 'file-name', 'dir', 'root', 'items'];
const descs = [undefined, 'Source code', 'A file:// URI', 'the path', '', 'web page', 'Root directory'];
function gen(d: number): Record<string, unknown> {
  const r = rnd();
  const s: Record<string, unknown> = {};
  if (d > 5) return { type: pick(['string', 'number', ['string', 'null']]) };
  if (r < 0.1) return { $ref: pick(['#/$defs/A', '#/$defs/B', '#/definitions/C', '#/$defs/missing', 'http://x']) };
  const t = pick(['string', 'object', 'array', undefined, ['string', 'null'], ['object', 'null'], 'number']);
  if (t !== undefined) s.type = t;
  const desc = pick(descs); if (desc !== undefined) s.description = desc;
  if (t === 'object' || (t === undefined && rnd() < 0.3) || (Array.isArray(t) && t.includes('object'))) {
    const props: Record<string, unknown> = {};
    const n = Math.floor(rnd() * 4);
    for (let i = 0; i < n; i++) props[pick(names)] = gen(d + 1);
    s.properties = props;
  }
  if (t === 'array' || rnd() < 0.1) s.items = gen(d + 1);
  if (rnd() < 0.15) s[pick(['anyOf', 'oneOf', 'allOf'])] = [gen(d + 1), gen(d + 1)];
  return s;
}
let count = 0, nonEmpty = 0;
for (let i = 0; i < 20000; i++) {
  const root = gen(0) as Record<string, unknown>;
  root.type = 'object';
  root.properties ??= { [pick(names)]: gen(1) };
  root.$defs = { A: gen(2), B: { type: 'object', properties: { path: { type: 'string' }, next: { $ref: '#/$defs/A' }, self: { $ref: '#/$defs/B' } } } };
  if (rnd() < 0.5) root.definitions = { C: gen(2) };
  const a = JSON.stringify(oldD(root as never)); const b = JSON.stringify(newD(root as never));
  if (a !== b) { console.log('MISMATCH', JSON.stringify(root), a, b); process.exit(1); }
  count++; if (a !== '[]') nonEmpty++;
}
console.log('ok', count, nonEmpty);
