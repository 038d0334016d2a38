// Host process for the exit-hook and orphan-reaping tests: starts a stubborn server (ignores
// stdin EOF and SIGTERM) and prints its pid. Default: exits at once without closing it (the exit
// hook must kill the group). With `hold`: stays alive until the test kills it with SIGKILL, so no
// hook runs and only the pid record in $AGENTS_SERVERS_RUN_DIR lets a later host reap the group.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { createStdioTransport } from '../../src/servers/stdio-transport.js';
import { FAULT_SERVER } from './fixture.js';

const hold = process.argv[2] === 'hold';
const transport = createStdioTransport({
  serverName: 'orphan',
  command: process.execPath,
  args: [FAULT_SERVER, 'stubborn'],
});
const client = new Client({ name: 'exit-host', version: '1.0.0' });
await client.connect(transport);
process.stdout.write(`${transport.pid}\n`);
if (hold) setInterval(() => undefined, 1 << 30);
else process.exit(0);
