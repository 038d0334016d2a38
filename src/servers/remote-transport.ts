import {
  extractWWWAuthenticateParams,
  SSEClientTransport,
  StreamableHTTPClientTransport,
  type FetchLike,
  type JSONRPCMessage,
  type OAuthClientProvider,
  type Transport,
  type TransportSendOptions,
} from '@modelcontextprotocol/client';
import { httpStatusOf, jsonRpcErrorInHttpBody } from '../mcp/mcp-client.js';

/** The transports a remote server config may name. */
export type RemoteTransportKind = 'streamable-http' | 'sse' | 'auto';

/** Options of {@link createRemoteTransport}. */
export interface RemoteTransportOptions {
  headers?: Record<string, string>;
  authProvider?: OAuthClientProvider;
  /**
   * Called with the scope a `403 insufficient_scope` asks for, before the SDK reacts to it (the
   * OAuth provider uses it to make the SDK authorize again instead of refreshing, since a refresh
   * cannot widen a token's scope).
   */
  onInsufficientScope?: (scope: string) => Promise<void>;
  /** The fetch every request goes through (the network host lists' guard); default fetch. */
  fetch?: FetchLike;
}

/** A client transport to a remote server, with what OAuth and session ends need. */
export interface RemoteTransport extends Transport {
  /**
   * Exchanges the code of a finished login for tokens (the SDK's `finishAuth`); `iss` is the
   * callback's issuer (RFC 9207), checked against the authorization server's metadata.
   */
  finishAuth(authorizationCode: string, iss?: string): Promise<void>;
  /** Ends a streamable-HTTP session with DELETE; nothing for SSE. */
  terminateSession(): Promise<void>;
  /** The protocol version negotiated at initialize, once known (streamable HTTP). */
  readonly protocolVersion?: string | undefined;
}

/**
 * The SDK's streamable-HTTP or SSE client transport for a URL, or for `auto` a transport that
 * tries streamable HTTP and falls back to SSE when the first POST gets 400, 404 or 405 (the
 * backwards-compatibility advice of the MCP spec and the SDK).
 */
export function createRemoteTransport(
  kind: RemoteTransportKind,
  url: URL,
  options: RemoteTransportOptions = {},
): RemoteTransport {
  if (kind === 'sse') return asRemote(createSse(url, options));
  if (kind === 'streamable-http') return createStreamable(url, options);
  return new StreamableThenSseTransport(url, options);
}

function sdkOptions(options: RemoteTransportOptions) {
  const onInsufficientScope = options.onInsufficientScope;
  const base = options.fetch;
  const observed: FetchLike | undefined =
    onInsufficientScope === undefined
      ? base
      : async (url, init) => {
          const response = await (base ?? fetch)(url, init);
          if (response.status === 403) {
            const { error, scope } = extractWWWAuthenticateParams(response);
            if (error === 'insufficient_scope' && scope !== undefined)
              await onInsufficientScope(scope);
          }
          return response;
        };
  return {
    ...(observed === undefined ? {} : { fetch: observed }),
    ...(options.headers === undefined ? {} : { requestInit: { headers: { ...options.headers } } }),
    ...(options.authProvider === undefined ? {} : { authProvider: options.authProvider }),
  };
}

function createStreamable(
  url: URL,
  options: RemoteTransportOptions,
): StreamableHTTPClientTransport & RemoteTransport {
  return new StreamableHTTPClientTransport(url, sdkOptions(options));
}

function createSse(url: URL, options: RemoteTransportOptions): SSEClientTransport {
  return new SSEClientTransport(url, sdkOptions(options));
}

function asRemote(sse: SSEClientTransport): RemoteTransport {
  return Object.assign(sse, { terminateSession: async () => undefined });
}

/** True for the answers of a server that predates streamable HTTP. */
function isLegacyServerAnswer(error: unknown): boolean {
  const status = httpStatusOf(error);
  // A 2026-only server refuses `initialize` with 400 and a JSON-RPC -32022 naming what it
  // speaks: that is an answer about revisions, not a sign of the old HTTP+SSE transport.
  if (jsonRpcErrorInHttpBody(error)?.code === -32022) return false;
  return status === 400 || status === 404 || status === 405;
}

/**
 * Only the answer to `initialize` decides the transport: the 2026 `server/discover` probe goes
 * first, and a 2025 streamable server answers it 400 (no session) — that is the SDK's signal to
 * fall back to `initialize`, not a sign of the old HTTP+SSE transport.
 */
function decidesTransport(message: JSONRPCMessage): boolean {
  return 'method' in message && message.method === 'initialize';
}

/**
 * Streamable HTTP first; on a legacy server's answer to the first message (the initialize
 * request) it switches to SSE for good and sends that message again there.
 */
class StreamableThenSseTransport implements RemoteTransport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: Transport['onmessage'];
  private active: Transport & { finishAuth(code: string, iss?: string): Promise<void> };
  private streamable: StreamableHTTPClientTransport | undefined;
  private decided = false;
  private negotiatedVersion: string | undefined;

  constructor(
    private readonly url: URL,
    private readonly options: RemoteTransportOptions,
  ) {
    this.streamable = createStreamable(url, options);
    this.active = this.streamable;
    this.wire(this.streamable);
  }

  get sessionId(): string | undefined {
    return this.active.sessionId;
  }

  get protocolVersion(): string | undefined {
    return this.negotiatedVersion;
  }

  setProtocolVersion(version: string): void {
    this.negotiatedVersion = version;
    this.active.setProtocolVersion?.(version);
  }

  async start(): Promise<void> {
    await this.active.start();
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    if (this.decided || !decidesTransport(message)) return this.active.send(message, options);
    try {
      await this.active.send(message, options);
      this.decided = true;
    } catch (error) {
      if (!isLegacyServerAnswer(error) || this.streamable === undefined) throw error;
      const legacy = this.streamable;
      this.streamable = undefined;
      const sse = createSse(this.url, this.options);
      this.active = sse;
      this.decided = true;
      // Closing the abandoned transport must not look like the connection ending.
      await legacy.close().catch(() => undefined);
      this.wire(sse);
      await sse.start();
      if (this.negotiatedVersion !== undefined) sse.setProtocolVersion(this.negotiatedVersion);
      await sse.send(message);
    }
  }

  async close(): Promise<void> {
    await this.active.close();
  }

  finishAuth(authorizationCode: string, iss?: string): Promise<void> {
    return this.active.finishAuth(authorizationCode, iss);
  }

  async terminateSession(): Promise<void> {
    if (this.active instanceof StreamableHTTPClientTransport) await this.active.terminateSession();
  }

  private wire(transport: Transport): void {
    transport.onclose = () => {
      if (this.active === transport) this.onclose?.();
    };
    transport.onerror = (error) => {
      if (this.active === transport) this.onerror?.(error);
    };
    transport.onmessage = (message, extra) => {
      if (this.active === transport) this.onmessage?.(message, extra);
    };
  }
}
