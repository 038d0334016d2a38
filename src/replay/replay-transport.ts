/**
 * A `Transport` that answers from a cassette: no process, no network. Each request is matched to
 * the first unused recorded exchange of the same method and parameters (compared in canonical
 * form, redacted as the recording was, ids, progress tokens and `_meta` ignored), and answered
 * with the recorded result after the messages the server sent while answering. A request the
 * cassette does not hold is a {@link ReplayDivergenceError}: the send fails, and the transport
 * keeps the first divergence so a test can assert on it even when the caller turned the failure
 * into a tool error.
 */
import { SdkErrorCode, SdkHttpError } from '@modelcontextprotocol/client';
import type { Cassette, McpExchangeEntry, McpNotificationEntry } from './cassette.js';
import { createCassetteRedactor, type CassetteRedactOptions } from './cassette-redact.js';
import { canonical, firstDifference, preview, ReplayDivergenceError } from './divergence.js';
import {
  UNRECORDED_METHODS,
  type JsonRpcMessage,
  type RawTransport,
} from './recording-transport.js';

/** Methods matched by name only: their parameters carry client versions and capabilities. */
const HANDSHAKE_METHODS = new Set(['initialize', 'server/discover']);

/** Options of {@link createReplayTransport}. */
export type ReplayTransportOptions = CassetteRedactOptions & {
  cassette: Cassette;
  /** The server's name in the cassette. */
  server: string;
  /**
   * Runs before a recorded `tools/call` answer is delivered, in the caller's async context (what
   * a server did before answering: `agents thread replay` writes the call's change set here).
   */
  beforeAnswer?: (exchange: McpExchangeEntry) => Promise<void>;
  /**
   * Maps what the server sent back to this machine (the sandbox's logical `.` to the replay's
   * own sandbox path, so the pipeline maps it back to a logical path as it did when recording).
   */
  expand?: (value: unknown) => unknown;
};

/** A transport answering from a cassette; hand it to an SDK client's `connect`. */
export interface ReplayTransport extends RawTransport {
  /** The first divergence met, if any. */
  readonly divergence: ReplayDivergenceError | undefined;
  /** Recorded exchanges on this server no request has used yet. */
  unused(): McpExchangeEntry[];
}

function toolOf(exchange: { method?: string; params?: unknown }): string | undefined {
  if (exchange.method !== 'tools/call') return undefined;
  const name = (exchange.params as { name?: unknown } | undefined)?.name;
  return typeof name === 'string' ? name : undefined;
}

function describeCall(server: string, method: string, tool: string | undefined): string {
  return tool === undefined ? `${method} on ${server}` : `tools/call ${tool} on ${server}`;
}

/** Creates a transport that replays `server`'s recorded exchanges. */
export function createReplayTransport(options: ReplayTransportOptions): ReplayTransport {
  const { cassette, server } = options;
  const redact = createCassetteRedactor(options);
  const exchanges = cassette.entries
    .filter((entry): entry is McpExchangeEntry => entry.kind === 'mcp' && entry.server === server)
    .sort((a, b) => a.seq - b.seq);
  const notifications = cassette.entries.filter(
    (entry): entry is McpNotificationEntry =>
      entry.kind === 'mcp-notification' && entry.server === server,
  );
  const used = new Set<McpExchangeEntry>();
  let divergence: ReplayDivergenceError | undefined;
  let closed = false;
  let startedNotifications = false;

  const deliver = (message: unknown): void => {
    if (!closed) transport.onmessage?.(message as JsonRpcMessage);
  };
  /** Notifications recorded after exchange `seq`, delivered in their order. */
  const notificationsAfter = (seq: number): void => {
    for (const entry of notifications) if (entry.after === seq) deliver(entry.message);
  };

  const diverge = (error: ReplayDivergenceError): never => {
    divergence ??= error;
    throw error;
  };

  const match = (method: string, params: unknown): McpExchangeEntry => {
    const wanted = canonical(redact(params ?? {}));
    const candidates = exchanges.filter((entry) => !used.has(entry) && entry.method === method);
    const exact = HANDSHAKE_METHODS.has(method)
      ? candidates[0]
      : candidates.find(
          (entry) => firstDifference(canonical(entry.params ?? {}), wanted) === undefined,
        );
    if (exact) return exact;
    const tool = toolOf({ method, params });
    // The same tool, and among its calls the one with the same arguments if any (parallel calls
    // of one tool differ in those): the difference named is then the one that matters.
    const sameTool = candidates.filter((entry) => toolOf(entry) === tool);
    const argumentsOf = (value: unknown) => (value as { arguments?: unknown }).arguments;
    const nearest =
      sameTool.find(
        (entry) =>
          firstDifference(argumentsOf(canonical(entry.params ?? {})), argumentsOf(wanted)) ===
          undefined,
      ) ?? sameTool[0];
    const call = describeCall(server, method, tool);
    if (nearest === undefined) {
      return diverge(
        new ReplayDivergenceError(
          `Replay diverged at ${server} exchange ${used.size + 1}: ${call} is not in the recording ` +
            `(its unused exchanges on ${server}: ${
              exchanges
                .filter((entry) => !used.has(entry))
                .map((entry) => describeCall(server, entry.method, toolOf(entry)))
                .join(', ') || 'none'
            }). The run asked for something the recorded one did not; record it again if that ` +
            'is intended.',
          {
            kind: 'unrecorded-request',
            step: `${server} exchange ${used.size + 1}`,
            server,
            method,
            ...(tool ? { tool } : {}),
            actual: params,
          },
        ),
      );
    }
    const difference = firstDifference(canonical(nearest.params ?? {}), wanted)!;
    return diverge(
      new ReplayDivergenceError(
        `Replay diverged at ${server} exchange ${nearest.seq}: ${call} was recorded with ` +
          `${difference.path} = ${preview(difference.expected)}, the run sent ` +
          `${preview(difference.actual)}.`,
        {
          kind: 'argument',
          step: `${server} exchange ${nearest.seq}`,
          server,
          method,
          ...(tool ? { tool } : {}),
          path: difference.path,
          expected: difference.expected,
          actual: difference.actual,
        },
      ),
    );
  };

  const answer = (request: JsonRpcMessage): void => {
    const method = request.method!;
    if (method === 'ping') {
      queueMicrotask(() => deliver({ jsonrpc: '2.0', id: request.id, result: {} }));
      return;
    }
    const exchange = match(method, request.params);
    used.add(exchange);
    const http = exchange.httpError;
    if (http !== undefined) {
      throw new SdkHttpError(
        (http.code ?? SdkErrorCode.ClientHttpNotImplemented) as SdkErrorCode,
        `HTTP ${http.status}${http.statusText ? ` ${http.statusText}` : ''} (as recorded)`,
        {
          status: http.status,
          ...(http.statusText === undefined ? {} : { statusText: http.statusText }),
          ...(http.text === undefined ? {} : { text: http.text }),
        },
      );
    }
    // Answer later, as a server would: the client registers its response handler after send.
    const before = method === 'tools/call' ? options.beforeAnswer?.(exchange) : undefined;
    const ready = before ?? Promise.resolve();
    ready.then(
      () => setImmediate(deliverAnswer),
      (error: unknown) => {
        if (error instanceof ReplayDivergenceError) divergence ??= error;
        deliver({
          jsonrpc: '2.0',
          id: request.id,
          error: {
            code: -32603,
            message: `Replay could not apply the call's change set: ${String(error)}`,
          },
        });
      },
    );
    const deliverAnswer = (): void => {
      if (!startedNotifications) {
        startedNotifications = true;
        notificationsAfter(0);
      }
      const expand = options.expand ?? ((value: unknown) => value);
      for (const message of exchange.serverMessages ?? []) deliver(expand(message));
      if ('error' in exchange) deliver({ jsonrpc: '2.0', id: request.id, error: exchange.error });
      else if ('result' in exchange) {
        deliver({ jsonrpc: '2.0', id: request.id, result: expand(exchange.result) });
      } // else: recorded without an answer (a stream left open), never answered
      notificationsAfter(exchange.seq);
    };
  };

  const transport: ReplayTransport = {
    get divergence() {
      return divergence;
    },
    unused: () => exchanges.filter((entry) => !used.has(entry)),
    start: async () => {},
    send: async (message) => {
      if (closed) throw new Error(`Replay transport for ${server} is closed.`);
      // Responses to the server's requests and client notifications need no answer.
      if (message.method === undefined || message.id === undefined) return;
      if (UNRECORDED_METHODS.has(message.method) && message.method !== 'ping') return;
      answer(message);
    },
    close: async () => {
      if (closed) return;
      closed = true;
      transport.onclose?.();
    },
  };
  return transport;
}
