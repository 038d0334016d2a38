import { AIMessage } from '@langchain/core/messages';
import { ToolNode } from '@langchain/langgraph/prebuilt';
import { loadMcpTools } from '@langchain/mcp-adapters';
import { createMcpToolAdapter } from './src/mcp/tool-adapter.js';
import { connectFixture } from './test/fixtures/fixture-client.js';

const pair = await connectFixture({ tools: 'basic' });
const adapter = createMcpToolAdapter({ serverName: 'fx', client: pair.client });
const tools = await adapter.tools();
const node = new ToolNode(tools);
const byName = (n: string) => tools.find((t) => t.name === n)!;
const peer = await loadMcpTools('fx', pair.client);
const peerNode = new ToolNode(peer);
const peerBy = (n: string) => peer.find((t) => t.name === n)!;

async function median(label: string, fn: () => Promise<unknown>, n = 3000): Promise<number> {
  for (let i = 0; i < 300; i++) await fn();
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await fn();
    samples.push(performance.now() - t0);
  }
  samples.sort((a, b) => a - b);
  const m = samples[Math.floor(n / 2)]! * 1000;
  return m;
}
for (const [tool, args] of [['add', { a: 1, b: 2 }], ['echo', { text: 'x'.repeat(10_000) }], ['echo', { text: 'x'.repeat(1_000_000) }]] as const) {
  const n = tool === 'echo' && args.text.length > 100000 ? 300 : 3000;
  const raw = await median('raw', () => pair.client.callTool({ name: tool, arguments: args }), n);
  const direct = await median('direct', () => byName(tool).invoke(args), n);
  const call = await median('toolcall', () => byName(tool).invoke({ type: 'tool_call', id: 'c', name: tool, args }), n);
  const ai = new AIMessage({ content: '', tool_calls: [{ id: 'c', name: tool, args, type: 'tool_call' }] });
  const tn = await median('toolnode', () => node.invoke({ messages: [ai] }), n);
  const pdirect = await median('pdirect', () => peerBy(tool).invoke(args), n);
  const ptn = await median('ptoolnode', () => peerNode.invoke({ messages: [ai] }), n);
  console.log(`   peer: direct ${pdirect.toFixed(0)}µs (${(pdirect / raw).toFixed(2)}×) | ToolNode ${ptn.toFixed(0)}µs (${(ptn / raw).toFixed(2)}×)`);
  const label = tool === 'echo' ? `echo ${args.text.length}` : tool;
  console.log(`${label}: raw ${raw.toFixed(0)}µs | direct ${direct.toFixed(0)}µs (${(direct / raw).toFixed(2)}×) | tool-call invoke ${call.toFixed(0)}µs (${(call / raw).toFixed(2)}×) | ToolNode ${tn.toFixed(0)}µs (${(tn / raw).toFixed(2)}×)`);
}
await pair.close();
