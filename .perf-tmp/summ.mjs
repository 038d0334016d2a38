import { readFileSync, readdirSync } from 'node:fs';
const dir = process.argv[2];
const f = readdirSync(dir)[0];
const p = JSON.parse(readFileSync(dir + '/' + f, 'utf8'));
const self = new Map(); const byId = new Map(p.nodes.map((n) => [n.id, n]));
const dt = new Map();
for (let i = 0; i < p.samples.length; i++) dt.set(p.samples[i], (dt.get(p.samples[i]) ?? 0) + (p.timeDeltas[i] ?? 0));
// inclusive time per function name+url
const parent = new Map(); for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const incl = new Map();
for (const [id, t] of dt) {
  const seen = new Set();
  let cur = id;
  while (cur !== undefined) { const n = byId.get(cur); const key = `${n.callFrame.functionName} ${n.callFrame.url.split('/').slice(-2).join('/')}:${n.callFrame.lineNumber}`; if (!seen.has(key)) { seen.add(key); incl.set(key, (incl.get(key) ?? 0) + t); } cur = parent.get(cur); }
  const n = byId.get(id); const key = `${n.callFrame.functionName} ${n.callFrame.url.split('/').slice(-2).join('/')}:${n.callFrame.lineNumber}`;
  self.set(key, (self.get(key) ?? 0) + t);
}
const top = (m, k) => [...m].sort((a, b) => b[1] - a[1]).slice(0, k).map(([n, t]) => `${(t / 1000).toFixed(0).padStart(7)}ms ${n}`).join('\n');
console.log('SELF\n' + top(self, 30)); console.log('INCL\n' + top(incl, 45));
