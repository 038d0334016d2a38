import { createMcpToolAdapter } from '../src/mcp/tool-adapter.js';
import { connectBench } from '../bench/connect.js';
const conn = await connectBench('in-memory', { extraTools: 496 });
for (let i = 0; i < 60; i++) await createMcpToolAdapter({ serverName: 'bench', client: conn.client }).tools();
await conn.close();
