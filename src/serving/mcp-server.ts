import { randomBytes } from 'node:crypto';
import {
  createRequestStateCodec,
  InMemoryServerEventBus,
  ProtocolError,
  ProtocolErrorCode,
  Server,
} from '@modelcontextprotocol/server';
import type { McpRequestContext, ServerEventBus } from '@modelcontextprotocol/server';
import { AgentsError, AgentsErrorCode } from '../errors.js';
import type { ToolResult } from '../core/tool-descriptor.js';
import { DEFAULT_APPROVAL_TIMEOUT_MS } from './elicitation-approver.js';
import { PausedCalls } from './paused-calls.js';
import { createToolCallHandler } from './served-call.js';
import type { CallParams, CallState } from './served-call.js';
import { createServedToolSet } from './served-tool-set.js';
import type { ServedToolSet, ServedToolSetOptions } from './served-tool-set.js';
import { DEFAULT_SERVE_INSTRUCTIONS, toServedTool } from './served-tool.js';
import type { ServeApprovalOptions } from './served-tool.js';

// The MCP server of `agents serve`: one SDK v2 low-level `Server` (so JSON Schemas are served
// verbatim) for both protocol revisions. A 2025-era client gets it through `initialize` on a
// session (HTTP) or connection (stdio), with that revision's session features; a 2026-07-28
// request gets a fresh one per request (HTTP) or connection (stdio), built by the same factory.

/** Cache hint on `tools/list`: the list changes when upstream servers come and go. */
export const TOOLS_LIST_CACHE_TTL_MS = 5_000;

/** Cache hint on the (always empty) prompt and resource lists. */
export const EMPTY_LIST_CACHE_TTL_MS = 60 * 60_000;

/** Paused calls kept at most (each waits for its client's answer up to the approval timeout). */
export const MAX_PAUSED_CALLS = 256;

/** What a server says about itself, and how its calls reach their client. */
export interface ServerShape {
  /** Server name in `initialize` / `server/discover` (default `agents`). */
  name?: string;
  /** Server version (default `0.1.0`). */
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

/** Options of {@link createServing}. */
export interface ServingOptions extends ServerShape {
  toolSet: ServedToolSet;
  /** HMAC key for requestState (default: 32 random bytes, so only this process can read it). */
  stateKey?: Uint8Array;
}

/** The shared state of one serving process and the factory of its servers. */
export interface Serving {
  /** Builds the server of one 2026-07-28 HTTP request (`createMcpHandler` calls it). */
  createServer: () => Server;
  /**
   * Builds the server of one connection: a 2025 session or stdio connection (`initialize`), or
   * a 2026-07-28 stdio connection (`serveStdio` pins it, passing `era`). It also sends
   * `notifications/tools/list_changed` when the tool set changes: on 2025 once the client is
   * initialized, on 2026 onto its open `subscriptions/listen` streams (the SDK routes it).
   */
  createConnectionServer: (ctx?: McpRequestContext) => Server;
  /** Carries `notifications/tools/list_changed` to `subscriptions/listen` streams (HTTP). */
  bus: ServerEventBus;
  /** Calls waiting for their client's input. */
  readonly pausedCount: number;
  /** Ends paused calls and stops listening to the tool set. */
  close(): void;
}

/**
 * Serves a tool set on both revisions. `tools/list` gives each descriptor's name, description,
 * schemas and our capability annotations; `tools/call` runs the same composed middleware chain
 * a graph uses (served-call.ts). On 2026-07-28, `server/discover`, the `_meta` envelope checks,
 * the version check and the caching fields come from the SDK; approvals and upstream questions
 * become `input_required` with an HMAC-signed requestState (the SDK's codec, a per-process key,
 * bound to the caller's identity).
 */
export function createServing(options: ServingOptions): Serving {
  const { toolSet } = options;
  const codec = createRequestStateCodec<CallState>({
    key: options.stateKey ?? randomBytes(32),
    ttlSeconds: Math.ceil((options.approval?.timeoutMs ?? DEFAULT_APPROVAL_TIMEOUT_MS) / 1000),
    // A state minted for one caller is refused for another (the HTTP identity; '' on stdio).
    bind: (ctx) => ctx.http?.authInfo?.clientId ?? '',
  });
  const paused = new PausedCalls<ToolResult>(MAX_PAUSED_CALLS);
  const callTool = createToolCallHandler({
    toolSet,
    paused,
    codec,
    ...(options.approval === undefined ? {} : { approval: options.approval }),
    ...(options.forwardTimeoutMs === undefined
      ? {}
      : { forwardTimeoutMs: options.forwardTimeoutMs }),
  });
  // Made on first use: a lone connection server (createMcpServer) has no listen streams.
  let bus: InMemoryServerEventBus | undefined;
  let stopListening = (): void => undefined;

  const createServer = (): Server => {
    const server = new Server(
      { name: options.name ?? 'agents', version: options.version ?? '0.1.0' },
      {
        // Prompts and resources: declared and always empty, so a client's list calls get an
        // answer (with caching fields on 2026) instead of -32601.
        capabilities: { tools: { listChanged: true }, prompts: {}, resources: {}, logging: {} },
        instructions: options.instructions ?? DEFAULT_SERVE_INSTRUCTIONS,
        cacheHints: {
          'tools/list': { ttlMs: TOOLS_LIST_CACHE_TTL_MS, cacheScope: 'private' },
          'prompts/list': { ttlMs: EMPTY_LIST_CACHE_TTL_MS, cacheScope: 'public' },
          'resources/list': { ttlMs: EMPTY_LIST_CACHE_TTL_MS, cacheScope: 'public' },
          'resources/templates/list': { ttlMs: EMPTY_LIST_CACHE_TTL_MS, cacheScope: 'public' },
        },
        requestState: { verify: (state, ctx) => codec.verify(state, ctx) },
        // A 2025 session asks its client directly (served-call.ts); input_required is 2026 only.
        inputRequired: { legacyShim: false },
      },
    );
    server.setRequestHandler('tools/list', () => ({
      tools: toolSet.list().map((tool) => toServedTool(tool.entry.descriptor)),
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
      callTool(server, request.params as CallParams, ctx),
    );
    return server;
  };

  const createConnectionServer = (ctx?: McpRequestContext): Server => {
    const server = createServer();
    // A 2025 client may not expect notifications before it is initialized.
    let ready = ctx?.era === 'modern';
    server.oninitialized = () => {
      ready = true;
    };
    const stop = toolSet.onChange(() => {
      if (ready) void server.sendToolListChanged().catch(() => undefined);
    });
    // Before the SDK's own close handling: the listener goes with the connection.
    const previous = server.onclose;
    server.onclose = () => {
      stop();
      previous?.();
    };
    return server;
  };

  return {
    createServer,
    createConnectionServer,
    get bus() {
      if (bus === undefined) {
        const created = new InMemoryServerEventBus();
        stopListening = toolSet.onChange(() => created.publish({ kind: 'tools_list_changed' }));
        bus = created;
      }
      return bus;
    },
    get pausedCount() {
      return paused.size;
    },
    close() {
      stopListening();
      paused.close();
    },
  };
}

/** Options of {@link createMcpServer}. */
export interface CreateMcpServerOptions extends Partial<ServedToolSetOptions>, ServerShape {
  /**
   * A tool set shared by several servers (one per HTTP session). When given, `entries`,
   * `middleware`, `subscribe` and `isAvailable` are ignored and the caller closes the set.
   */
  toolSet?: ServedToolSet;
}

/**
 * Creates an SDK v2 `Server` whose tools are the given entries, for one connection: connect it
 * with `server.connect(transport)` (a 2025-era client initializes it). `tools/call` runs the
 * same composed middleware chain a graph uses and returns its `CallToolResult` as is. A policy
 * that asks for approval asks the calling client with `elicitation/create`, or refuses with an
 * `isError` result when the client has no elicitation (see {@link ServeApprovalOptions}). Tool
 * failures become `isError` results; an unknown tool name is a JSON-RPC -32602 error. When the
 * entries change, the client gets `notifications/tools/list_changed`. `server.close()` closes
 * the connection and drops the subscription (a shared `toolSet` stays open; its owner closes
 * it). The server uses its own `oninitialized` hook to know when it may notify; do not replace it.
 */
export function createMcpServer(options: CreateMcpServerOptions): Server {
  if (options.toolSet === undefined && options.entries === undefined) {
    throw new AgentsError(
      AgentsErrorCode.ConfigInvalid,
      'createMcpServer needs `entries` (a function or a tool registry) or a shared `toolSet`.',
    );
  }
  const toolSet =
    options.toolSet ??
    createServedToolSet({
      entries: options.entries!,
      ...(options.middleware === undefined ? {} : { middleware: options.middleware }),
      ...(options.subscribe === undefined ? {} : { subscribe: options.subscribe }),
      ...(options.isAvailable === undefined ? {} : { isAvailable: options.isAvailable }),
    });
  const serving = createServing({ ...options, toolSet });
  const server = serving.createConnectionServer();
  const previous = server.onclose;
  server.onclose = () => {
    previous?.();
    serving.close();
    if (options.toolSet === undefined) toolSet.close();
  };
  return server;
}
