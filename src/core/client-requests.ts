import type {
  CreateMessageRequestParams,
  CreateMessageResult,
  ElicitRequestParams,
  ElicitResult,
  LoggingMessageNotificationParams,
} from '@modelcontextprotocol/client';

/**
 * A JSON-RPC error the SDK sends with exactly this code and message (it reads `code`,
 * `message` and `data` off any thrown error). `McpError` would put `MCP error N: ` into the
 * message, and the receiving SDK's own `McpError` adds it again.
 */
export class JsonRpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = 'JsonRpcError';
  }
}

/** JSON-RPC code of a forwarded request refused by policy (the spec's "user rejected" code). */
export const CLIENT_REQUEST_REFUSED_CODE = -1;

/** A request an upstream MCP server makes of its client while one of its tools runs. */
export type UpstreamClientRequest =
  | { method: 'sampling/createMessage'; params: CreateMessageRequestParams }
  | { method: 'elicitation/create'; params: ElicitRequestParams };

/** What a forwarded request is answered with. */
export type UpstreamClientResult = CreateMessageResult | ElicitResult;

/** Where a forwarded request comes from. */
export interface ClientRequestInfo {
  /** The upstream server that asked. */
  serverName: string;
  /** Aborted when the upstream server cancels its request or the connection ends. */
  signal: AbortSignal;
}

/**
 * The far end of forwarding: the MCP client that made a served call (`agents serve` builds one
 * per `tools/call`). It refuses what its client did not declare with a {@link JsonRpcError}.
 */
export interface ClientRequestSink {
  /**
   * Who is behind the call (one value per downstream connection). An upstream server's request
   * carries no link to the call it belongs to on stdio, so it is routed only when every call in
   * flight on that server has the same owner; it is never guessed.
   */
  readonly owner: object;
  request(request: UpstreamClientRequest, info: ClientRequestInfo): Promise<UpstreamClientResult>;
  /** A `notifications/message` from the upstream server during the call. */
  log(params: LoggingMessageNotificationParams, info: { serverName: string }): void;
}

/** Throws (a {@link JsonRpcError}) to refuse a forwarded request before it is sent. */
export type ClientRequestGate = (
  request: UpstreamClientRequest,
  info: ClientRequestInfo,
) => void | Promise<void>;

/** How one forwarded request ended, for observers (the audit log). */
export interface ClientRequestOutcome {
  request: UpstreamClientRequest;
  serverName: string;
  /** `forwarded`: answered by the client; `refused`: by a gate or because the client cannot answer; `failed`: an error on the way. */
  outcome: 'forwarded' | 'refused' | 'failed';
  durationMs: number;
  result?: UpstreamClientResult;
  error?: unknown;
}

/** Sees every forwarded request's outcome, refusals included. */
export type ClientRequestObserver = (outcome: ClientRequestOutcome) => void;

/**
 * A {@link ClientRequestSink} with gates (the policy) and observers (the audit) in front of it.
 * Layers add theirs with `withGate` / `withObserver`, each returning a new forwarder, so the
 * order the middleware wraps in does not matter: every gate runs before the request is sent and
 * every observer sees the final outcome, a gate's refusal included.
 */
export interface ClientRequestForwarder extends ClientRequestSink {
  withGate(gate: ClientRequestGate): ClientRequestForwarder;
  withObserver(observer: ClientRequestObserver): ClientRequestForwarder;
}

/** True for an error that refuses a request (as opposed to one that failed on the way). */
function isRefusal(error: unknown): boolean {
  return error instanceof JsonRpcError;
}

/** Wraps a sink so gates and observers can be added (see {@link ClientRequestForwarder}). */
export function createClientRequestForwarder(
  sink: ClientRequestSink,
  gates: readonly ClientRequestGate[] = [],
  observers: readonly ClientRequestObserver[] = [],
): ClientRequestForwarder {
  const notify = (outcome: ClientRequestOutcome): void => {
    for (const observer of observers) {
      try {
        observer(outcome);
      } catch {
        // An observer (audit) must not change the answer the upstream server gets.
      }
    }
  };
  return {
    owner: sink.owner,
    async request(request, info) {
      const started = Date.now();
      try {
        for (const gate of gates) await gate(request, info);
        const result = await sink.request(request, info);
        notify({
          request,
          serverName: info.serverName,
          outcome: 'forwarded',
          durationMs: Date.now() - started,
          result,
        });
        return result;
      } catch (error) {
        notify({
          request,
          serverName: info.serverName,
          outcome: isRefusal(error) ? 'refused' : 'failed',
          durationMs: Date.now() - started,
          error,
        });
        throw error;
      }
    },
    log(params, info) {
      sink.log(params, info);
    },
    withGate(gate) {
      return createClientRequestForwarder(sink, [...gates, gate], observers);
    },
    withObserver(observer) {
      return createClientRequestForwarder(sink, gates, [...observers, observer]);
    },
  };
}

/** What to record of a forwarded request: its shape, never whole messages. */
export function summarizeClientRequest(request: UpstreamClientRequest): Record<string, unknown> {
  const cap = (text: string, max: number): string =>
    text.length > max ? `${text.slice(0, max)}…` : text;
  if (request.method === 'sampling/createMessage') {
    const { params } = request;
    return {
      messages: params.messages.length,
      maxTokens: params.maxTokens,
      ...(params.systemPrompt === undefined ? {} : { systemPrompt: cap(params.systemPrompt, 200) }),
      ...(params.includeContext === undefined ? {} : { includeContext: params.includeContext }),
      ...(params.tools === undefined ? {} : { tools: params.tools.length }),
    };
  }
  const { params } = request;
  return {
    mode: params.mode ?? 'form',
    message: cap(params.message, 500),
    ...('requestedSchema' in params && params.requestedSchema !== undefined
      ? { fields: Object.keys(params.requestedSchema.properties) }
      : {}),
    ...('url' in params && typeof params.url === 'string' ? { url: cap(params.url, 500) } : {}),
  };
}
