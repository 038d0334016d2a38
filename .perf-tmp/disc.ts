import { loadMcpTools } from '@langchain/mcp-adapters';
import { createMcpToolAdapter, createMcpToolEntries, listAllTools, createClientCaller } from '../src/mcp/tool-adapter.js';
import { fingerprintTool } from '../src/mcp/fingerprint.js';
import { detectPathArguments } from '../src/sandbox/path-arguments.js';
import { resolveToolNames } from '../src/mcp/naming.js';
import { inferCapabilities } from '../src/registry/capabilities.js';
import { compileArgumentValidator } from '../src/mcp/json-schema.js';
import { sanitizeDescription } from '../src/mcp/sanitize.js';
import { toStructuredTool } from '../src/mcp/structured-tool.js';
import { connectBench } from '../bench/connect.js';
import { compare, medians } from '../bench/harness.js';

const conn = await connectBench('in-memory', { extraTools: 496 });
const client = conn.client;
const tools = await listAllTools(client);
const caller = createClientCaller(client, 'bench');
const time = (fn: () => unknown, n = 20) => { fn(); fn(); const t = performance.now(); for (let i = 0; i < n; i++) fn(); return ((performance.now() - t) / n * 1000).toFixed(0); };
for (let rep = 0; rep < 2; rep++) {
console.log('fingerprint', time(() => tools.map((t) => fingerprintTool(JSON.parse(JSON.stringify(t))))));
console.log('fingerprint(same obj)', time(() => tools.map((t) => fingerprintTool(t))));
console.log('pathArgs', time(() => tools.map((t) => detectPathArguments(t.inputSchema as never))));
console.log('names', time(() => resolveToolNames(tools.map((t) => ({ id: `mcp:bench/${t.name}`, originalName: t.name, serverName: 'bench' })))));
console.log('caps', time(() => tools.map((t) => inferCapabilities({ name: t.name, annotations: t.annotations, trusted: false }))));
console.log('validator', time(() => tools.map((t) => compileArgumentValidator(t.inputSchema))));
console.log('sanitize', time(() => tools.map((t) => sanitizeDescription(t.description ?? '', {}))));
console.log('entries', time(() => createMcpToolEntries({ serverName: 'bench', tools, caller })));
const entries = createMcpToolEntries({ serverName: 'bench', tools, caller });
console.log('structured', time(() => entries.map((e) => toStructuredTool(e.descriptor, (r) => e.execute(r.args, r.context)))));
}
const samples = await compare(
  [
    { name: 'ours', call: () => createMcpToolAdapter({ serverName: 'bench', client }).tools() },
    { name: 'peer', call: () => loadMcpTools('bench', client) },
    { name: 'list', call: () => listAllTools(client) },
  ],
  { warmup: 2, rounds: 8, perRound: 2 },
);
console.log(medians(samples));
await conn.close();
