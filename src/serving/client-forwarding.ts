import { isSpecType, ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';
import type {
  ClientCapabilities,
  LoggingMessageNotificationParams,
} from '@modelcontextprotocol/server';
import { errorMessage, withoutMcpErrorPrefix } from '../errors.js';
import { JsonRpcError } from '../core/client-requests.js';
import type {
  ClientRequestSink,
  UpstreamClientRequest,
  UpstreamClientResult,
} from '../core/client-requests.js';
import { supportsFormElicitation } from './elicitation-approver.js';
import type { AskClient } from './elicitation-approver.js';

/** How long a forwarded request waits for the client by default (ms): a human may be answering. */
export const DEFAULT_FORWARD_TIMEOUT_MS = 10 * 60_000;
/** Largest log `data` forwarded as is (bytes of JSON); bigger data is cut. */
const MAX_LOG_DATA_BYTES = 16 * 1024;

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
      ProtocolErrorCode.MethodNotFound,
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
        ProtocolErrorCode.InvalidParams,
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

/** The client behind one served `tools/call`, as its forwarding sink sees it. */
export interface CallClient {
  /** Who is behind the call (see {@link ClientRequestSink.owner}). */
  owner: object;
  /** How a question reaches the client. */
  ask: AskClient;
  capabilities: ClientCapabilities | undefined;
  /** The client as messages name it: `The MCP client "ide"`. */
  name: string;
  /** On 2026-07-28 a URL elicitation carries no elicitationId: the round trip correlates. */
  stateless: boolean;
  /** Sends a log message if the client's level lets it pass. */
  log: (params: LoggingMessageNotificationParams) => void;
  /** How long to wait for the client (default {@link DEFAULT_FORWARD_TIMEOUT_MS}). */
  timeoutMs?: number;
}

/**
 * The {@link ClientRequestSink} of one served `tools/call`: upstream sampling and elicitation go
 * to the client that made the call when it declared the capability (otherwise -32601, as the
 * client itself would answer); the client's errors go back with their code and message (said
 * once); its answer is checked before the upstream server sees it; log messages go to it as
 * `notifications/message`, the logger name prefixed with the upstream server's.
 */
export function createClientRequestSink(client: CallClient): ClientRequestSink {
  const timeoutMs = client.timeoutMs ?? DEFAULT_FORWARD_TIMEOUT_MS;
  return {
    owner: client.owner,
    async request(upstream, info) {
      assertClientCan(client.capabilities, client.name, upstream, info.serverName);
      const params: Record<string, unknown> = { ...upstream.params };
      if (client.stateless) delete params['elicitationId'];
      let answer: unknown;
      try {
        answer = await client.ask({ method: upstream.method, params }, timeoutMs, info.signal);
      } catch (error) {
        if (error instanceof ProtocolError) {
          throw new JsonRpcError(error.code, withoutMcpErrorPrefix(error.message), error.data);
        }
        throw new JsonRpcError(
          ProtocolErrorCode.InternalError,
          `The MCP client did not answer ${upstream.method} from server "${info.serverName}": ${errorMessage(error)}.`,
        );
      }
      return checkedAnswer(upstream.method, answer, 'tools' in upstream.params);
    },
    log(params, info) {
      const logger =
        params.logger === undefined ? info.serverName : `${info.serverName}/${params.logger}`;
      client.log({ level: params.level, logger, data: cappedLogData(params.data) });
    },
  };
}

/** The client's answer to a forwarded question, checked before the upstream server sees it. */
function checkedAnswer(
  method: UpstreamClientRequest['method'],
  answer: unknown,
  withTools: boolean,
): UpstreamClientResult {
  const valid =
    method === 'elicitation/create'
      ? isSpecType.ElicitResult(answer)
      : withTools
        ? isSpecType.CreateMessageResultWithTools(answer)
        : isSpecType.CreateMessageResult(answer);
  if (!valid) {
    throw new JsonRpcError(
      ProtocolErrorCode.InvalidParams,
      `The MCP client answered ${method} with a malformed result.`,
    );
  }
  return answer as UpstreamClientResult;
}
