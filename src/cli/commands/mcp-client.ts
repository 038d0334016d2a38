import { expandEnvReferences } from '../../config/env-references.js';
import type { McpProtocolChoice, OAuthSettings } from '../../config/server-schema.js';
import { AgentsError, AgentsErrorCode, errorMessage } from '../../errors.js';
import { exampleValueFromSchema } from '../../serving/example-value.js';
import {
  createBrowserAuthorizer,
  createFollowRedirectsAuthorizer,
  type Authorizer,
} from '../../servers/oauth/authorizers.js';
import { parseCommandLine, parsePositiveInteger, usageError } from '../args.js';
import type { Command, CommandContext } from '../command.js';

/** What happened to one tool call of {@link runMcpClient}. */
export interface McpClientCallReport {
  /** The server's own tool name. */
  tool: string;
  args: Record<string, unknown>;
  /** `ok`, `tool-error` (an `isError` result) or `failed` (the call threw). */
  outcome: 'ok' | 'tool-error' | 'failed';
  message?: string;
}

/** The summary of one smoke run against an MCP server. */
export interface McpClientReport {
  url: string;
  serverName?: string;
  protocolVersion?: string;
  tools: string[];
  calls: McpClientCallReport[];
}

/** Options of {@link runMcpClient}. */
export interface RunMcpClientOptions {
  /** Bearer token for the server, if it wants one (turns OAuth off). */
  token?: string;
  /**
   * OAuth settings used when the server answers 401 (default: self-registration, authorization
   * code with PKCE); tokens stay in memory for this run.
   */
  oauth?: Partial<OAuthSettings>;
  /** Takes the person to the authorization URL; default: print it (and open a browser if any). */
  authorize?: Authorizer;
  /** Call these tools (server-side names). Without it or `callAll`, nothing is called. */
  only?: readonly string[];
  /** Call every listed tool with arguments made up from its schema (conformance runs). */
  callAll?: boolean;
  /**
   * Accept the server's elicitation requests with example values (defaults first), for
   * unattended conformance runs. Default: decline them: nobody approved anything.
   */
  autoApprove?: boolean;
  /** Per-call timeout (default 30 000 ms). */
  callTimeoutMs?: number;
  /** MCP revision: `auto` (default) probes `server/discover`, then falls back to `initialize`. */
  protocol?: McpProtocolChoice;
  signal?: AbortSignal;
}

/**
 * Connects to a streamable-HTTP MCP server with the library's own adapter, lists its tools, calls
 * the ones asked for (`only`, or all with `callAll`) with arguments built from their input schema
 * (see `exampleValueFromSchema`), then ends the session (DELETE) and closes. Elicitation requests
 * are declined unless `autoApprove` (then accepted with example values, defaults applied). Throws (`SERVER_START_FAILED`) when the connection or listing fails; tool failures are
 * reported, not thrown.
 */
export async function runMcpClient(
  url: URL,
  options: RunMcpClientOptions = {},
): Promise<McpClientReport> {
  options.signal?.throwIfAborted();
  // Loaded on use: the SDK client, its HTTP transports and LangChain keep `agents --help` slow.
  const [
    { Client },
    { createMcpToolAdapter },
    { openOAuthClientSession },
    { versionNegotiationFor, revisionMismatchError },
  ] = await Promise.all([
    import('@modelcontextprotocol/client'),
    import('../../mcp/tool-adapter.js'),
    import('../../servers/oauth/client-session.js'),
    import('../../servers/protocol-negotiation.js'),
  ]);
  await using session = await openOAuthClientSession({
    url,
    ...(options.token === undefined
      ? { oauth: options.oauth ?? {} }
      : { headers: { authorization: `Bearer ${options.token}` } }),
    authorize:
      options.authorize ??
      createBrowserAuthorizer({
        mode: 'browser',
        print: (line) => process.stderr.write(`${line}\n`),
      }),
    loginCommand: `agents mcp-client ${url.href}`,
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  });
  const capabilities = { elicitation: { form: { applyDefaults: true } } };
  const makeClient = () => {
    const client = new Client(
      { name: 'agents-mcp-client', version: '0.1.0' },
      {
        capabilities,
        versionNegotiation: versionNegotiationFor(options.protocol ?? 'auto', 30_000),
      },
    );
    // No human is in this loop: a server's question (an approval in `agents serve`'s ask mode)
    // is declined unless the caller said to accept with example values (defaults first). On
    // 2026-07-28 questions come inside an `input_required` result; the SDK routes them here too.
    client.setRequestHandler('elicitation/create', (request) => {
      if (options.autoApprove !== true) return { action: 'decline' };
      const schema = request.params.mode === 'url' ? undefined : request.params.requestedSchema;
      const content = exampleValueFromSchema(schema);
      return {
        action: 'accept',
        content:
          typeof content === 'object' && content !== null && !Array.isArray(content)
            ? (content as Record<string, string | number | boolean>)
            : {},
      };
    });
    return client;
  };
  let connected: Awaited<ReturnType<typeof session.connect>>;
  try {
    connected = await session.connect(makeClient);
  } catch (error) {
    // A login that was refused (issuer mix-up) or cannot happen says so under its own code.
    if (
      AgentsError.hasCode(error, AgentsErrorCode.AuthRequired) ||
      AgentsError.hasCode(error, AgentsErrorCode.ConfigInvalid)
    )
      throw error;
    // The server answered, on another revision: say which, as `server add` does.
    const choice = options.protocol ?? 'auto';
    const mismatch = revisionMismatchError(
      error,
      url.href,
      choice,
      { serverName: url.href, phase: 'initialize' },
      {
        where: `--protocol ${choice}`,
        fix: 'Drop --protocol (or give the revision it speaks) and retry.',
      },
    );
    if (mismatch !== undefined) throw mismatch;
    throw new AgentsError(
      AgentsErrorCode.ServerStartFailed,
      `Could not initialize an MCP session with ${url.href}: ${errorMessage(error)}. Is the server running, and is the URL its MCP endpoint?`,
      { cause: error, details: { url: url.href } },
    );
  }
  const { client, transport } = connected;
  const serverName = client.getServerVersion()?.name ?? url.host;
  const report: McpClientReport = {
    url: url.href,
    serverName,
    tools: [],
    calls: [],
  };
  const revision = client.getNegotiatedProtocolVersion() ?? transport.protocolVersion;
  if (revision !== undefined) report.protocolVersion = revision;
  try {
    if (client.getServerCapabilities()?.tools === undefined) return report;
    const adapter = createMcpToolAdapter({
      serverName,
      client,
      callTimeoutMs: options.callTimeoutMs ?? 30_000,
      clientCapabilities: capabilities,
      // A smoke client calls everything it is shown; trust decisions are not its job.
      trusted: true,
    });
    const entries = await session.run(() =>
      adapter.listTools(options.signal === undefined ? {} : { signal: options.signal }),
    );
    report.tools = entries.map((entry) => entry.descriptor.originalName);
    for (const entry of entries) {
      const tool = entry.descriptor.originalName;
      const asked = options.callAll === true || options.only?.includes(tool) === true;
      if (!asked) continue;
      const example = exampleValueFromSchema(entry.descriptor.inputSchema);
      const args =
        typeof example === 'object' && example !== null && !Array.isArray(example)
          ? (example as Record<string, unknown>)
          : {};
      try {
        const result = await session.run(() =>
          adapter.execute(
            tool,
            args,
            options.signal === undefined ? {} : { signal: options.signal },
          ),
        );
        const text = result.content
          .map((block) => (block.type === 'text' ? block.text : `[${block.type}]`))
          .join(' ');
        report.calls.push({
          tool,
          args,
          outcome: result.isError === true ? 'tool-error' : 'ok',
          ...(text === '' ? {} : { message: text.slice(0, 200) }),
        });
      } catch (error) {
        report.calls.push({ tool, args, outcome: 'failed', message: errorMessage(error) });
      }
    }
    return report;
  } finally {
    // DELETE ends the session on the server; a 405 (server without session ends) is fine.
    await transport.terminateSession().catch(() => undefined);
    await client.close().catch(() => undefined);
  }
}

const USAGE = `Usage: agents mcp-client URL [options]

Checks a streamable-HTTP MCP server with this library's own adapter: initialize, list the
tools, end the session, exit 0. It calls nothing and approves nothing unless told: --tool NAME
or --call-all call tools with arguments made up from their input schema; the server's questions
(elicitation, e.g. an approval in \`agents serve\`'s ask mode) are declined unless --auto-approve.
To call one tool with your own arguments, register the server and use \`agents tool call\`.
A server that answers 401 gets OAuth 2.1 (metadata discovery, client ID metadata document or
dynamic registration, PKCE, scope step-up); tokens are kept in memory for this run only.
Option values may be \${VAR} references to environment variables (keep secrets off the
command line).

Options:
  --token T        send "Authorization: Bearer T" (no OAuth)
  --authorize M    browser (default; prints the URL too), print, or follow (fetch the URL and
                   follow its redirects: for authorization servers that approve on their own)
  --client-id ID   a pre-registered OAuth client
  --client-secret S  its secret
  --grant G        authorization_code (default) or client_credentials
  --private-key K  PEM key for private_key_jwt (client_credentials); --algorithm A (RS256)
  --scope S        scopes to ask for when the server names none
  --client-metadata-url URL  HTTPS URL of this client's metadata document (used as client id)
  --tool NAME      call this tool (repeatable)
  --call-all       call every tool (conformance runs)
  --auto-approve   accept the server's elicitation requests with example values
  --timeout MS     per-call timeout (default 30000)
  --protocol P     MCP revision: auto (default: server/discover, then initialize),
                   2026-07-28 or 2025-11-25
  --strict         exit 1 when any call throws or returns isError`;

/** The `agents mcp-client URL` command (also the client command of the conformance suite). */
export const mcpClientCommand: Command = {
  path: ['mcp-client'],
  usage: USAGE,
  async run(context: CommandContext) {
    const parsed = parseCommandLine(
      context.argv,
      {
        token: { type: 'string' },
        authorize: { type: 'string' },
        'client-id': { type: 'string' },
        'client-secret': { type: 'string' },
        grant: { type: 'string' },
        'private-key': { type: 'string' },
        algorithm: { type: 'string' },
        scope: { type: 'string' },
        'client-metadata-url': { type: 'string' },
        tool: { type: 'string', multiple: true },
        'call-all': { type: 'boolean' },
        'auto-approve': { type: 'boolean' },
        timeout: { type: 'string' },
        strict: { type: 'boolean' },
        protocol: { type: 'string' },
      },
      USAGE,
    );
    const [target, ...extra] = parsed.positionals;
    if (target === undefined || extra.length > 0) {
      throw usageError('Give exactly one server URL.', USAGE);
    }
    let url: URL;
    try {
      url = new URL(target);
    } catch (error) {
      throw usageError(`"${target}" is not a URL.`, USAGE, error);
    }
    const timeout = parsePositiveInteger(parsed.values.timeout, 'timeout', USAGE);
    const values = parsed.values;
    const grant = values.grant ?? 'authorization_code';
    if (grant !== 'authorization_code' && grant !== 'client_credentials') {
      throw usageError(
        `--grant takes authorization_code or client_credentials, got "${grant}".`,
        USAGE,
      );
    }
    const protocol = values.protocol ?? 'auto';
    if (protocol !== 'auto' && protocol !== '2026-07-28' && protocol !== '2025-11-25') {
      throw usageError(
        `--protocol takes auto, 2026-07-28 or 2025-11-25, got "${protocol}".`,
        USAGE,
      );
    }
    const mode = values.authorize ?? 'browser';
    if (mode !== 'browser' && mode !== 'print' && mode !== 'follow') {
      throw usageError(`--authorize takes browser, print or follow, got "${mode}".`, USAGE);
    }
    const resolve = (flag: string, value: string | undefined) =>
      value === undefined ? undefined : expandEnvReferences(value, `--${flag}`);
    const oauthFlags: Record<string, string | undefined> = {
      clientId: resolve('client-id', values['client-id']),
      clientSecret: resolve('client-secret', values['client-secret']),
      privateKey: resolve('private-key', values['private-key']),
      algorithm: values.algorithm,
      scope: values.scope,
      clientMetadataUrl: values['client-metadata-url'],
    };
    const oauth: Partial<OAuthSettings> = { grant };
    for (const [key, value] of Object.entries(oauthFlags)) {
      if (value !== undefined) Object.assign(oauth, { [key]: value });
    }
    const report = await runMcpClient(url, {
      protocol,
      ...(values.token === undefined ? {} : { token: resolve('token', values.token) as string }),
      oauth,
      authorize:
        mode === 'follow'
          ? createFollowRedirectsAuthorizer(fetch, { signal: context.signal })
          : createBrowserAuthorizer({
              mode,
              print: (line) => context.stderr.write(`${line}\n`),
            }),
      ...(parsed.values.tool === undefined ? {} : { only: parsed.values.tool }),
      callAll: parsed.values['call-all'] === true,
      autoApprove: parsed.values['auto-approve'] === true,
      ...(timeout === undefined ? {} : { callTimeoutMs: timeout }),
      signal: context.signal,
    });
    if (context.json) {
      context.stdout.write(`${JSON.stringify(report)}\n`);
    } else {
      context.stdout.write(
        `${report.serverName ?? url.host} (${report.protocolVersion ?? 'unknown protocol'}): ${report.tools.length} tools\n`,
      );
      if (report.calls.length === 0 && report.tools.length > 0)
        context.stdout.write(
          `  ${report.tools.join(', ')}\n  (none called: --tool NAME or --call-all calls them)\n`,
        );
      for (const call of report.calls) {
        context.stdout.write(
          `  ${call.outcome.padEnd(10)} ${call.tool}${call.message === undefined ? '' : `: ${call.message}`}\n`,
        );
      }
    }
    const failed = report.calls.some((call) => call.outcome !== 'ok');
    return parsed.values.strict === true && failed ? 1 : 0;
  },
};
