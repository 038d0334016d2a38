/**
 * The client command of the MCP conformance suite (`scripts/conformance.sh client`): runs
 * `agents mcp-client URL --strict --call-all --auto-approve` in this process, with the OAuth flags a scenario's context
 * (`MCP_CONFORMANCE_CONTEXT`: pre-registered client, client credentials) calls for. Secrets go
 * through environment variables and `${VAR}` references, as a person would pass them.
 *
 * The suite's mock authorization servers approve without a person, so the authorization URL is
 * visited with `--authorize follow`; the code comes back to the loopback redirect listener.
 */
import { main } from '../src/cli/main.js';

/** The client ID metadata document URL the suite's CIMD scenario expects a client to present. */
const CLIENT_METADATA_URL = 'https://conformance-test.local/client-metadata.json';

const url = process.argv.at(-1);
if (url === undefined || !/^https?:\/\//.test(url)) {
  process.stderr.write('usage: conformance-client.ts URL (run by the conformance suite)\n');
  process.exit(2);
}
const scenario = process.env['MCP_CONFORMANCE_SCENARIO'] ?? '';
const context = JSON.parse(process.env['MCP_CONFORMANCE_CONTEXT'] ?? '{}') as Record<
  string,
  string | undefined
>;
// The suite expects a client that calls every tool and answers elicitations by itself.
const argv = [
  'mcp-client',
  url,
  '--strict',
  '--call-all',
  '--auto-approve',
  '--authorize',
  'follow',
];
argv.push('--client-metadata-url', CLIENT_METADATA_URL);
if (scenario.startsWith('auth/client-credentials')) argv.push('--grant', 'client_credentials');
if (context['client_id'] !== undefined) argv.push('--client-id', context['client_id']);
if (context['client_secret'] !== undefined) {
  process.env['CONFORMANCE_CLIENT_SECRET'] = context['client_secret'];
  argv.push('--client-secret', '${CONFORMANCE_CLIENT_SECRET}');
}
if (context['private_key_pem'] !== undefined) {
  process.env['CONFORMANCE_PRIVATE_KEY'] = context['private_key_pem'];
  argv.push('--private-key', '${CONFORMANCE_PRIVATE_KEY}');
  argv.push('--algorithm', context['signing_algorithm'] ?? 'ES256');
}
process.exitCode = await main(argv);
