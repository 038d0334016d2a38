import { createHash } from 'node:crypto';
import { canonicalJson } from '../src/mcp/fingerprint.js';
import { detectPathArguments } from '../src/sandbox/path-arguments.js';
import { resolveToolNames } from '../src/mcp/naming.js';
import { inferCapabilities } from '../src/registry/capabilities.js';
import { sanitizeDescription } from '../src/mcp/sanitize.js';
import { toStructuredTool } from '../src/mcp/structured-tool.js';
import { createMcpToolEntries, listAllTools, createClientCaller } from '../src/mcp/tool-adapter.js';
import { connectBench } from '../bench/connect.js';
const conn = await connectBench('in-memory', { extraTools: 496 });
const tools = await listAllTools(conn.client);
const caller = createClientCaller(conn.client, 'bench');
const entries = createMcpToolEntries({ serverName: 'bench', tools, caller });
const cases: Record<string, () => unknown> = {
  canonical: () => tools.map((t) => canonicalJson(t)),
  hashOnly: () => tools.map((t) => createHash('sha256').update(t.name).digest('hex')),
  stringify: () => tools.map((t) => JSON.stringify(t)),
  detect: () => tools.map((t) => detectPathArguments(t.inputSchema as never)),
  caps: () => tools.map((t) => inferCapabilities({ name: t.name, annotations: t.annotations, trusted: false })),
  names: () => resolveToolNames(tools.map((t) => ({ id: `mcp:bench/${t.name}`, originalName: t.name, serverName: 'bench' }))),
  sanitize: () => tools.map((t) => sanitizeDescription(t.description ?? '', {})),
  entries: () => createMcpToolEntries({ serverName: 'bench', tools, caller }),
  structured: () => entries.map((e) => toStructuredTool(e.descriptor, (r) => e.execute(r.args, r.context))),
};
const res: Record<string, number[]> = {};
for (let round = 0; round < 15; round++) for (const [k, fn] of Object.entries(cases)) {
  const t = performance.now(); for (let i = 0; i < 5; i++) fn(); (res[k] ??= []).push((performance.now() - t) / 5 * 1000);
}
for (const [k, v] of Object.entries(res)) { v.sort((a, b) => a - b); console.log(k.padEnd(12), Math.round(v[Math.floor(v.length / 2)]!), 'µs / 500'); }
await conn.close();
