import { randomUUID, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingMessage, Server as HttpServer, ServerResponse } from 'node:http';
import { isIP } from 'node:net';
import type {
  Server,
  WebStandardStreamableHTTPServerTransport,
} from '@modelcontextprotocol/server';
import { AgentsError, AgentsErrorCode, errorMessage } from '../errors.js';
import { exchange, isLoopbackHost, readBody, rpcError, sendJson, sha256 } from './http-io.js';
import { createModernHttpLeg } from './modern-http.js';
import {
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_MAX_SESSIONS,
  DEFAULT_SESSION_IDLE_MS,
  type McpHttpServer,
  type ServeHttpOptions,
} from './http-options.js';

interface Session {
  id: string;
  transport: WebStandardStreamableHTTPServerTransport;
  server: Server;
  /** sha256 of the bearer token the session was created with, so another identity cannot use it. */
  identity: string;
  lastSeen: number;
  /** POSTs being answered (a tool call in flight); a busy session is never evicted. */
  busy: number;
}

/**
 * Serves MCP over streamable HTTP with `node:http`: a 2025-era client gets a session (one SDK
 * transport and server each), a 2026-07-28 request goes to the stateless leg (modern-http.ts).
 * The sessions stay here because `createMcpHandler`'s own 2025 fallback (SDK 2.4.0) is stateless:
 * no session id, GET/DELETE 405, and a fresh server per request that never saw `initialize`, so
 * forwarding to the client's declared sampling/elicitation would be refused; the SDK documents
 * this routing (`isLegacyRequest` before `legacy: 'reject'`) for sessionful 2025 serving.
 * Hardening: binds 127.0.0.1 unless told otherwise (non-loopback needs `allowNonLoopback` and a
 * token), checks `Host` and `Origin` on every request (403; requests without Origin pass),
 * random session ids (`randomUUID`) bound to the caller's token, a body cap (413), 404 for an
 * unknown session, DELETE ends a session, optional bearer token (401), and never sends CORS
 * headers. Throws `CONFIG_INVALID` for an unsafe bind, or the listen error.
 */
export async function serveHttp(options: ServeHttpOptions): Promise<McpHttpServer> {
  options.signal?.throwIfAborted();
  // Loaded here, not at import: importing the package root should not pay for the HTTP server.
  const { WebStandardStreamableHTTPServerTransport, isInitializeRequest } =
    await import('@modelcontextprotocol/server');
  const host = options.host ?? '127.0.0.1';
  const path = options.path ?? '/mcp';
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const maxSessions = options.maxSessions ?? DEFAULT_MAX_SESSIONS;
  const idleMs = options.sessionIdleMs ?? DEFAULT_SESSION_IDLE_MS;
  const log = options.log ?? (() => undefined);
  const token = options.token;
  if (token !== undefined && token.length === 0) {
    throw new AgentsError(
      AgentsErrorCode.ConfigInvalid,
      'The bearer token is empty; pass a non-empty --token or none.',
    );
  }
  if (!isLoopbackHost(host)) {
    if (options.allowNonLoopback !== true || token === undefined) {
      throw new AgentsError(
        AgentsErrorCode.ConfigInvalid,
        `Refusing to serve MCP on non-loopback host "${host}": that needs both an explicit ` +
          'allowNonLoopback flag (--allow-remote) and a bearer token (--token), because anyone ' +
          'who can reach the port can run the tools.',
        { details: { host } },
      );
    }
  }
  const tokenHash = token === undefined ? undefined : sha256(token);
  // 2026-07-28 traffic (the per-request envelope) goes to the SDK v2 handler; the rest below.
  const modern =
    options.modern === undefined
      ? undefined
      : await createModernHttpLeg({ ...options.modern, maxBodyBytes, log });
  const sessions = new Map<string, Session>();
  let closed = false;
  let allowedHosts = new Set<string>();
  let allowedOrigins = new Set<string>();

  const identityOf = (req: IncomingMessage): string | undefined => {
    if (tokenHash === undefined) return 'anonymous';
    const header = req.headers.authorization;
    const match = header === undefined ? null : /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (match === null) return undefined;
    // Compare digests so the comparison takes the same time whatever the length.
    const given = sha256(match[1]!);
    return timingSafeEqual(given, tokenHash) ? given.toString('hex') : undefined;
  };

  const endSession = async (session: Session): Promise<void> => {
    sessions.delete(session.id);
    await session.server.close().catch((error: unknown) => {
      log(`mcp http: closing session ${session.id} failed: ${errorMessage(error)}`);
    });
  };

  /** Marks a session busy until the response ends (SSE answers end after handleRequest returns). */
  const track = (session: Session, res: ServerResponse): void => {
    session.busy += 1;
    session.lastSeen = Date.now();
    res.once('close', () => {
      session.busy -= 1;
      session.lastSeen = Date.now();
    });
  };

  /**
   * Answers an initialize with a new session. The transport checks the request (Accept and
   * Content-Type headers, the JSON-RPC shape) only inside `handleRequest`, so a server that
   * never got a session is closed right after: before, each rejected initialize kept a
   * connected server alive through its listener on the shared tool set (≈ 25 KB each).
   */
  const initializeSession = async (
    identity: string,
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    raw: Buffer | undefined,
    body: unknown,
  ): Promise<void> => {
    const server = options.createServer();
    let session: Session | undefined;
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        session = { id, transport, server, identity, lastSeen: Date.now(), busy: 0 };
        sessions.set(id, session);
        track(session, res);
      },
    });
    // Set before connect: the SDK chains its own handler after this one.
    transport.onclose = () => {
      if (session !== undefined) void endSession(session);
    };
    transport.onerror = (error) => log(`mcp http: ${errorMessage(error)}`);
    try {
      await server.connect(transport);
      await exchange(req, res, url, raw, (request) =>
        transport.handleRequest(request, { parsedBody: body }),
      );
    } finally {
      if (session === undefined) {
        await server.close().catch((error: unknown) => {
          log(`mcp http: closing a rejected session failed: ${errorMessage(error)}`);
        });
      }
    }
  };

  /** Makes room for one more session: ends the least recently used idle one, if any. */
  const makeRoom = (): boolean => {
    if (sessions.size < maxSessions) return true;
    let oldest: Session | undefined;
    for (const session of sessions.values()) {
      if (session.busy > 0) continue;
      if (oldest === undefined || session.lastSeen < oldest.lastSeen) oldest = session;
    }
    if (oldest === undefined) return false;
    log(`mcp http: session limit ${maxSessions} reached; ending least recently used ${oldest.id}`);
    // Gone from the map now, so the new session fits before the close completes; closing the
    // transport ends its server (onclose).
    sessions.delete(oldest.id);
    void oldest.transport.close().catch(() => undefined);
    return true;
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname !== path) {
      sendJson(res, 404, rpcError(-32000, `Not found: the MCP endpoint is ${path}`));
      return;
    }
    // DNS rebinding: a browser page on another site resolves its own name to 127.0.0.1, so the
    // Host header (and Origin, when a browser sends one) must name us.
    const hostHeader = (req.headers.host ?? '').toLowerCase();
    if (!allowedHosts.has(hostHeader)) {
      sendJson(res, 403, rpcError(-32000, `Forbidden: Host "${hostHeader}" is not allowed`));
      return;
    }
    const origin = req.headers.origin;
    if (origin !== undefined && !allowedOrigins.has(origin.toLowerCase())) {
      sendJson(res, 403, rpcError(-32000, `Forbidden: Origin "${origin}" is not allowed`));
      return;
    }
    const identity = identityOf(req);
    if (identity === undefined) {
      sendJson(res, 401, rpcError(-32000, 'Unauthorized: send Authorization: Bearer <token>'), {
        'www-authenticate': 'Bearer',
      });
      return;
    }
    const method = req.method ?? 'GET';
    if (method !== 'POST' && method !== 'GET' && method !== 'DELETE') {
      sendJson(res, 405, rpcError(-32000, `Method ${method} not allowed`), {
        allow: 'GET, POST, DELETE',
      });
      return;
    }

    let body: unknown;
    let raw: Buffer | undefined;
    if (method === 'POST') {
      // A declared length over the cap is refused unread; a body that grows past it, cut off.
      const declared = Number(req.headers['content-length'] ?? '0');
      raw = declared > maxBodyBytes ? undefined : await readBody(req, maxBodyBytes);
      if (raw === undefined) {
        const limit = `Payload too large: the limit is ${maxBodyBytes} bytes`;
        sendJson(res, 413, rpcError(-32000, limit), { connection: 'close' });
        if (declared > maxBodyBytes) req.resume();
        else req.destroy();
        return;
      }
      try {
        body = JSON.parse(raw.toString('utf8'));
      } catch (error) {
        sendJson(res, 400, rpcError(-32700, `Parse error: ${errorMessage(error)}`));
        return;
      }
    }

    if (modern !== undefined && (await modern.serves(req, url, raw, body))) {
      await modern.handle(req, res, url, raw, body, identity);
      return;
    }

    const sessionHeader = req.headers['mcp-session-id'];
    const sessionId = Array.isArray(sessionHeader) ? sessionHeader[0] : sessionHeader;
    if (sessionId !== undefined) {
      const session = sessions.get(sessionId);
      // Another identity's session answers like an unknown one: no oracle for valid ids.
      if (session === undefined || session.identity !== identity) {
        sendJson(res, 404, rpcError(-32001, 'Session not found: initialize a new session'));
        return;
      }
      if (method === 'POST') track(session, res);
      else session.lastSeen = Date.now();
      await exchange(req, res, url, raw, (request) =>
        session.transport.handleRequest(request, { parsedBody: body }),
      );
      return;
    }
    const initializing =
      method === 'POST' &&
      (isInitializeRequest(body) ||
        (Array.isArray(body) && body.some((m) => isInitializeRequest(m))));
    if (!initializing) {
      sendJson(res, 400, rpcError(-32000, 'Bad Request: no Mcp-Session-Id; initialize first'));
      return;
    }
    if (!makeRoom()) {
      sendJson(
        res,
        503,
        rpcError(
          -32000,
          `Too many sessions: all ${maxSessions} have a request in flight; retry shortly (raise --max-sessions for more)`,
        ),
        { 'retry-after': '5' },
      );
      return;
    }
    await initializeSession(identity, req, res, url, raw, body);
  };

  const httpServer: HttpServer = createServer((req, res) => {
    if (closed) {
      sendJson(res, 503, rpcError(-32000, 'Server is shutting down'));
      return;
    }
    handle(req, res).catch((error: unknown) => {
      log(`mcp http: request failed: ${errorMessage(error)}`);
      sendJson(res, 500, rpcError(-32603, 'Internal error'));
    });
  });
  // Slow-loris guard for headers and bodies.
  httpServer.headersTimeout = 30_000;
  httpServer.requestTimeout = 5 * 60_000;

  await new Promise<void>((resolve, reject) => {
    const onError = (error: Error): void => {
      reject(
        new AgentsError(
          AgentsErrorCode.ConfigInvalid,
          `Cannot listen on ${host}:${options.port ?? 0}: ${error.message}. Choose another --port or --host.`,
          { cause: error, details: { host, port: options.port ?? 0 } },
        ),
      );
    };
    httpServer.once('error', onError);
    httpServer.listen(options.port ?? 0, host, () => {
      httpServer.off('error', onError);
      resolve();
    });
  });
  const address = httpServer.address();
  const port = typeof address === 'object' && address !== null ? address.port : (options.port ?? 0);
  const hostForUrl = isIP(host) === 6 ? `[${host}]` : host;

  const hostNames = isLoopbackHost(host)
    ? ['127.0.0.1', 'localhost', '[::1]', hostForUrl]
    : [hostForUrl];
  allowedHosts = new Set([
    ...hostNames.map((name) => `${name}:${port}`.toLowerCase()),
    ...(options.allowedHosts ?? []).map((value) => value.toLowerCase()),
  ]);
  allowedOrigins = new Set([
    ...hostNames.map((name) => `http://${name}:${port}`.toLowerCase()),
    ...(options.allowedOrigins ?? []).map((value) => value.toLowerCase()),
  ]);

  const idleTimer = setInterval(
    () => {
      const cutoff = Date.now() - idleMs;
      for (const session of [...sessions.values()]) {
        if (session.busy === 0 && session.lastSeen < cutoff) {
          log(`mcp http: closing idle session ${session.id}`);
          void session.transport.close();
        }
      }
    },
    Math.min(idleMs, 60_000),
  );
  idleTimer.unref();

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      closed = true;
      clearInterval(idleTimer);
      await modern?.close().catch((error: unknown) => {
        log(`mcp http: closing the 2026-07-28 handler failed: ${errorMessage(error)}`);
      });
      options.signal?.removeEventListener('abort', onAbort);
      const stopped = new Promise<void>((resolve) => httpServer.close(() => resolve()));
      const failures: unknown[] = [];
      for (const session of [...sessions.values()].reverse()) {
        try {
          await session.transport.close();
          await endSession(session);
        } catch (error) {
          failures.push(error);
        }
      }
      // SSE streams and keep-alive sockets would hold `close` open forever.
      httpServer.closeAllConnections();
      await stopped;
      if (failures.length > 0)
        throw new AggregateError(failures, 'Closing MCP HTTP sessions failed');
    })();
    return closing;
  };
  const onAbort = (): void => void close().catch(() => undefined);
  options.signal?.addEventListener('abort', onAbort, { once: true });

  return {
    url: new URL(`http://${hostForUrl}:${port}${path}`),
    host,
    port,
    get sessionCount() {
      return sessions.size;
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}
