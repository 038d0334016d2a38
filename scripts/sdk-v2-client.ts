/**
 * The side-by-side figure of `scripts/conformance.sh` for 2026-07-28: a small client on the MCP
 * SDK v2 packages as documented (auto version negotiation, the SDK's own OAuth flow), run on the
 * same scenarios as ours. The suite passes the mock server's URL as the last argument.
 */
import {
  Client,
  StreamableHTTPClientTransport,
  UnauthorizedError,
  type OAuthClientProvider,
} from '@modelcontextprotocol/client';

const url = new URL(process.argv.at(-1) ?? '');
const context = JSON.parse(process.env['MCP_CONFORMANCE_CONTEXT'] ?? '{}') as Record<
  string,
  string
>;
let pending: { code: string; iss?: string } | undefined;
const memory: Record<string, unknown> = {};
const provider: OAuthClientProvider = {
  redirectUrl: 'http://127.0.0.1:1/callback',
  clientMetadataUrl: 'https://conformance-test.local/client-metadata.json',
  clientMetadata: {
    client_name: 'sdk-v2-client',
    redirect_uris: ['http://127.0.0.1:1/callback'],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: context['client_secret'] ? 'client_secret_basic' : 'none',
  },
  clientInformation: () =>
    (memory['client'] as never) ??
    (context['client_id']
      ? { client_id: context['client_id'], client_secret: context['client_secret'] }
      : undefined),
  saveClientInformation: (info) => void (memory['client'] = info),
  tokens: () => memory['tokens'] as never,
  saveTokens: (tokens) => void (memory['tokens'] = tokens),
  saveCodeVerifier: (verifier) => void (memory['verifier'] = verifier),
  codeVerifier: () => String(memory['verifier']),
  // The suite's authorization servers approve at once: follow to the redirect and keep the code.
  redirectToAuthorization: async (authorizationUrl) => {
    const response = await fetch(authorizationUrl, { redirect: 'manual' });
    const location = new URL(response.headers.get('location') ?? '', authorizationUrl);
    const code = location.searchParams.get('code') ?? '';
    const iss = location.searchParams.get('iss') ?? undefined;
    pending = iss === undefined ? { code } : { code, iss };
  },
};

async function connect(): Promise<Client> {
  for (let attempt = 0; ; attempt++) {
    const transport = new StreamableHTTPClientTransport(url, { authProvider: provider });
    const client = new Client(
      { name: 'sdk-v2-client', version: '1.0.0' },
      { versionNegotiation: { mode: 'auto' }, capabilities: { elicitation: { form: {} } } },
    );
    client.setRequestHandler('elicitation/create', () => ({ action: 'accept', content: {} }));
    try {
      await client.connect(transport);
      return client;
    } catch (error) {
      if (!(error instanceof UnauthorizedError) || pending === undefined || attempt > 2)
        throw error;
      await transport.finishAuth(pending.code, pending.iss);
      pending = undefined;
    }
  }
}

const client = await connect();
const { tools } = await client.listTools();
const example = (schema: { type?: unknown }) =>
  schema.type === 'number' || schema.type === 'integer'
    ? 1
    : schema.type === 'boolean'
      ? true
      : 'x';
for (const tool of tools) {
  const properties = (tool.inputSchema.properties ?? {}) as Record<string, { type?: unknown }>;
  const args = Object.fromEntries(Object.entries(properties).map(([k, s]) => [k, example(s)]));
  await client.callTool({ name: tool.name, arguments: args }).catch(() => undefined);
}
await client.close();
