import { readFileSync, readdirSync } from 'node:fs';
const [dir, fname] = process.argv.slice(2);
const p = JSON.parse(readFileSync(dir + '/' + readdirSync(dir)[0], 'utf8'));
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const dt = new Map();
for (let i = 0; i < p.samples.length; i++) dt.set(p.samples[i], (dt.get(p.samples[i]) ?? 0) + (p.timeDeltas[i] ?? 0));
const total = (n) => (dt.get(n.id) ?? 0) + (n.children ?? []).reduce((a, c) => a + total(byId.get(c)), 0);
const agg = new Map();
for (const n of p.nodes) if (n.callFrame.functionName === fname) {
  for (const c of n.children ?? []) { const cn = byId.get(c); const k = `${cn.callFrame.functionName} ${cn.callFrame.url.split('/').slice(-2).join('/')}`; agg.set(k, (agg.get(k) ?? 0) + total(cn)); }
  agg.set('(self)', (agg.get('(self)') ?? 0) + (dt.get(n.id) ?? 0));
}
console.log([...agg].sort((a, b) => b[1] - a[1]).slice(0, 20).map(([k, t]) => `${(t / 1000).toFixed(0).padStart(6)}ms ${k}`).join('\n'));
