import { createMcpToolEntries, listAllTools, createClientCaller } from '../src/mcp/tool-adapter.js';
import { connectBench } from '../bench/connect.js';
const conn = await connectBench('in-memory', { extraTools: 496 });
const tools = await listAllTools(conn.client);
const caller = createClientCaller(conn.client, 'bench');
const t = performance.now();
for (let i = 0; i < 200; i++) createMcpToolEntries({ serverName: 'bench', tools, caller });
console.log(((performance.now() - t) / 200).toFixed(0), 'ms... µs?', ((performance.now() - t) / 200 * 1000).toFixed(0), 'µs per 500');
await conn.close();
