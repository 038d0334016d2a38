import type { CallToolRequestOptions, Client, RequestOptions } from '@modelcontextprotocol/client';
import type { CallToolResult, ClientCapabilities } from '@modelcontextprotocol/client';
import { AgentsErrorCode, ServerError, type ServerErrorDetails } from '../errors.js';
import { resolveServerTimeouts } from '../config/server-defaults.js';
import type { ToolCallCapabilities, ToolCallContext } from '../core/tool-descriptor.js';
import type { ArgumentValidator } from './json-schema.js';
import {
  isInputRequired,
  runInputRounds,
  type InputRequiredResult,
  type ToolCallParams,
} from './input-rounds.js';
import { isV2Client, type McpClient } from './mcp-client.js';
import { toolCallError } from './call-errors.js';
import type { SendToolCallOptions } from './call-options.js';

export type { IdleDeadline, SendToolCallOptions } from './call-options.js';

export { isMcpErrorCode } from './call-errors.js';
import { PASS_THROUGH, eraResultSchema, legRequest, mayMirrorHeaders } from './call-request.js';
import {
  CLIENT_CAPABILITIES_META_KEY,
  declaresTasks,
  taskHandleOf,
  withTasksExtension,
  type TaskSupport,
} from './task-handles.js';

/**
 * The one module that sends `tools/call`. Every MCP tool call — through the adapter over a bare
 * SDK `Client` or through a supervised `ManagedServer` — goes through {@link sendToolCall}, so a
 * failure maps to the same {@link ServerError} code and message whichever path made the call.
 *
 * Error codes (phase `call`):
 * - `ABORTED`: the caller's signal fired; the SDK sent `notifications/cancelled`.
 * - `TIMEOUT`: no answer within `callMs` (restarted by progress only with `resetOnProgress`), or
 *   past `maxCallMs` in all.
 * - `SERVER_UNAVAILABLE`: the connection closed under the call.
 * - `TOOL_CALL_FAILED`: the server answered with a JSON-RPC error. The request reached the server
 *   and the protocol worked; the server refused this call. The usual case, `-32602` invalid
 *   params (unknown tool, arguments the server's own validation rejects), is the caller's (the
 *   model's) mistake, fixable by calling again differently: a tool failure (exit code 6), not a
 *   broken server (exit code 5). The JSON-RPC code is kept in `details.mcpErrorCode`.
 * - `PROTOCOL_ERROR`: the server answered with something that is not a `CallToolResult`.
 *
 * A 2026-07-28 server may answer with a task instead (the Tasks extension, `mcp/tasks.ts`): the
 * call then follows the task to its end within the same timeouts and signal, and a failed or
 * cancelled task is a `TOOL_CALL_FAILED` naming the task id and status.
 */

/** The one thing an MCP tool entry needs from a connection: send `tools/call`. */
export interface McpToolCaller {
  /**
   * Sends `tools/call` and returns the server's result as is (`isError` results included).
   * Throws `ServerError` (phase `call`) for transport, protocol, timeout and abort failures.
   */
  callTool(
    name: string,
    args: Record<string, unknown>,
    context: ToolCallContext,
    capabilities?: ToolCallCapabilities,
    tool?: ListedToolHints,
  ): Promise<CallToolResult>;
}

/** What the tool's listing says about how to call it. */
export interface ListedToolHints {
  /** `execution.taskSupport`: `forbidden` never declares the Tasks extension, `required` always does. */
  taskSupport?: TaskSupport;
  /**
   * The listed input schema: on 2026 a tool without `x-mcp-header` declarations needs no header
   * mirroring, so the call skips the SDK's `callTool` (see `sendV2`).
   */
  inputSchema?: unknown;
}

/**
 * Sends one `tools/call` over a connected SDK `Client` and returns the server's result as is
 * (`isError` results included). Progress notifications go to `capabilities.onProgress`, and
 * restart the `callMs` timeout (up to `maxCallMs`) with `resetOnProgress`; the call is cancelled
 * (the SDK sends `notifications/cancelled`) when `context.signal` fires.
 * @throws ServerError phase `call`, with the codes listed at the top of this module.
 */
export function sendToolCall(
  client: McpClient,
  name: string,
  args: Record<string, unknown>,
  context: ToolCallContext,
  capabilities: ToolCallCapabilities | undefined,
  options: SendToolCallOptions,
): Promise<CallToolResult> {
  // Not async: the usual call is one leg, whose promise is returned as is (an async frame here
  // was one more promise and microtask hop per call on the hot path).
  try {
    // The Tasks extension is declared per call too: only where the server offers it (or the
    // tool requires it), and never for a tool that forbids it.
    const tasks = isV2Client(client) && declaresTasks(client, options.taskSupport?.());
    if (tasks) return sendOrFollowTask(client, name, args, context, capabilities, options);
    return sendCall(client, name, args, context, capabilities, options, false);
  } catch (error) {
    return Promise.reject(error as Error);
  }
}

/** A call that declares the Tasks extension: a run that paused after it became a task follows that task. */
async function sendOrFollowTask(
  client: McpClient,
  name: string,
  args: Record<string, unknown>,
  context: ToolCallContext,
  capabilities: ToolCallCapabilities | undefined,
  options: SendToolCallOptions,
): Promise<CallToolResult> {
  const { followTask, taskLedger } = await import('./tasks.js');
  const noted = await taskLedger(context, options.serverName, name, args)?.recall();
  if (noted !== undefined) {
    const handle = { ...noted, status: 'working', pollIntervalMilliseconds: 0 };
    return followTask(client as Client, handle, name, args, context, options, context.signal);
  }
  return sendCall(client, name, args, context, capabilities, options, true);
}

/** Sends the call: one leg, or the rounds of a 2026 server's questions when someone answers them. */
function sendCall(
  client: McpClient,
  name: string,
  args: Record<string, unknown>,
  context: ToolCallContext,
  capabilities: ToolCallCapabilities | undefined,
  options: SendToolCallOptions,
  tasks: boolean,
): Promise<CallToolResult> {
  const base: ToolCallParams = { name, arguments: args };
  const handler = capabilities?.inputRequests;
  // A forwarded call (`agents serve`) keeps the SDK's auto-fulfilment through the forwarding
  // handlers; 2025-era servers ask with their own requests, as before.
  if (
    handler === undefined ||
    capabilities?.clientRequests !== undefined ||
    !isV2Client(client) ||
    client.getProtocolEra() !== 'modern'
  ) {
    // 2026 capabilities travel per request, and ours replace the client's: declare both.
    const params = tasks
      ? {
          ...base,
          _meta: { [CLIENT_CAPABILITIES_META_KEY]: withTasksExtension(options.clientCapabilities) },
        }
      : base;
    return sendLeg(
      client,
      params,
      context,
      capabilities,
      options,
      false,
    ) as Promise<CallToolResult>;
  }
  // Declared per request (2026 carries capabilities in each request's `_meta`), so 2025-era
  // servers on the same client are still offered nothing they could not get answered.
  const signal = context.signal;
  // Sampling only when someone may answer it (the policy decides, see policy/input-gate.ts).
  const offered = {
    elicitation: { form: {} },
    ...(handler.offersSampling === true ? { sampling: {} } : {}),
    ...(options.roots === undefined ? {} : { roots: { listChanged: true } }),
  };
  const declared = tasks ? withTasksExtension(offered) : offered;
  return runInputRounds(
    (params) => sendLeg(client, params, context, capabilities, options, true),
    { ...base, _meta: { [CLIENT_CAPABILITIES_META_KEY]: declared } },
    {
      serverName: options.serverName,
      toolName: name,
      handler,
      ...(options.roots === undefined ? {} : { roots: options.roots }),
      ...(capabilities?.inputObserver === undefined ? {} : { observe: capabilities.inputObserver }),
      ...(signal === undefined ? {} : { signal }),
    },
  );
}

/**
 * One `tools/call` request (one leg of a multi-round-trip call): its own timeouts and cap, so
 * the time a person takes between legs is never counted. With `manual`, an `input_required`
 * answer is handed back instead of being answered by the SDK's registered handlers.
 */
async function sendLeg(
  client: McpClient,
  params: ToolCallParams,
  context: ToolCallContext,
  capabilities: ToolCallCapabilities | undefined,
  options: SendToolCallOptions,
  manual: boolean,
): Promise<CallToolResult | InputRequiredResult> {
  const name = params.name;
  // An already-aborted signal is refused by the SDK and mapped below like any cancellation.
  const signal = context.signal;
  const leg = legRequest(client, signal, capabilities?.onProgress, options);
  try {
    const result = isV2Client(client)
      ? await sendV2(client, params, leg.options, manual, options)
      : await client.request(
          { method: 'tools/call', params: { name, arguments: params.arguments } },
          v1SchemaLoaded ?? (await v1ResultSchema()),
          leg.options,
        );
    const task = taskHandleOf(result);
    if (task !== undefined && isV2Client(client)) {
      const { followTask } = await import('./tasks.js');
      return await followTask(client, task, name, params.arguments, context, options, signal);
    }
    return isInputRequired(result) ? result : fromLegacyResult(result);
  } catch (error) {
    throw toolCallError(error, name, signal, options, leg.cap?.reached === true);
  }
}

/**
 * A leg over the SDK v2 client. `callTool` is only needed where it adds something: a leg whose
 * `input_required` answer comes back to us, and header mirroring (`Mcp-Param-*` from the tool's
 * `x-mcp-header` declarations, 2026 only). Otherwise `request` skips what `callTool` redoes per
 * call: the output-validator cache look-up (we check `outputSchema` ourselves, `assertToolOutput`),
 * the header scan, and on 2026 a second schema pass over a result the 2026 codec has already
 * parsed against the wire schema.
 */
function sendV2(
  client: Client,
  params: ToolCallParams,
  requestOptions: RequestOptions,
  manual: boolean,
  options: SendToolCallOptions,
): Promise<CallToolResult | InputRequiredResult> {
  const modern = client.getProtocolEra() === 'modern';
  if (manual || (modern && mayMirrorHeaders(options.inputSchema?.()))) {
    return client.callTool(params as Parameters<typeof client.callTool>[0], {
      ...requestOptions,
      ...(manual ? manualOptions(params.name, options) : {}),
    }) as Promise<CallToolResult | InputRequiredResult>;
  }
  const request = {
    method: 'tools/call' as const,
    params: params as unknown as Record<string, unknown>,
  };
  if (modern)
    return client.request(request, PASS_THROUGH, requestOptions) as Promise<CallToolResult>;
  const schema = eraResultSchema(client);
  return (
    schema === undefined
      ? client.request(request, requestOptions)
      : client.request(request, schema, requestOptions)
  ) as Promise<CallToolResult>;
}

type ResultSchema = Parameters<Exclude<McpClient, Client>['request']>[1];
let v1Schema: Promise<ResultSchema> | undefined;
/** The same schema once loaded: later calls take it without an `await`. */
let v1SchemaLoaded: ResultSchema | undefined;

/**
 * The result schema a v1 client's `request` parses with: the SDK v2's own (zod 4, which the v1
 * SDK accepts), loaded on a v1 client's first call, not on import (it loads zod and the spec
 * schemas), and kept, so later calls do no import.
 */
function v1ResultSchema(): Promise<ResultSchema> {
  return (v1Schema ??= import('@modelcontextprotocol/client').then(
    (sdk) => (v1SchemaLoaded = sdk.specTypeSchemas.CallToolResult as unknown as ResultSchema),
  ));
}

/** Request options of a leg whose `input_required` answer comes back to us (see `inputSchema`). */
function manualOptions(name: string, options: SendToolCallOptions): CallToolRequestOptions {
  const inputSchema = options.inputSchema?.();
  return {
    allowInputRequired: true,
    ...(inputSchema === undefined
      ? {}
      : { toolDefinition: { name, inputSchema } as CallToolRequestOptions['toolDefinition'] }),
  };
}

/** Servers on protocol 2024-10-07 answer with `{ toolResult }` instead of `content`. */
function fromLegacyResult(result: CallToolResult): CallToolResult {
  if (result.content.length > 0 || !('toolResult' in result)) return result;
  const legacy: unknown = result['toolResult'];
  return {
    content: [
      { type: 'text', text: typeof legacy === 'string' ? legacy : JSON.stringify(legacy ?? null) },
    ],
  };
}

/**
 * Checks a tool's `structuredContent` against the `outputSchema` it declared (the spec: a tool
 * with an output schema MUST return conforming structured content, unless `isError`).
 * @throws ServerError `PROTOCOL_ERROR` (phase `call`) naming the first problems.
 */
export function assertToolOutput(
  result: CallToolResult,
  validator: ArgumentValidator,
  serverName: string,
  toolName: string,
): CallToolResult {
  if (result.isError === true) return result;
  const where = `Tool "${toolName}" on server "${serverName}"`;
  const details: ServerErrorDetails = { serverName, phase: 'call', toolName };
  if (result.structuredContent === undefined) {
    throw new ServerError(
      AgentsErrorCode.ProtocolError,
      `${where} declares an outputSchema but returned no structuredContent. Report it to the server's authors.`,
      details,
    );
  }
  const verdict = validator.validate(result.structuredContent);
  if (verdict.valid) return result;
  throw new ServerError(
    AgentsErrorCode.ProtocolError,
    `${where} returned structuredContent that does not match its outputSchema: ${verdict.message}. Report it to the server's authors.`,
    details,
  );
}

/** Options for {@link createClientCaller}. */
export interface ClientCallerOptions {
  /** Per-call timeout (default: the config schema's `timeouts.callMs`). */
  callTimeoutMs?: number;
  /** Hard cap per call, even while progress arrives (default: the config schema's `timeouts.maxCallMs`). */
  maxCallMs?: number;
  /** Progress notifications restart `callTimeoutMs`, up to `maxCallMs` (default: off, `timeouts.resetOnProgress`). */
  resetTimeoutOnProgress?: boolean;
  /**
   * The `capabilities` the `Client` was built with (default none), declared along with the Tasks
   * extension on a call that declares it: the SDK gives no public way to read them back. Tasks
   * need the client connected over `withTaskHandles(transport)`.
   */
  clientCapabilities?: ClientCapabilities;
}

/**
 * An {@link McpToolCaller} over a connected SDK `Client`, with no supervision (no restart, no
 * "tool no longer available" check): each call is one {@link sendToolCall}.
 */
export function createClientCaller(
  client: McpClient,
  serverName: string,
  options: ClientCallerOptions = {},
): McpToolCaller {
  const defaults = resolveServerTimeouts();
  const callOptions: SendToolCallOptions = {
    serverName,
    callMs: options.callTimeoutMs ?? defaults.callMs,
    maxCallMs: options.maxCallMs ?? defaults.maxCallMs,
    resetOnProgress: options.resetTimeoutOnProgress ?? defaults.resetOnProgress,
    ...(options.clientCapabilities === undefined
      ? {}
      : { clientCapabilities: options.clientCapabilities }),
  };
  // One options object per listed tool, made on its first call (hints are kept per tool).
  const byTool = new WeakMap<ListedToolHints, SendToolCallOptions>();
  const optionsFor = (tool: ListedToolHints): SendToolCallOptions => {
    let found = byTool.get(tool);
    if (found === undefined) {
      const { taskSupport, inputSchema } = tool;
      found = {
        ...callOptions,
        ...(taskSupport === undefined ? {} : { taskSupport: () => taskSupport }),
        ...(inputSchema === undefined ? {} : { inputSchema: () => inputSchema }),
      };
      byTool.set(tool, found);
    }
    return found;
  };
  return {
    callTool: (name, args, context, capabilities, tool) =>
      sendToolCall(
        client,
        name,
        args,
        context,
        capabilities,
        tool === undefined ? callOptions : optionsFor(tool),
      ),
  };
}
