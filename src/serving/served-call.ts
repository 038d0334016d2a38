import {
  inputRequired,
  isSpecType,
  ProtocolError,
  ProtocolErrorCode,
} from '@modelcontextprotocol/server';
import type {
  CallToolResult,
  ClientCapabilities,
  LoggingLevel,
  LoggingMessageNotificationParams,
  RequestStateCodec,
  Server,
  ServerContext,
} from '@modelcontextprotocol/server';
import { AgentsError, AgentsErrorCode } from '../errors.js';
import { createClientRequestForwarder } from '../core/client-requests.js';
import type { ToolCallCapabilities, ToolCallContext, ToolResult } from '../core/tool-descriptor.js';
import { runWithApprover } from '../policy/approval-scope.js';
import { createClientRequestSink } from './client-forwarding.js';
import { createClientApprover } from './elicitation-approver.js';
import type { AskClient } from './elicitation-approver.js';
import { PausableCall } from './paused-calls.js';
import type { PausedCalls } from './paused-calls.js';
import type { ServedTool, ServedToolSet } from './served-tool-set.js';
import { toErrorResult } from './served-tool.js';
import type { ServeApprovalOptions } from './served-tool.js';

// The one `tools/call` handler of `agents serve`, for both protocol revisions. What differs is
// only how a running call reaches its client: a 2025-era session sends it requests during the
// call (on the call's own response stream); a 2026-07-28 request cannot, so the call pauses on
// its question, answers `input_required` with a signed requestState, and the client's retry
// delivers the answer (paused-calls.ts).

const ENVELOPE_CAPABILITIES = 'io.modelcontextprotocol/clientCapabilities';
const ENVELOPE_CLIENT_INFO = 'io.modelcontextprotocol/clientInfo';
const ENVELOPE_LOG_LEVEL = 'io.modelcontextprotocol/logLevel';
const LOG_LEVELS: readonly LoggingLevel[] = [
  'debug',
  'info',
  'notice',
  'warning',
  'error',
  'critical',
  'alert',
  'emergency',
];

/** What a requestState carries: which paused call, which round, which tool. */
export interface CallState {
  call: string;
  round: number;
  tool: string;
}

/** `tools/call` params as the handler reads them. */
export interface CallParams {
  name: string;
  arguments?: Record<string, unknown>;
  _meta?: { progressToken?: string | number };
}

/** What every call of one serving process shares. */
export interface ServedCallOptions {
  toolSet: ServedToolSet;
  paused: PausedCalls<ToolResult>;
  codec: RequestStateCodec<CallState>;
  approval?: ServeApprovalOptions;
  forwardTimeoutMs?: number;
}

/** How one call reaches its client, per revision. */
interface CallWay {
  /** Names the call in audit records and the tool's context. */
  toolCallId: string;
  signal: AbortSignal;
  owner: object;
  ask: AskClient;
  stateless: boolean;
  notify: (notification: { method: string; params: Record<string, unknown> }) => void;
  log: (params: LoggingMessageNotificationParams) => void;
}

/** Builds the `tools/call` handler of the servers of one serving process. */
export function createToolCallHandler(options: ServedCallOptions) {
  const { toolSet, paused, codec } = options;

  /** Runs a served tool through its chain, with the approver and forwarder of this call. */
  const run = async (
    tool: ServedTool,
    params: CallParams,
    way: CallWay,
    capabilities: ClientCapabilities | undefined,
    clientName: string | undefined,
  ): Promise<ToolResult> => {
    const client = clientName === undefined ? 'The MCP client' : `The MCP client "${clientName}"`;
    const progressToken = params._meta?.progressToken;
    const context: ToolCallContext = { signal: way.signal, toolCallId: way.toolCallId };
    const callCapabilities: ToolCallCapabilities = {
      // What upstream servers ask of their client during this call goes to this client; the
      // actor's audit and policy layers add their observer and gate on the way down.
      clientRequests: createClientRequestForwarder(
        createClientRequestSink({
          owner: way.owner,
          ask: way.ask,
          capabilities,
          name: client,
          stateless: way.stateless,
          log: way.log,
          ...(options.forwardTimeoutMs === undefined
            ? {}
            : { timeoutMs: options.forwardTimeoutMs }),
        }),
      ),
      ...(progressToken === undefined
        ? {}
        : {
            onProgress: (progress) =>
              way.notify({
                method: 'notifications/progress',
                params: { progressToken, ...progress },
              }),
          }),
    };
    // A policy in `ask` mode asks the client that made this call (or refuses, if it cannot be
    // asked): the approver is bound to this call only, so concurrent clients never mix.
    const approver = createClientApprover({
      ask: way.ask,
      capabilities,
      clientName,
      signal: way.signal,
      ...(options.approval?.timeoutMs === undefined
        ? {}
        : { timeoutMs: options.approval.timeoutMs }),
      ...(options.approval?.noElicitationHint === undefined
        ? {}
        : { noElicitationHint: options.approval.noElicitationHint }),
    });
    try {
      const { descriptor } = tool.entry;
      const result = await runWithApprover(approver, () =>
        tool.handler({
          descriptor,
          args: params.arguments ?? {},
          context,
          capabilities: callCapabilities,
        }),
      );
      // A middleware bug must reach the client as a tool error, not a protocol error from the
      // SDK's own result validation.
      if (!isSpecType.CallToolResult(result)) {
        return toErrorResult(
          params.name,
          new AgentsError(AgentsErrorCode.ToolCallFailed, 'the tool returned a malformed result.'),
        );
      }
      return result;
    } catch (error) {
      return toErrorResult(params.name, error);
    }
  };

  /** Runs a 2026 call until it finishes (its result) or asks (input_required, the call held). */
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

  return async (server: Server, params: CallParams, ctx: ServerContext) => {
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

    const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
    if (envelope === undefined) {
      // 2025-era session: the client was declared at `initialize`, and can be asked directly.
      const { id, signal } = ctx.mcpReq;
      const way: CallWay = {
        toolCallId: `mcp-${ctx.sessionId ?? 'local'}-${String(id)}`,
        signal,
        owner: server,
        ask: (ask, timeout, askSignal) => {
          const requestOptions = {
            relatedRequestId: id,
            timeout,
            signal: askSignal === undefined ? signal : AbortSignal.any([signal, askSignal]),
          };
          return ask.method === 'sampling/createMessage'
            ? ctx.mcpReq.requestSampling(ask.params as never, requestOptions)
            : ctx.mcpReq.elicitInput(ask.params as never, requestOptions);
        },
        stateless: false,
        notify: (notification) => void ctx.mcpReq.notify(notification as never).catch(() => {}),
        // The SDK applies the session's logging/setLevel (every level until one is set).
        log: (log) => void ctx.mcpReq.log(log.level, log.data, log.logger).catch(() => {}),
      };
      return (await run(
        found.tool,
        params,
        way,
        server.getClientCapabilities(),
        server.getClientVersion()?.name,
      )) as CallToolResult;
    }

    // 2026-07-28: everything about the client rides on this request's `_meta` envelope.
    const capabilities = envelope[ENVELOPE_CAPABILITIES] as ClientCapabilities | undefined;
    const clientInfo = envelope[ENVELOPE_CLIENT_INFO] as { name?: unknown } | undefined;
    const logLevel = envelope[ENVELOPE_LOG_LEVEL];
    const threshold = LOG_LEVELS.indexOf(logLevel as LoggingLevel);
    const call = new PausableCall<ToolResult>((self) =>
      run(
        found.tool,
        params,
        {
          toolCallId: `mcp-${self.id}`,
          signal: self.signal,
          owner: self,
          ask: (ask, timeout, askSignal) => self.ask(ask, timeout, askSignal),
          stateless: true,
          notify: (notification) => self.notify(notification),
          // Logging only when the request asked for it (2026-07-28 has no logging/setLevel).
          log: (log) => {
            if (threshold === -1 || LOG_LEVELS.indexOf(log.level) < threshold) return;
            self.notify({ method: 'notifications/message', params: { ...log } });
          },
        },
        capabilities,
        typeof clientInfo?.name === 'string' ? clientInfo.name : undefined,
      ),
    );
    return step(call, params.name, ctx);
  };
}
