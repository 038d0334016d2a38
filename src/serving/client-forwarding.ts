import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  ErrorCode,
  LoggingLevelSchema,
  McpError,
  SetLevelRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import type {
  ClientCapabilities,
  LoggingLevel,
  LoggingMessageNotificationParams,
  RequestId,
  ServerNotification,
} from '@modelcontextprotocol/sdk/types.js';
import { errorMessage, withoutMcpErrorPrefix } from '../errors.js';
import { JsonRpcError } from '../core/client-requests.js';
import type { ClientRequestSink, UpstreamClientRequest } from '../core/client-requests.js';
import { supportsFormElicitation } from './elicitation-approver.js';

/** How long a forwarded request waits for the client by default (ms): a human may be answering. */
export const DEFAULT_FORWARD_TIMEOUT_MS = 10 * 60_000;
/** Largest log `data` forwarded as is (bytes of JSON); bigger data is cut. */
const MAX_LOG_DATA_BYTES = 16 * 1024;

const SEVERITY = new Map(LoggingLevelSchema.options.map((level, index) => [level, index]));

/**
 * Declares `logging` honestly on one served connection: answers `logging/setLevel` and tells
 * whether a level passes. Until the client sets a level every message passes (the SDK's rule).
 * Call once per server, after construction (it replaces the SDK's own handler, whose level is
 * private).
 */
export function trackLoggingLevel(server: Server): (level: LoggingLevel) => boolean {
  let minimum: LoggingLevel | undefined;
  server.setRequestHandler(SetLevelRequestSchema, (request) => {
    minimum = request.params.level;
    return {};
  });
  return (level) => minimum === undefined || SEVERITY.get(level)! >= SEVERITY.get(minimum)!;
}

/** Options of {@link createClientRequestSink}. */
export interface ClientRequestSinkOptions {
  /** The server connected to the client that made the call. */
  server: Server;
  /** The `tools/call` being served: forwarded requests travel on its response stream. */
  requestId: RequestId;
  /** Aborted when the client cancels the call. */
  signal: AbortSignal;
  /** Sends a notification related to the call (`extra.sendNotification`). */
  sendNotification: (notification: ServerNotification) => Promise<void>;
  /** Whether a log level passes the client's `logging/setLevel`. */
  logLevelPasses: (level: LoggingLevel) => boolean;
  /** How long to wait for the client (default {@link DEFAULT_FORWARD_TIMEOUT_MS}). */
  timeoutMs?: number;
}

function clientName(server: Server): string {
  const name = server.getClientVersion()?.name;
  return name === undefined ? 'The MCP client' : `The MCP client "${name}"`;
}

/**
 * Refuses what the client did not declare, with the error it would give itself (-32601).
 * `client` names it in the message ("The MCP client \"x\"").
 */
export function assertClientCan(
  capabilities: ClientCapabilities | undefined,
  client: string,
  request: UpstreamClientRequest,
  serverName: string,
): void {
  const refuse = (what: string): never => {
    throw new JsonRpcError(
      ErrorCode.MethodNotFound,
      `${client} behind this tool call did not declare ${what}, so ${request.method} ` +
        `from server "${serverName}" cannot be forwarded to it.`,
    );
  };
  if (request.method === 'sampling/createMessage') {
    if (capabilities?.sampling === undefined) refuse('the sampling capability');
    const { params } = request;
    if (
      (params.tools !== undefined || params.toolChoice !== undefined) &&
      !capabilities?.sampling?.tools
    ) {
      throw new JsonRpcError(
        ErrorCode.InvalidParams,
        `${client} behind this tool call did not declare sampling.tools, so a ` +
          `sampling request with tools from server "${serverName}" cannot be forwarded.`,
      );
    }
    return;
  }
  const mode = request.params.mode ?? 'form';
  if (mode === 'url') {
    if (capabilities?.elicitation?.url === undefined) refuse('URL-mode elicitation');
  } else if (!supportsFormElicitation(capabilities)) {
    refuse('the elicitation capability');
  }
}

/** Caps log data from an upstream server (its output is untrusted). */
export function cappedLogData(data: unknown): unknown {
  const json = JSON.stringify(data) ?? 'null';
  if (Buffer.byteLength(json, 'utf8') <= MAX_LOG_DATA_BYTES) return data;
  return { truncated: true, bytes: Buffer.byteLength(json, 'utf8'), head: json.slice(0, 4096) };
}

/**
 * The {@link ClientRequestSink} of one served `tools/call`: upstream sampling and elicitation go
 * to the client that made the call, on the call's own response stream, when it declared the
 * capability (otherwise -32601, as the client itself would answer); the client's errors go back
 * with their code and message (said once); log messages that pass the client's level go to it
 * as `notifications/message`, the logger name prefixed with the upstream server's.
 */
export function createClientRequestSink(options: ClientRequestSinkOptions): ClientRequestSink {
  const { server } = options;
  const timeout = options.timeoutMs ?? DEFAULT_FORWARD_TIMEOUT_MS;
  return {
    owner: server,
    async request(request, info) {
      assertClientCan(server.getClientCapabilities(), clientName(server), request, info.serverName);
      const requestOptions = {
        relatedRequestId: options.requestId,
        signal: AbortSignal.any([options.signal, info.signal]),
        timeout,
      };
      try {
        return request.method === 'sampling/createMessage'
          ? await server.createMessage(request.params, requestOptions)
          : await server.elicitInput(request.params, requestOptions);
      } catch (error) {
        if (error instanceof McpError) {
          throw new JsonRpcError(error.code, withoutMcpErrorPrefix(error.message), error.data);
        }
        throw new JsonRpcError(
          ErrorCode.InternalError,
          `Forwarding ${request.method} to the MCP client failed: ${errorMessage(error)}`,
        );
      }
    },
    log(params, info) {
      if (!options.logLevelPasses(params.level)) return;
      const logger =
        params.logger === undefined ? info.serverName : `${info.serverName}/${params.logger}`;
      const forwarded: LoggingMessageNotificationParams = {
        level: params.level,
        logger,
        data: cappedLogData(params.data),
      };
      options
        .sendNotification({ method: 'notifications/message', params: forwarded })
        .catch(() => undefined);
    },
  };
}
