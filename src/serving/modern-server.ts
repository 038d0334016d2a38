import { randomBytes } from 'node:crypto';
import {
  InMemoryServerEventBus,
  ProtocolError,
  ProtocolErrorCode,
  Server,
  createRequestStateCodec,
  inputRequired,
} from '@modelcontextprotocol/server';
import type {
  CallToolResult,
  McpServerFactory,
  ServerContext,
  ServerEventBus,
} from '@modelcontextprotocol/server';
import {
  CallToolResultSchema,
  CreateMessageResultSchema,
  CreateMessageResultWithToolsSchema,
  ElicitResultSchema,
  LoggingLevelSchema,
} from '@modelcontextprotocol/sdk/types.js';
import type { ClientCapabilities } from '@modelcontextprotocol/sdk/types.js';
import { AgentsError, AgentsErrorCode } from '../errors.js';
import { createClientRequestForwarder, JsonRpcError } from '../core/client-requests.js';
import type { ClientRequestSink, UpstreamClientResult } from '../core/client-requests.js';
import type { ToolCallContext, ToolResult } from '../core/tool-descriptor.js';
import { runWithApprover } from '../policy/approval-scope.js';
import type { Approver } from '../policy/policy-middleware.js';
import { assertClientCan, cappedLogData, DEFAULT_FORWARD_TIMEOUT_MS } from './client-forwarding.js';
import {
  APPROVAL_REQUESTED_SCHEMA,
  approvalFromElicitResult,
  DEFAULT_APPROVAL_TIMEOUT_MS,
  DEFAULT_NO_ELICITATION_HINT,
  formatApprovalQuestion,
  MCP_CLIENT_APPROVER,
  supportsFormElicitation,
} from './elicitation-approver.js';
import type { ServeApprovalOptions } from './mcp-server.js';
import { DEFAULT_SERVE_INSTRUCTIONS, toErrorResult, toServedTool } from './mcp-server.js';
import { InputNotAnswered, PausableCall, PausedCalls } from './paused-calls.js';
import type { ServedToolSet } from './served-tool-set.js';

// The 2026-07-28 (stateless) side of `agents serve`: an SDK v2 low-level `Server` per request,
// built by the factory that `createMcpHandler` (HTTP) and `serveStdio` call. The tool set,
// paused calls and requestState key are shared by every request of the process.

/** The revision this side serves. */
export const MODERN_PROTOCOL_VERSION = '2026-07-28';

/** Cache hint on `tools/list`: the list changes when upstream servers come and go. */
export const TOOLS_LIST_CACHE_TTL_MS = 5_000;

/** Cache hint on the (always empty) prompt and resource lists. */
export const EMPTY_LIST_CACHE_TTL_MS = 60 * 60_000;

/** Paused calls kept at most (each waits for its client's answer up to the approval timeout). */
export const MAX_PAUSED_CALLS = 256;

const ENVELOPE_CAPABILITIES = 'io.modelcontextprotocol/clientCapabilities';
const ENVELOPE_CLIENT_INFO = 'io.modelcontextprotocol/clientInfo';
const ENVELOPE_LOG_LEVEL = 'io.modelcontextprotocol/logLevel';
const SEVERITY = new Map(LoggingLevelSchema.options.map((level, index) => [level, index]));

/** What a requestState carries: which paused call, which round, which tool. */
interface CallState {
  call: string;
  round: number;
  tool: string;
}

/** Options of {@link createModernServing}. */
export interface ModernServingOptions {
  toolSet: ServedToolSet;
  name?: string;
  version?: string;
  instructions?: string;
  approval?: ServeApprovalOptions;
  forwardTimeoutMs?: number;
  /** HMAC key for requestState (default: 32 random bytes, so only this process can read it). */
  stateKey?: Uint8Array;
}

/** The shared state of 2026-07-28 serving and the factory of its per-request servers. */
export interface ModernServing {
  /** Builds the SDK v2 server for one request (HTTP) or one connection (stdio). */
  createServer: McpServerFactory;
  /**
   * Builds the one server of a stdio connection (`serveStdio` pins it): it also sends
   * `notifications/tools/list_changed` when the tool set changes, which the SDK's stdio entry
   * routes onto the connection's open `subscriptions/listen` streams (and drops without one).
   */
  createConnectionServer: McpServerFactory;
  /** Carries `notifications/tools/list_changed` to `subscriptions/listen` streams (HTTP). */
  bus: ServerEventBus;
  /** Calls waiting for their client's input. */
  readonly pausedCount: number;
  /** Ends paused calls and stops listening to the tool set. */
  close(): void;
}

/**
 * Serves a tool set on the 2026-07-28 revision. `server/discover`, the `_meta` envelope checks
 * (-32602), the version check (-32022 with `supported`), header/body checks (-32020) and the
 * caching fields come from the SDK; this adds the tools, approvals and upstream questions as
 * `input_required` with an HMAC-signed requestState (the SDK's codec, a per-process key, bound
 * to the caller's identity), and log forwarding only when the request asked for a log level.
 */
export function createModernServing(options: ModernServingOptions): ModernServing {
  const { toolSet } = options;
  const codec = createRequestStateCodec<CallState>({
    key: options.stateKey ?? randomBytes(32),
    ttlSeconds: Math.ceil((options.approval?.timeoutMs ?? DEFAULT_APPROVAL_TIMEOUT_MS) / 1000),
    // A state minted for one caller is refused for another (the HTTP identity; '' on stdio).
    bind: (ctx) => ctx.http?.authInfo?.clientId ?? '',
  });
  const paused = new PausedCalls<ToolResult>(MAX_PAUSED_CALLS);
  const bus = new InMemoryServerEventBus();
  const stopListening = toolSet.onChange(() => bus.publish({ kind: 'tools_list_changed' }));

  const createServer: McpServerFactory = () => {
    const server = new Server(
      { name: options.name ?? 'agents', version: options.version ?? '0.1.0' },
      {
        // Prompts and resources: declared and always empty, so a 2026 client's cacheable list
        // calls get an answer with caching fields instead of -32601.
        capabilities: { tools: { listChanged: true }, prompts: {}, resources: {}, logging: {} },
        instructions: options.instructions ?? DEFAULT_SERVE_INSTRUCTIONS,
        cacheHints: {
          'tools/list': { ttlMs: TOOLS_LIST_CACHE_TTL_MS, cacheScope: 'private' },
          'prompts/list': { ttlMs: EMPTY_LIST_CACHE_TTL_MS, cacheScope: 'public' },
          'resources/list': { ttlMs: EMPTY_LIST_CACHE_TTL_MS, cacheScope: 'public' },
          'resources/templates/list': { ttlMs: EMPTY_LIST_CACHE_TTL_MS, cacheScope: 'public' },
        },
        requestState: { verify: (state, ctx) => codec.verify(state, ctx) },
        // This server is never bound to 2025 traffic (that goes to the v1 sessions).
        inputRequired: { legacyShim: false },
      },
    );
    server.setRequestHandler('tools/list', () => ({
      tools: toolSet.list().map((tool) => toServedTool(tool.entry.descriptor)) as never,
    }));
    server.setRequestHandler('prompts/list', () => ({ prompts: [] }));
    server.setRequestHandler('resources/list', () => ({ resources: [] }));
    server.setRequestHandler('resources/templates/list', () => ({ resourceTemplates: [] }));
    server.setRequestHandler('resources/read', (request) => {
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `Resource not found: ${request.params.uri} (this server serves tools only).`,
        { uri: request.params.uri },
      );
    });
    server.setRequestHandler('tools/call', (request, ctx) =>
      callTool(request.params as CallParams, ctx),
    );
    return server;
  };

  const createConnectionServer: McpServerFactory = (ctx) => {
    const server = createServer(ctx) as Server;
    const stop = toolSet.onChange(() => void server.sendToolListChanged().catch(() => undefined));
    // Before the SDK's own close handling: the listener goes with the connection.
    const previous = server.onclose;
    server.onclose = () => {
      stop();
      previous?.();
    };
    return server;
  };

  interface CallParams {
    name: string;
    arguments?: Record<string, unknown>;
    _meta?: { progressToken?: string | number };
  }

  const callTool = async (params: CallParams, ctx: ServerContext) => {
    const state = ctx.mcpReq.requestState<CallState>();
    if (state !== undefined) {
      const call = paused.get(state.call);
      if (
        call === undefined ||
        call.round !== state.round ||
        state.tool !== params.name ||
        call.answering
      ) {
        throw new ProtocolError(
          ProtocolErrorCode.InvalidParams,
          'This requestState names no paused call: it was answered already (or is being ' +
            'answered), timed out, or is for another tool. Call the tool again without requestState.',
        );
      }
      call.answer(ctx.mcpReq.inputResponses);
      return step(call, params.name, ctx);
    }
    const found = toolSet.get(params.name);
    if (found === undefined) {
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `Unknown tool "${params.name}". Call tools/list for the tools this server offers now.`,
      );
    }
    if (!found.available) {
      const serverName = found.tool.entry.descriptor.serverName;
      return toErrorResult(
        params.name,
        new AgentsError(
          AgentsErrorCode.ToolUnavailable,
          `the tool is unavailable because its upstream server${serverName === undefined ? '' : ` "${serverName}"`} is not running; try again later (the tool list changes when it is back).`,
          { details: serverName === undefined ? {} : { serverName } },
        ),
      ) as CallToolResult;
    }
    const envelope = (ctx.mcpReq.envelope ?? {}) as Record<string, unknown>;
    const capabilities = envelope[ENVELOPE_CAPABILITIES] as ClientCapabilities | undefined;
    const clientInfo = envelope[ENVELOPE_CLIENT_INFO] as { name?: unknown } | undefined;
    const client =
      typeof clientInfo?.name === 'string'
        ? `The MCP client "${clientInfo.name}"`
        : 'The MCP client';
    const logLevel = LoggingLevelSchema.safeParse(envelope[ENVELOPE_LOG_LEVEL]);
    const progressToken = params._meta?.progressToken;
    const { descriptor } = found.tool.entry;

    const call = new PausableCall<ToolResult>(async (self) => {
      const sink: ClientRequestSink = {
        owner: self,
        async request(upstream, info) {
          assertClientCan(capabilities, client, upstream, info.serverName);
          const params: Record<string, unknown> = { ...upstream.params };
          // 2026 URL elicitation has no elicitationId: the round trip itself correlates.
          delete params['elicitationId'];
          let answer: unknown;
          try {
            answer = await self.ask(
              { method: upstream.method, params },
              options.forwardTimeoutMs ?? DEFAULT_FORWARD_TIMEOUT_MS,
              info.signal,
            );
          } catch (error) {
            throw new JsonRpcError(
              ProtocolErrorCode.InternalError,
              `The MCP client did not answer ${upstream.method} from server "${info.serverName}": ${(error as Error).message}.`,
            );
          }
          return checkedAnswer(upstream.method, answer, 'tools' in upstream.params);
        },
        log(logParams, info) {
          // Logging only when the request asked for it (2026-07-28 has no logging/setLevel).
          if (!logLevel.success) return;
          if (SEVERITY.get(logParams.level)! < SEVERITY.get(logLevel.data)!) return;
          const logger =
            logParams.logger === undefined
              ? info.serverName
              : `${info.serverName}/${logParams.logger}`;
          self.notify({
            method: 'notifications/message',
            params: { level: logParams.level, logger, data: cappedLogData(logParams.data) },
          });
        },
      };
      const context: ToolCallContext = {
        signal: self.signal,
        toolCallId: `mcp-${self.id}`,
        clientRequests: createClientRequestForwarder(sink),
      };
      if (progressToken !== undefined) {
        context.onProgress = (progress) =>
          self.notify({
            method: 'notifications/progress',
            params: { progressToken, ...progress },
          });
      }
      const approver = createInputApprover(self, capabilities, client, options.approval);
      try {
        const result = await runWithApprover(approver, () =>
          found.tool.handler({ descriptor, args: params.arguments ?? {}, context }),
        );
        if (!CallToolResultSchema.safeParse(result).success) {
          return toErrorResult(
            params.name,
            new AgentsError(
              AgentsErrorCode.ToolCallFailed,
              'the tool returned a malformed result.',
            ),
          );
        }
        return result;
      } catch (error) {
        return toErrorResult(params.name, error);
      }
    });
    return step(call, params.name, ctx);
  };

  /** Runs a call until it finishes (its result) or asks (input_required, the call held). */
  const step = async (call: PausableCall<ToolResult>, tool: string, ctx: ServerContext) => {
    // A client that goes away mid-round cancels the call; between rounds it is only paused.
    const onAbort = (): void => {
      paused.release(call);
      call.cancel();
    };
    ctx.mcpReq.signal.addEventListener('abort', onAbort, { once: true });
    call.notify = (notification) => void ctx.mcpReq.notify(notification).catch(() => undefined);
    // One request drives a round; a second retry with the same state is refused meanwhile.
    call.answering = true;
    let outcome;
    try {
      outcome = await call.next();
    } finally {
      call.answering = false;
      ctx.mcpReq.signal.removeEventListener('abort', onAbort);
      call.notify = () => undefined;
    }
    if ('done' in outcome) {
      paused.release(call);
      return { ...outcome.done, resultType: 'complete' } as CallToolResult;
    }
    call.round += 1;
    paused.hold(call);
    return inputRequired({
      inputRequests: outcome.asks as never,
      requestState: await codec.mint({ call: call.id, round: call.round, tool }, ctx),
    });
  };

  return {
    createServer,
    createConnectionServer,
    bus,
    get pausedCount() {
      return paused.size;
    },
    close() {
      stopListening();
      paused.close();
    },
  };
}

/** The client's answer to a forwarded question, checked before the upstream server sees it. */
function checkedAnswer(
  method: 'elicitation/create' | 'sampling/createMessage',
  answer: unknown,
  withTools: boolean,
): UpstreamClientResult {
  const schema =
    method === 'elicitation/create'
      ? ElicitResultSchema
      : withTools
        ? CreateMessageResultWithToolsSchema
        : CreateMessageResultSchema;
  const parsed = schema.safeParse(answer);
  if (!parsed.success) {
    throw new JsonRpcError(
      ProtocolErrorCode.InvalidParams,
      `The MCP client answered ${method} with a malformed result.`,
    );
  }
  return parsed.data as UpstreamClientResult;
}

/**
 * The approver of a 2026-07-28 call: the approval form goes to the client as an
 * `input_required` question (the tool has not run yet) and its answer decides, as over 2025
 * elicitation. A client that declared no form elicitation cannot be asked: refused, saying so.
 */
function createInputApprover(
  call: PausableCall<ToolResult>,
  capabilities: ClientCapabilities | undefined,
  client: string,
  approval: ServeApprovalOptions | undefined,
): Approver {
  const timeoutMs = approval?.timeoutMs ?? DEFAULT_APPROVAL_TIMEOUT_MS;
  return async (preview) => {
    if (!supportsFormElicitation(capabilities)) {
      throw new AgentsError(
        AgentsErrorCode.PolicyDenied,
        `Tool "${preview.toolName}" needs approval (${preview.rule}: ${preview.reason}), and ` +
          `${client.replace(/^The/, 'this')} cannot be asked: it did not declare the ` +
          `elicitation capability. To run it, ${approval?.noElicitationHint ?? DEFAULT_NO_ELICITATION_HINT}.`,
        { details: { toolId: preview.toolId, decidedBy: 'mcp-server' } },
      );
    }
    let answer: unknown;
    try {
      answer = await call.ask(
        {
          method: 'elicitation/create',
          params: {
            mode: 'form',
            message: formatApprovalQuestion(preview),
            requestedSchema: APPROVAL_REQUESTED_SCHEMA,
          },
        },
        timeoutMs,
      );
    } catch (error) {
      if (error instanceof InputNotAnswered && error.reason === 'cancelled') {
        throw new AgentsError(
          AgentsErrorCode.Aborted,
          `The call of "${preview.toolName}" was cancelled while waiting for approval.`,
          { cause: error, details: { toolId: preview.toolId } },
        );
      }
      return {
        type: 'reject',
        message: `no answer from the MCP client within ${Math.round(timeoutMs / 1000)} s`,
        by: MCP_CLIENT_APPROVER,
      };
    }
    const parsed = ElicitResultSchema.safeParse(answer);
    return parsed.success
      ? approvalFromElicitResult(parsed.data)
      : { type: 'reject', message: 'the MCP client gave no valid answer', by: MCP_CLIENT_APPROVER };
  };
}
