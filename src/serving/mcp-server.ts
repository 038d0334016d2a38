import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  CallToolResultSchema,
  ErrorCode,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import type { Tool, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import { AgentsError, AgentsErrorCode, errorMessage } from '../errors.js';
import { createClientRequestForwarder, JsonRpcError } from '../core/client-requests.js';
import { runWithApprover } from '../policy/approval-scope.js';
import type { ToolCallContext, ToolDescriptor, ToolResult } from '../core/tool-descriptor.js';
import { createClientRequestSink, trackLoggingLevel } from './client-forwarding.js';
import { createElicitationApprover } from './elicitation-approver.js';
import { createServedToolSet } from './served-tool-set.js';
import type { ServedToolSet, ServedToolSetOptions } from './served-tool-set.js';

/** Key under a served tool's `_meta` holding its id and capability provenance. */
export const SERVED_TOOL_META_KEY = 'agents/tool';
/** Key under an error result's `_meta` holding the error code (and server, when known). */
export const SERVED_ERROR_META_KEY = 'agents/error';

/**
 * The default `instructions` of a served server: the one thing a client cannot infer from the
 * schemas is how results are shaped (ADR-006 "Serve MCP as a second transport over the same
 * tools, not a second implementation" spends the field on the same thing).
 */
export const DEFAULT_SERVE_INSTRUCTIONS = [
  'Tools are served by an agents plugin over the same execution path its LangGraph agents use.',
  'File paths in arguments and results are logical paths relative to the sandbox root; the',
  'server maps them into its sandbox, so never pass host paths.',
  "A call that changed files carries `_meta['agents/change']` in its result: { toolId, snapshot,",
  'parent, changed: [{ status, path }] }, listing every file it added (A), modified (M) or',
  'deleted (D).',
  'Tool failures (including an upstream server being down) come back as results with',
  "isError: true and the reason in the text content (and `_meta['agents/error'].code`); they",
  'are not protocol errors. Tool annotations state capabilities inferred by the plugin',
  '(readOnlyHint is never true for a tool that may write).',
  "A call the server's safety policy wants approved is put to the client with elicitation/create",
  '(decision: approve | reject); a client without elicitation gets an isError refusal.',
  'Upstream servers behind the tools may ask the client, during a call, for sampling/createMessage',
  'or elicitation/create, and send log messages (notifications/message, logger "<server>/..."):',
  'they are forwarded on the call when the client declared the capability.',
  'On protocol 2026-07-28 these questions come as an input_required result to answer by retrying',
  'the call, and log messages only when the request set a logLevel.',
].join(' ');

/** Options of {@link createMcpServer}. */
export interface CreateMcpServerOptions extends Partial<ServedToolSetOptions> {
  /**
   * A tool set shared by several servers (one per HTTP session). When given, `entries`,
   * `middleware`, `subscribe` and `isAvailable` are ignored and the caller closes the set.
   */
  toolSet?: ServedToolSet;
  /** Server name in `initialize` (default `agents`). */
  name?: string;
  /** Server version in `initialize` (default `0.1.0`). */
  version?: string;
  /** The `instructions` text (default {@link DEFAULT_SERVE_INSTRUCTIONS}). */
  instructions?: string;
  /** How calls that need approval are put to the client (see {@link ServeApprovalOptions}). */
  approval?: ServeApprovalOptions;
  /**
   * How long a forwarded upstream `sampling/createMessage` or `elicitation/create` waits for the
   * client (default 10 minutes).
   */
  forwardTimeoutMs?: number;
}

/**
 * How a served call that the policy wants approved is handled. There is no graph to pause over
 * MCP, so the client that made the call is asked with `elicitation/create`; a client without
 * elicitation gets an `isError` refusal.
 */
export interface ServeApprovalOptions {
  /** How long to wait for the client's answer (default 10 minutes); then the call is refused. */
  timeoutMs?: number;
  /** What the refusal to a client without elicitation suggests instead. */
  noElicitationHint?: string;
}

/** Annotations stating OUR inferred capabilities; upstream hints are untrusted and not copied. */
export function toServedAnnotations(descriptor: ToolDescriptor): ToolAnnotations {
  const { capabilities } = descriptor;
  // Never claim read-only for a tool any evidence marks as writing.
  const readOnly = capabilities.readOnly.value && !capabilities.writes.value;
  const annotations: ToolAnnotations = {
    readOnlyHint: readOnly,
    destructiveHint: readOnly ? false : capabilities.destructive.value,
    openWorldHint: capabilities.openWorld.value,
  };
  if (descriptor.title !== undefined) annotations.title = descriptor.title;
  return annotations;
}

/** The `tools/list` entry of one descriptor: name, description and schemas verbatim. */
export function toServedTool(descriptor: ToolDescriptor): Tool {
  const { capabilities } = descriptor;
  const tool: Record<string, unknown> = {
    name: descriptor.name,
    description: descriptor.description,
    inputSchema: descriptor.inputSchema,
  };
  if (descriptor.title !== undefined) tool['title'] = descriptor.title;
  if (descriptor.outputSchema !== undefined) tool['outputSchema'] = descriptor.outputSchema;
  tool['annotations'] = toServedAnnotations(descriptor);
  tool['_meta'] = {
    [SERVED_TOOL_META_KEY]: {
      id: descriptor.id,
      source: descriptor.source,
      ...(descriptor.serverName === undefined ? {} : { serverName: descriptor.serverName }),
      capabilities: {
        readOnly: { value: capabilities.readOnly.value, source: capabilities.readOnly.source },
        writes: { value: capabilities.writes.value, source: capabilities.writes.source },
        destructive: {
          value: capabilities.destructive.value,
          source: capabilities.destructive.source,
        },
        openWorld: { value: capabilities.openWorld.value, source: capabilities.openWorld.source },
      },
    },
  };
  // The schemas are served exactly as the registry holds them; the SDK's Tool type only
  // narrows `inputSchema.type`, which a descriptor from an MCP server already satisfies.
  return tool as Tool;
}

/** Turns a thrown error into the `isError` result the client sees (never a protocol error). */
export function toErrorResult(toolName: string, error: unknown): ToolResult {
  const details: Record<string, unknown> = {
    code: AgentsError.isInstance(error) ? error.code : AgentsErrorCode.ToolCallFailed,
  };
  if (AgentsError.isInstance(error)) {
    // Only the routing facts; stderr tails and commands can hold secrets.
    for (const key of ['serverName', 'phase', 'toolName'] as const) {
      const value = error.details[key];
      if (typeof value === 'string') details[key] = value;
    }
  }
  return {
    content: [{ type: 'text', text: `Tool "${toolName}" failed: ${errorMessage(error)}` }],
    isError: true,
    _meta: { [SERVED_ERROR_META_KEY]: details },
  };
}

/**
 * Low-level SDK server subclass that drops its tool-set subscription on close. Internal: callers
 * see a plain SDK `Server`.
 */
class ServedMcpServer extends Server {
  private readonly cleanups: Array<() => void> = [];

  addCleanup(cleanup: () => void): void {
    this.cleanups.push(cleanup);
  }

  override async close(): Promise<void> {
    for (const cleanup of this.cleanups.splice(0)) cleanup();
    await super.close();
  }
}

/**
 * Creates an SDK `Server` (low-level, so JSON Schemas are served verbatim) whose tools are the
 * given entries: `tools/list` gives each descriptor's name, description, schemas and our
 * capability annotations; `tools/call` runs the same composed middleware chain a graph uses and
 * returns its `CallToolResult` as is. A policy that asks for approval asks the calling client
 * with `elicitation/create`, or refuses with an `isError` result when the client has no
 * elicitation (see {@link ServeApprovalOptions}). Tool failures become `isError` results; an
 * unknown tool name is a JSON-RPC -32602 error. When the entries change, connected clients get
 * `notifications/tools/list_changed`.
 *
 * Connect it with `server.connect(transport)`; `server.close()` closes the connection and drops
 * the registry subscription (a shared `toolSet` stays open; its owner closes it). The server uses
 * its own `oninitialized` hook to know when it may notify; do not replace it.
 */
export function createMcpServer(options: CreateMcpServerOptions): Server {
  if (options.toolSet === undefined && options.entries === undefined) {
    throw new AgentsError(
      AgentsErrorCode.ConfigInvalid,
      'createMcpServer needs `entries` (a function or a tool registry) or a shared `toolSet`.',
    );
  }
  const ownsToolSet = options.toolSet === undefined;
  const toolSet =
    options.toolSet ??
    createServedToolSet({
      entries: options.entries!,
      ...(options.middleware === undefined ? {} : { middleware: options.middleware }),
      ...(options.subscribe === undefined ? {} : { subscribe: options.subscribe }),
      ...(options.isAvailable === undefined ? {} : { isAvailable: options.isAvailable }),
    });

  const server = new ServedMcpServer(
    { name: options.name ?? 'agents', version: options.version ?? '0.1.0' },
    {
      // Prompts and resources: declared and always empty, as on the 2026 side (modern-server.ts),
      // so a client's list calls get an answer on both revisions, not -32601.
      capabilities: { tools: { listChanged: true }, prompts: {}, resources: {}, logging: {} },
      instructions: options.instructions ?? DEFAULT_SERVE_INSTRUCTIONS,
    },
  );

  let initialized = false;
  server.oninitialized = () => {
    initialized = true;
  };

  const stopListening = toolSet.onChange(() => {
    // Before `initialized` the client may not expect notifications; after a disconnect there is
    // nobody to tell. Either way the next tools/list is fresh.
    if (!initialized || server.transport === undefined) return;
    server.sendToolListChanged().catch(() => undefined);
  });
  server.addCleanup(stopListening);
  if (ownsToolSet) server.addCleanup(() => toolSet.close());

  const logLevelPasses = trackLoggingLevel(server);

  server.setRequestHandler(ListPromptsRequestSchema, () => ({ prompts: [] }));
  server.setRequestHandler(ListResourcesRequestSchema, () => ({ resources: [] }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({ resourceTemplates: [] }));
  server.setRequestHandler(ReadResourceRequestSchema, (request) => {
    throw new JsonRpcError(
      ErrorCode.InvalidParams,
      `Resource not found: ${request.params.uri} (this server serves tools only).`,
      { uri: request.params.uri },
    );
  });

  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: toolSet.list().map((tool) => toServedTool(tool.entry.descriptor)),
  }));

  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const name = request.params.name;
    const found = toolSet.get(name);
    if (found === undefined) {
      throw new JsonRpcError(
        ErrorCode.InvalidParams,
        `Unknown tool "${name}". Call tools/list for the tools this server offers now.`,
      );
    }
    if (!found.available) {
      const serverName = found.tool.entry.descriptor.serverName;
      return toErrorResult(
        name,
        new AgentsError(
          AgentsErrorCode.ToolUnavailable,
          `the tool is unavailable because its upstream server${serverName === undefined ? '' : ` "${serverName}"`} is not running; try again later (the tool list changes when it is back).`,
          { details: serverName === undefined ? {} : { serverName } },
        ),
      );
    }
    const { descriptor } = found.tool.entry;
    const progressToken = request.params._meta?.progressToken;
    const context: ToolCallContext = {
      signal: extra.signal,
      toolCallId: `mcp-${extra.sessionId ?? 'local'}-${String(extra.requestId)}`,
      // What upstream servers ask of their client during this call goes to this client; the
      // actor's audit and policy layers add their observer and gate on the way down.
      clientRequests: createClientRequestForwarder(
        createClientRequestSink({
          server,
          requestId: extra.requestId,
          signal: extra.signal,
          sendNotification: extra.sendNotification,
          logLevelPasses,
          ...(options.forwardTimeoutMs === undefined
            ? {}
            : { timeoutMs: options.forwardTimeoutMs }),
        }),
      ),
    };
    if (progressToken !== undefined) {
      context.onProgress = (progress) => {
        extra
          .sendNotification({
            method: 'notifications/progress',
            params: { progressToken, ...progress },
          })
          .catch(() => undefined);
      };
    }
    // A policy in `ask` mode asks the client that made this call (or refuses, if it cannot be
    // asked): the approver is bound to this call only, so concurrent sessions never mix.
    const approver = createElicitationApprover({
      server,
      requestId: extra.requestId,
      signal: extra.signal,
      ...(options.approval?.timeoutMs === undefined
        ? {}
        : { timeoutMs: options.approval.timeoutMs }),
      ...(options.approval?.noElicitationHint === undefined
        ? {}
        : { noElicitationHint: options.approval.noElicitationHint }),
    });
    try {
      const result = await runWithApprover(approver, () =>
        found.tool.handler({ descriptor, args: request.params.arguments ?? {}, context }),
      );
      // A middleware bug must reach the client as a tool error, not a -32602 from the SDK's own
      // result validation.
      if (!CallToolResultSchema.safeParse(result).success) {
        return toErrorResult(
          name,
          new AgentsError(AgentsErrorCode.ToolCallFailed, 'the tool returned a malformed result.'),
        );
      }
      return result;
    } catch (error) {
      return toErrorResult(name, error);
    }
  });

  return server;
}
