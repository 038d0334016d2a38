// Host process for the exit-hook and orphan-reaping tests: starts a stubborn server (ignores
// stdin EOF and SIGTERM) and prints its pid. Default: exits at once without closing it (the exit
// hook must kill the group). With `hold`: stays alive until the test kills it with SIGKILL, so no
// hook runs and only the pid record in $AGENTS_SERVERS_RUN_DIR lets a later host reap the group.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { tmpdir } from 'node:os';
import { resolveConfinement } from '../../src/confinement/confinement.js';
import { createStdioTransport } from '../../src/servers/stdio-transport.js';
import { FAULT_SERVER } from './fixture.js';

const hold = process.argv[2] === 'hold';
// With `confined`: the server runs under bubblewrap (required), so it must die with its host
// (--die-with-parent) even though nothing reaps it.
const launch = process.argv.includes('confined')
  ? resolveConfinement({ mode: 'required' }, { sandboxRoot: tmpdir() }).wrap(
      process.execPath,
      [FAULT_SERVER, 'stubborn'],
      undefined,
    )
  : { command: process.execPath, args: [FAULT_SERVER, 'stubborn'] };
const transport = createStdioTransport({
  serverName: 'orphan',
  command: launch.command,
  args: launch.args,
  signalExitCodes: launch.command !== process.execPath,
});
const client = new Client({ name: 'exit-host', version: '1.0.0' });
await client.connect(transport);
process.stdout.write(`${transport.pid}\n`);
if (hold) setInterval(() => undefined, 1 << 30);
else process.exit(0);
