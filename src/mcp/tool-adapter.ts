import type { StructuredTool } from '@langchain/core/tools';
import type * as StructuredToolModule from './structured-tool.js';
import type { McpClient } from './mcp-client.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/client';
import type { ToolOverrides } from '../config/tool-schema.js';
import { AgentsError, AgentsErrorCode } from '../errors.js';
import type { ToolCallCapabilities, ToolCallContext, ToolEntry } from '../core/tool-descriptor.js';
import { listToolsWithHints } from './list-tools.js';
import { isV2Client } from './mcp-client.js';
import { createClientCaller, type ClientCallerOptions } from './tool-call.js';
import { buildMcpToolEntries, type McpToolEntry, type PathArgumentDetector } from './tool-entry.js';

export {
  createMcpToolEntries,
  type McpToolEntriesOptions,
  type PathArgumentDetector,
} from './tool-entry.js';

/**
 * The module, once loaded: each `import()` of it (even when cached) is a trip through the module
 * loader, which under a loader hook such as tsx's is a message to the hooks thread.
 */
let structuredToolModule: Promise<typeof StructuredToolModule> | undefined;

/** Options for {@link createMcpToolAdapter}. */
export interface McpToolAdapterOptions extends ClientCallerOptions {
  serverName: string;
  /**
   * An SDK client that is already connected. The SDK v2 `Client` (`@modelcontextprotocol/client`)
   * speaks both revisions; a v1 `Client` (`@modelcontextprotocol/sdk`) still works, on the
   * 2025-era revisions it knows. The adapter does not close it.
   */
  client: McpClient;
  overrides?: ToolOverrides;
  trusted?: boolean;
  prefixToolNames?: boolean;
  detectPathArguments?: PathArgumentDetector;
  /**
   * `'throw'` makes `tools()` throw on an `isError` result, like `@langchain/mcp-adapters`
   * (see `StructuredToolOptions.errors`); default `'tool-message'`.
   */
  errors?: 'tool-message' | 'throw';
}

/** The MCP tool adapter of ADR-029 "Model Context Protocol (MCP) Adoption", over one server. */
export interface McpToolAdapter {
  readonly serverName: string;
  /**
   * Lists every page of tools and caches the entries; `refresh: true` lists again. A list without
   * caching hints is kept until then. One with a `ttlMs` (2026-07-28) is reused while fresh and
   * listed again once it runs out; with an SDK v2 client the client's own response cache decides,
   * which also drops the list on `notifications/tools/list_changed`, so a change the client
   * hears is seen by the next call here.
   */
  listTools(options?: { signal?: AbortSignal; refresh?: boolean }): Promise<ToolEntry[]>;
  /**
   * Validates and calls a tool by its server-side (original) name; the call itself is sent by
   * `mcp/tool-call.ts`, the one module that sends `tools/call`.
   * @throws AgentsError `TOOL_NOT_FOUND` for a name the server did not list.
   */
  execute(
    toolName: string,
    args: Record<string, unknown>,
    context?: ToolCallContext,
    capabilities?: ToolCallCapabilities,
  ): Promise<CallToolResult>;
  /** LangChain tools for ToolNode over the current entries (no middleware). */
  tools(options?: { signal?: AbortSignal; refresh?: boolean }): Promise<StructuredTool[]>;
}

/**
 * Creates the McpToolAdapter for an already-connected SDK `Client`: lists all tool pages,
 * builds descriptors and entries ({@link createMcpToolEntries}), and gives LangChain tools.
 * Lifecycles (spawn, restart, close) belong to `servers/`; this adapter never closes the client.
 */
export function createMcpToolAdapter(options: McpToolAdapterOptions): McpToolAdapter {
  const { serverName, client } = options;
  const caller = createClientCaller(client, serverName, options);
  let entries: McpToolEntry[] | undefined;
  /** The entries by server-side name, made on the first `execute` after each (re)build. */
  let byOriginalName: Map<string, McpToolEntry> | undefined;
  /** When the last listing's `ttlMs` ends (undefined: no hint, kept until a refresh). */
  let ttl: { until: number } | undefined;
  /**
   * The tool list the entries were built from, to skip rebuilding an unchanged list; its JSON is
   * written only when a second listing needs the comparison (a first listing, all most adapters
   * ever make, never pays for it: 500 tools are 0.3–0.5 ms of JSON).
   */
  let builtFrom: { tools: readonly Tool[]; json?: string } | undefined;

  async function listTools(
    listOptions: { signal?: AbortSignal; refresh?: boolean } = {},
  ): Promise<McpToolEntry[]> {
    const refresh = listOptions.refresh === true;
    // No hint: kept until asked. A v1 client has no cache of its own: ours ends with the TTL.
    if (entries !== undefined && !refresh) {
      if (ttl === undefined) return entries;
      if (!isV2Client(client) && Date.now() < ttl.until) return entries;
    }
    const listing = await listToolsWithHints(client, {
      serverName,
      ...(listOptions.signal === undefined ? {} : { signal: listOptions.signal }),
      // The v2 client answers from its cache while the TTL runs and nothing evicted it.
      ...(entries !== undefined && !refresh && ttl !== undefined ? { cacheMode: 'use' } : {}),
    });
    // ttlMs 0 is "stale at once": each listTools() asks again.
    ttl = listing.ttlMs === undefined ? undefined : { until: Date.now() + listing.ttlMs };
    const { tools } = listing;
    if (entries !== undefined && builtFrom !== undefined) {
      builtFrom.json ??= JSON.stringify(builtFrom.tools);
      const definitions = JSON.stringify(tools);
      if (definitions === builtFrom.json) return entries;
      builtFrom = { tools, json: definitions };
    } else {
      builtFrom = { tools };
    }
    const next = buildMcpToolEntries({
      serverName,
      tools,
      caller,
      ...(options.overrides === undefined ? {} : { overrides: options.overrides }),
      ...(options.trusted === undefined ? {} : { trusted: options.trusted }),
      ...(options.prefixToolNames === undefined
        ? {}
        : { prefixToolNames: options.prefixToolNames }),
      ...(options.detectPathArguments === undefined
        ? {}
        : { detectPathArguments: options.detectPathArguments }),
    });
    // Swap both views together so a concurrent execute never sees a mix.
    entries = next;
    byOriginalName = undefined;
    return next;
  }

  return {
    serverName,
    listTools,
    async execute(toolName, args, context = {}, capabilities) {
      const current =
        entries ??
        (await listTools(context.signal === undefined ? {} : { signal: context.signal }));
      byOriginalName ??= new Map(current.map((entry) => [entry.originalName, entry]));
      const entry = byOriginalName.get(toolName);
      if (entry === undefined) {
        throw new AgentsError(
          AgentsErrorCode.ToolNotFound,
          `Server "${serverName}" has no tool "${toolName}" (or it is disabled); list its tools to see what it offers.`,
          { details: { serverName, toolName } },
        );
      }
      return entry.execute(args, context, capabilities);
    },
    async tools(listOptions = {}) {
      // LangChain core (and langsmith under it) loads here, on first use: a program that only
      // lists or executes tools, or imports this module, never pays for it (issue 29).
      const [current, { toLazilyDescribedStructuredTool }] = await Promise.all([
        listTools(listOptions),
        (structuredToolModule ??= import('./structured-tool.js')),
      ]);
      const toolOptions = options.errors === undefined ? {} : { errors: options.errors };
      // Binding reads the name, description and schema; the rest of each descriptor is built
      // when a call (or anything else) first asks for it.
      return current.map((entry) =>
        toLazilyDescribedStructuredTool(
          entry,
          (request) => entry.execute(request.args, request.context, request.capabilities),
          toolOptions,
        ),
      );
    },
  };
}
