import { AgentsError, AgentsErrorCode, errorMessage } from '../../errors.js';
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
  /** Bearer token for the server, if it wants one. */
  token?: string;
  /** Call only these tools (server-side names); default: every listed tool. */
  only?: readonly string[];
  /** Per-call timeout (default 30 000 ms). */
  callTimeoutMs?: number;
  signal?: AbortSignal;
}

/**
 * Connects to a streamable-HTTP MCP server with the library's own adapter, lists its tools, calls
 * each with arguments built from its input schema (see `exampleValueFromSchema`), then ends the
 * session (DELETE) and closes. Elicitation requests are accepted with example values, defaults
 * applied. Throws (`SERVER_START_FAILED`) when the connection or listing fails; tool failures are
 * reported, not thrown.
 */
export async function runMcpClient(
  url: URL,
  options: RunMcpClientOptions = {},
): Promise<McpClientReport> {
  options.signal?.throwIfAborted();
  // Loaded on use: the SDK's HTTP client and the adapter (ajv, LangChain) are heavy, and every
  // other `agents` command would pay for them at start-up.
  const [
    { Client },
    { StreamableHTTPClientTransport },
    { ElicitRequestSchema },
    { createMcpToolAdapter },
    { exampleValueFromSchema },
  ] = await Promise.all([
    import('@modelcontextprotocol/sdk/client/index.js'),
    import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
    import('@modelcontextprotocol/sdk/types.js'),
    import('../../mcp/tool-adapter.js'),
    import('../../serve/example-value.js'),
  ]);
  const transport = new StreamableHTTPClientTransport(url, {
    requestInit:
      options.token === undefined ? {} : { headers: { authorization: `Bearer ${options.token}` } },
  });
  const client = new Client(
    { name: 'agents-mcp-client', version: '0.1.0' },
    { capabilities: { elicitation: { form: { applyDefaults: true } } } },
  );
  // No human is in this loop: answer form elicitations with example values (defaults first).
  client.setRequestHandler(ElicitRequestSchema, (request) => {
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
  try {
    await client.connect(transport, options.signal === undefined ? {} : { signal: options.signal });
  } catch (error) {
    await client.close().catch(() => undefined);
    throw new AgentsError(
      AgentsErrorCode.ServerStartFailed,
      `Could not initialize an MCP session with ${url.href}: ${errorMessage(error)}. Is the server running, and is the URL its MCP endpoint?`,
      { cause: error, details: { url: url.href } },
    );
  }
  const serverName = client.getServerVersion()?.name ?? url.host;
  const report: McpClientReport = {
    url: url.href,
    serverName,
    tools: [],
    calls: [],
  };
  if (transport.protocolVersion !== undefined) report.protocolVersion = transport.protocolVersion;
  try {
    if (client.getServerCapabilities()?.tools === undefined) return report;
    const adapter = createMcpToolAdapter({
      serverName,
      client,
      callTimeoutMs: options.callTimeoutMs ?? 30_000,
      // A smoke client calls everything it is shown; trust decisions are not its job.
      trusted: true,
    });
    const entries = await adapter.listTools(
      options.signal === undefined ? {} : { signal: options.signal },
    );
    report.tools = entries.map((entry) => entry.descriptor.originalName);
    for (const entry of entries) {
      const tool = entry.descriptor.originalName;
      if (options.only !== undefined && !options.only.includes(tool)) continue;
      const example = exampleValueFromSchema(entry.descriptor.inputSchema);
      const args =
        typeof example === 'object' && example !== null && !Array.isArray(example)
          ? (example as Record<string, unknown>)
          : {};
      try {
        const result = await adapter.execute(
          tool,
          args,
          options.signal === undefined ? {} : { signal: options.signal },
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

Smoke-tests a streamable-HTTP MCP server with this library's own adapter: initialize, list the
tools, call each one with arguments built from its input schema, end the session, exit 0.

Options:
  --token T        send "Authorization: Bearer T"
  --tool NAME      call only this tool (repeatable)
  --timeout MS     per-call timeout (default 30000)
  --strict         exit 1 when any call throws or returns isError`;

/** The `agents mcp-client URL` command (also the client command of the conformance suite). */
export const mcpClientCommand: Command = {
  path: ['mcp-client'],
  summary: 'Connect to an MCP server over streamable HTTP, list and call its tools',
  usage: USAGE,
  async run(context: CommandContext) {
    const parsed = parseCommandLine(
      context.argv,
      {
        token: { type: 'string' },
        tool: { type: 'string', multiple: true },
        timeout: { type: 'string' },
        strict: { type: 'boolean' },
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
    const report = await runMcpClient(url, {
      ...(parsed.values.token === undefined ? {} : { token: parsed.values.token }),
      ...(parsed.values.tool === undefined ? {} : { only: parsed.values.tool }),
      ...(timeout === undefined ? {} : { callTimeoutMs: timeout }),
      signal: context.signal,
    });
    if (context.json) {
      context.stdout.write(`${JSON.stringify(report)}\n`);
    } else {
      context.stdout.write(
        `${report.serverName ?? url.host} (${report.protocolVersion ?? 'unknown protocol'}): ${report.tools.length} tools\n`,
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
