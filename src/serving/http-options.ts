import type { McpServerFactory, Server, ServerEventBus } from '@modelcontextprotocol/server';

// What serveHttp (http.ts) takes and gives: its defaults, options and the running endpoint.

/** Default cap on a POST body (bytes). */
export const DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024;
/** Default cap on concurrent sessions. */
export const DEFAULT_MAX_SESSIONS = 64;
/** Default idle time after which a session is closed (ms). */
export const DEFAULT_SESSION_IDLE_MS = 30 * 60 * 1000;

/** Options of {@link serveHttp}. */
export interface ServeHttpOptions {
  /** Creates the MCP server for one session (e.g. `() => createMcpServer({ toolSet })`). */
  createServer: () => Server;
  /**
   * Serves the 2026-07-28 revision (stateless, no session) beside the 2025 sessions: requests
   * that carry the per-request `_meta` envelope go to an SDK v2 `createMcpHandler` built on this
   * factory (see `createServing`); the rest stay on `createServer`'s sessions. Without it
   * only 2025-era clients are served.
   */
  modern?: {
    createServer: McpServerFactory;
    bus?: ServerEventBus;
    inputSchemaOf?: (toolName: string) => unknown;
  };
  /** Interface to bind (default `127.0.0.1`). Non-loopback needs `allowNonLoopback` AND `token`. */
  host?: string;
  /** Port (default 0: an ephemeral port; read it from `url`). */
  port?: number;
  /** Endpoint path (default `/mcp`). */
  path?: string;
  /** Required to bind a non-loopback interface. */
  allowNonLoopback?: boolean;
  /** When set, every request needs `Authorization: Bearer <token>` (else 401). */
  token?: string;
  /** Extra allowed `Origin` values (exact, e.g. `https://ide.example`). Loopback origins on the bound port are always allowed. */
  allowedOrigins?: readonly string[];
  /** Extra allowed `Host` header values (`name:port`). */
  allowedHosts?: readonly string[];
  /** Body size cap in bytes (default {@link DEFAULT_MAX_BODY_BYTES}); larger bodies get 413. */
  maxBodyBytes?: number;
  /**
   * Concurrent session cap (default {@link DEFAULT_MAX_SESSIONS}). A new client beyond it ends
   * the least recently used session that has no request in flight (its client gets 404 and
   * re-initializes, as the spec says); only when every session is busy does it get 503.
   */
  maxSessions?: number;
  /**
   * Time without a request after which a session is closed (default
   * {@link DEFAULT_SESSION_IDLE_MS}); a session with a request in flight is never idle.
   */
  sessionIdleMs?: number;
  /** Where diagnostics go (never stdout); default: dropped. */
  log?: (line: string) => void;
  signal?: AbortSignal;
}

/** A running streamable-HTTP MCP endpoint. `close()` ends every session and the listener. */
export interface McpHttpServer extends AsyncDisposable {
  /** The endpoint URL, e.g. `http://127.0.0.1:53211/mcp`. */
  readonly url: URL;
  readonly host: string;
  readonly port: number;
  /** Live session count. */
  readonly sessionCount: number;
  /** Ends all sessions, stops listening; idempotent. */
  close(): Promise<void>;
}
