import type { IncomingMessage, ServerResponse } from 'node:http';
import type { McpServerFactory, ServerEventBus } from '@modelcontextprotocol/server';
import { errorMessage } from '../errors.js';
import { exchange, rpcError, sendJson, toWebRequest } from './http-io.js';
import { paramHeaderProblem, paramHeadersOf } from './param-headers.js';

// The 2026-07-28 leg of the HTTP endpoint (http.ts): the SDK v2 `createMcpHandler`, strict
// (`legacy: 'reject'`), behind our own Host/Origin/token checks and body cap. Routing uses the
// SDK's own classifier (`isLegacyRequest`), so the two legs can never disagree about a request:
// whatever carries the per-request `_meta` envelope (or a 2026 MCP-Protocol-Version header) is
// answered here, validation errors included (-32602, -32022, -32020).

/** Options of {@link createModernHttpLeg}. */
export interface ModernHttpLegOptions {
  createServer: McpServerFactory;
  bus?: ServerEventBus;
  /** The input schema of a served tool, for its `Mcp-Param-*` header checks (param-headers.ts). */
  inputSchemaOf?: (toolName: string) => unknown;
  maxBodyBytes: number;
  log: (line: string) => void;
}

/** The 2026-07-28 leg: which requests it takes, and how it answers them. */
export interface ModernHttpLeg {
  /** True when the request is 2026-era traffic (only POSTs are; GET/DELETE are 2025 sessions). */
  serves(req: IncomingMessage, url: URL, raw: Buffer | undefined, body: unknown): Promise<boolean>;
  handle(
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    raw: Buffer | undefined,
    body: unknown,
    identity: string,
  ): Promise<void>;
  close(): Promise<void>;
}

/** Builds the leg (the SDK v2 server package is loaded here, not at import). */
export async function createModernHttpLeg(options: ModernHttpLegOptions): Promise<ModernHttpLeg> {
  const { createMcpHandler, isJsonContentType, isLegacyRequest } =
    await import('@modelcontextprotocol/server');
  const handler = createMcpHandler(options.createServer, {
    legacy: 'reject',
    maxRequestBodySize: options.maxBodyBytes,
    ...(options.bus === undefined ? {} : { bus: options.bus }),
    onerror: (error) => options.log(`mcp http (2026-07-28): ${errorMessage(error)}`),
  });

  return {
    async serves(req, url, raw, body) {
      if (req.method !== 'POST') return false;
      return !(await isLegacyRequest(toWebRequest(req, url, raw), body, {
        maxRequestBodySize: options.maxBodyBytes,
      }));
    },

    async handle(req, res, url, raw, body, identity) {
      if (!isJsonContentType(req.headers['content-type'] ?? null)) {
        sendJson(res, 415, rpcError(-32000, 'Unsupported Media Type: send application/json'));
        return;
      }
      if (rejectedParamHeaders(req, res, body, options.inputSchemaOf)) return;
      await exchange(req, res, url, raw, (request) =>
        handler.fetch(request, {
          parsedBody: body,
          // The identity binds a paused call's requestState to the caller that got it.
          authInfo: { token: identity, clientId: identity, scopes: [] },
        }),
      );
    },

    close: () => handler.close(),
  };
}

/**
 * Answers a `tools/call` whose `Mcp-Param-*` headers disagree with its body (400, -32020, the
 * request id echoed, as the SDK's own header checks do); false when there is nothing to refuse.
 */
function rejectedParamHeaders(
  req: IncomingMessage,
  res: ServerResponse,
  body: unknown,
  inputSchemaOf: ((toolName: string) => unknown) | undefined,
): boolean {
  if (inputSchemaOf === undefined || typeof body !== 'object' || body === null) return false;
  const message = body as { id?: unknown; method?: unknown; params?: unknown };
  if (message.method !== 'tools/call' || message.id === undefined) return false;
  const params = message.params as { name?: unknown; arguments?: unknown } | undefined;
  if (typeof params?.name !== 'string') return false;
  const declarations = paramHeadersOf(inputSchemaOf(params.name));
  if (declarations.length === 0) return false;
  const mismatch = paramHeaderProblem(declarations, params.arguments, (name) => {
    const value = req.headers[name];
    return Array.isArray(value) ? value.join(', ') : value;
  });
  if (mismatch === undefined) return false;
  sendJson(res, 400, {
    jsonrpc: '2.0',
    id: message.id,
    error: {
      code: HEADER_MISMATCH,
      message: `Bad Request: the request headers and body disagree: ${mismatch.problem}`,
      data: { mismatch: { header: mismatch.header, body: mismatch.problem } },
    },
  });
  return true;
}

/** The 2026-07-28 error code for headers that disagree with the body. */
const HEADER_MISMATCH = -32020;
