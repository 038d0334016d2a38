// Host process for the exit-hook test: starts a stubborn server (ignores stdin EOF and SIGTERM),
// prints its pid, then exits without closing it. The exit hook must kill the group.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { createStdioTransport } from '../../src/servers/stdio-transport.js';
import { FAULT_SERVER } from './fixture.js';

const transport = createStdioTransport({
  serverName: 'orphan',
  command: process.execPath,
  args: [FAULT_SERVER, 'stubborn'],
});
const client = new Client({ name: 'exit-host', version: '1.0.0' });
await client.connect(transport);
process.stdout.write(`${transport.pid}\n`);
process.exit(0);
