import { loadMcpTools } from '@langchain/mcp-adapters';
import { createMcpToolAdapter, listAllTools } from '../src/mcp/tool-adapter.js';
import { connectBench } from '../bench/connect.js';
import { compare, medians } from '../bench/harness.js';
const conn = await connectBench('in-memory', { extraTools: 496 });
const client = conn.client;
for (let i = 0; i < 3; i++) {
const samples = await compare(
  [
    { name: 'ours', call: () => createMcpToolAdapter({ serverName: 'bench', client }).tools() },
    { name: 'peer', call: () => loadMcpTools('bench', client) },
    { name: 'list', call: () => listAllTools(client) },
  ],
  { warmup: 2, rounds: 10, perRound: 2 },
);
const m = medians(samples);
console.log([...m].map(([k, v]) => `${k}=${(v / 1000).toFixed(1)}ms`).join(' '), 'ratio', (m.get('ours')! / m.get('peer')!).toFixed(2));
}
await conn.close();
