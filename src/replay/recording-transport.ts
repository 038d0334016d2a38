/**
 * A recording decorator for any MCP SDK `Transport` (v1 or v2, stdio, HTTP, in-memory): every
 * message passes through unchanged, and each request the client makes is written to the
 * recorder with its answer once it arrives, together with what the server sent while answering
 * (an `input_required` round's request, a tool list change). Messages that change no state
 * (pings, progress, log lines, cancellations) are left out: a replay does not need them and a
 * diff reads better without them.
 */
import type { McpExchangeEntry } from './cassette.js';
import type { CassetteRecorder } from './cassette-recorder.js';

/** The members of an SDK transport this file uses; both SDKs' transports have them. */
export interface TransportLike {
  start(): Promise<void>;
  send(message: never, options?: never): Promise<void>;
  close(): Promise<void>;
}

/** The untyped view of a transport the decorators work on. */
export interface RawTransport {
  start(): Promise<void>;
  send(message: JsonRpcMessage, options?: unknown): Promise<void>;
  close(): Promise<void>;
  onmessage?: ((message: JsonRpcMessage, extra?: unknown) => void) | undefined;
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  sessionId?: string | undefined;
  hasPerRequestStream?: boolean;
  setProtocolVersion?: ((version: string) => void) | undefined;
  setSupportedProtocolVersions?: ((versions: string[]) => void) | undefined;
}

/** A JSON-RPC message as it crosses a transport. */
export interface JsonRpcMessage {
  jsonrpc?: string;
  id?: string | number;
  method?: string;
  params?: unknown;
  result?: unknown;
  error?: unknown;
}

/** Methods and notifications that change no state; neither recorded nor replayed. */
export const UNRECORDED_METHODS: ReadonlySet<string> = new Set([
  'ping',
  'notifications/progress',
  'notifications/message',
  'notifications/cancelled',
]);

/** A request that may stay open for the whole connection (its answer is a stream). */
const LONG_LIVED_METHODS = new Set(['subscriptions/listen']);

/** Options of {@link createRecordingTransport}. */
export interface RecordingTransportOptions {
  /** The recorder the run's entries go to (share one between servers and the model). */
  recorder: CassetteRecorder;
  /** The server's name in the cassette (what a replay asks for). */
  server: string;
}

interface Pending {
  seq: number;
  method: string;
  params?: unknown;
  serverMessages: unknown[];
}

/** `params` without `_meta.progressToken` (a per-run counter: noise in a diff). */
function withoutProgressToken(params: unknown): unknown {
  const meta = (params as { _meta?: Record<string, unknown> } | undefined)?._meta;
  if (meta === undefined || !('progressToken' in meta)) return params;
  const { progressToken: _dropped, ...rest } = meta;
  const { _meta: _old, ...others } = params as Record<string, unknown>;
  return Object.keys(rest).length === 0 ? others : { ...others, _meta: rest };
}

/** What an SDK `SdkHttpError` (a transport's HTTP error answer) carries; undefined otherwise. */
function httpErrorOf(error: unknown): McpExchangeEntry['httpError'] {
  const candidate = error as { code?: unknown; data?: Record<string, unknown> } | null;
  const data = candidate?.data;
  if (typeof data?.['status'] !== 'number') return undefined;
  return {
    status: data['status'],
    ...(typeof data['statusText'] === 'string' ? { statusText: data['statusText'] } : {}),
    ...(typeof data['text'] === 'string' ? { text: data['text'] } : {}),
    ...(candidate?.code === undefined ? {} : { code: candidate.code }),
  };
}

/** The wrapper's members as the SDK sees them; the callbacks are set by the SDK's `connect`. */
function forwardedTransport(inner: RawTransport): RawTransport {
  const outer: RawTransport = {
    start: () => inner.start(),
    send: (message, options) => inner.send(message, options),
    close: () => inner.close(),
    get sessionId() {
      return inner.sessionId;
    },
    get hasPerRequestStream() {
      return inner.hasPerRequestStream;
    },
  };
  if (inner.setProtocolVersion) {
    outer.setProtocolVersion = (version) => inner.setProtocolVersion?.(version);
  }
  if (inner.setSupportedProtocolVersions) {
    outer.setSupportedProtocolVersions = (versions) =>
      inner.setSupportedProtocolVersions?.(versions);
  }
  inner.onclose = () => outer.onclose?.();
  inner.onerror = (error) => outer.onerror?.(error);
  return outer;
}

/**
 * Wraps `inner` so that the run's exchanges with it are recorded. Hand the result to the SDK
 * client's `connect` instead of `inner`; the client cannot tell them apart. Requests still open
 * when the transport closes (a `subscriptions/listen` stream) are recorded without an answer.
 */
export function createRecordingTransport<T extends TransportLike>(
  inner: T,
  options: RecordingTransportOptions,
): T {
  const { recorder, server } = options;
  const raw = inner as unknown as RawTransport;
  const outer = forwardedTransport(raw);
  const pending = new Map<string | number, Pending>();
  let lastSent = 0;

  /** The request a server message belongs to: the newest open one that is not a stream. */
  const answering = (): Pending | undefined =>
    [...pending.values()].reverse().find((open) => !LONG_LIVED_METHODS.has(open.method));

  raw.onmessage = (message, extra) => {
    if (message.method === undefined && message.id !== undefined) {
      const open = pending.get(message.id);
      if (open) {
        pending.delete(message.id);
        recorder.recordExchange(server, {
          seq: open.seq,
          method: open.method,
          ...(open.params === undefined ? {} : { params: open.params }),
          ...('error' in message ? { error: message.error } : { result: message.result }),
          ...(open.serverMessages.length > 0 ? { serverMessages: open.serverMessages } : {}),
        });
      }
    } else if (message.method !== undefined && !UNRECORDED_METHODS.has(message.method)) {
      const open = answering();
      if (open) open.serverMessages.push(message);
      else recorder.recordNotification(server, message, lastSent);
    }
    outer.onmessage?.(message, extra);
  };
  outer.send = (message, sendOptions) => {
    if (
      message.method !== undefined &&
      message.id !== undefined &&
      !UNRECORDED_METHODS.has(message.method)
    ) {
      const params = withoutProgressToken(message.params);
      lastSent = recorder.nextSeq(server);
      pending.set(message.id, {
        seq: lastSent,
        method: message.method,
        ...(params === undefined ? {} : { params }),
        serverMessages: [],
      });
    }
    const sent = raw.send(message, sendOptions);
    const id = message.id;
    if (id === undefined || !pending.has(id)) return sent;
    // An HTTP error answer (no JSON-RPC): recorded, so a replay fails the send the same way.
    return sent.catch((error: unknown) => {
      const http = httpErrorOf(error);
      const open = pending.get(id);
      if (http !== undefined && open !== undefined) {
        pending.delete(id);
        recorder.recordExchange(server, {
          seq: open.seq,
          method: open.method,
          ...(open.params === undefined ? {} : { params: open.params }),
          httpError: http,
        });
      }
      throw error;
    });
  };
  // However the connection ends (our close, the owner closing `inner`, the server leaving).
  raw.onclose = () => {
    for (const open of pending.values()) {
      recorder.recordExchange(server, {
        seq: open.seq,
        method: open.method,
        ...(open.params === undefined ? {} : { params: open.params }),
        ...(open.serverMessages.length > 0 ? { serverMessages: open.serverMessages } : {}),
      });
    }
    pending.clear();
    outer.onclose?.();
  };
  return outer as unknown as T;
}
