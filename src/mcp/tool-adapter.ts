import type { StructuredTool } from '@langchain/core/tools';
import type { McpClient } from './mcp-client.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/client';
import type { ToolOverride, ToolOverrides } from '../config/tool-schema.js';
import { killPoint } from '../core/kill-point.js';
import { AgentsError, AgentsErrorCode, errorMessage } from '../errors.js';
import { inferCapabilities } from './capabilities.js';
import { detectPathArguments as defaultDetectPathArguments } from './path-arguments.js';
import type {
  JsonSchemaObject,
  ToolCallCapabilities,
  ToolCallContext,
  ToolDescriptor,
  ToolEntry,
  ToolResult,
} from '../core/tool-descriptor.js';
import { fingerprintTool } from './fingerprint.js';
import { compileArgumentValidator, type ArgumentValidator } from './json-schema.js';
import { resolveToolNames, type ToolNameCandidate } from './naming.js';
import { isDescriptionAltered, sanitizeDescription } from './sanitize.js';
import { listToolsWithHints } from './list-tools.js';
import { isV2Client } from './mcp-client.js';
import {
  assertToolOutput,
  createClientCaller,
  type ClientCallerOptions,
  type ListedToolHints,
  type McpToolCaller,
} from './tool-call.js';

/** Finds path-typed arguments in an input schema (see `sandbox/path-arguments.ts`). */
export type PathArgumentDetector = (inputSchema: JsonSchemaObject) => string[];

/** Options for {@link createMcpToolEntries}. */
export interface McpToolEntriesOptions {
  serverName: string;
  /** The server's tools as listed on the wire (all pages). */
  tools: readonly Tool[];
  caller: McpToolCaller;
  /** Per-tool overrides keyed by the server's tool name. */
  overrides?: ToolOverrides;
  /** Trust this server's annotations. */
  trusted?: boolean;
  /**
   * Tools whose annotations a person reviewed, by MCP name → definition fingerprint at review:
   * trusted like `trusted: true` while the fingerprint still matches.
   */
  trustedTools?: Readonly<Record<string, string>>;
  /** Reviewed verdicts of a well-known server by MCP tool name (`registry/known-servers.ts`). */
  knownVerdict?: (toolName: string) => { readOnly: true; reason: string } | undefined;
  /** Always name tools `server__tool` (otherwise the registry prefixes only on collision). */
  prefixToolNames?: boolean;
  /** Finds path arguments when no override lists them (default: `sandbox/path-arguments.ts`). */
  detectPathArguments?: PathArgumentDetector;
  /**
   * Path arguments known for this server by tool name (a table of well-known servers), added to
   * what detection finds, so an upstream schema change cannot silently turn rewriting off.
   */
  knownPathArguments?: (toolName: string) => readonly string[] | undefined;
  /** Cap on a description the model sees (default 2048 characters). */
  maxDescriptionLength?: number;
}

function invalidArgumentsResult(toolName: string, message: string): CallToolResult {
  return {
    isError: true,
    content: [
      {
        type: 'text',
        text: `Invalid arguments for tool "${toolName}": ${message}. Fix these arguments and call the tool again.`,
      },
    ],
  };
}

function isSchemaObject(schema: unknown): boolean {
  return typeof schema === 'object' && schema !== null && !Array.isArray(schema);
}

// Runs for every listed tool on every listing: plain object literals of one shape each (no
// conditional spreads), ids built once, each override looked up once.
function buildDescriptor(
  serverName: string,
  tool: Tool,
  id: string,
  name: string,
  override: ToolOverride | undefined,
  options: McpToolEntriesOptions,
  warnings: string[],
): ToolDescriptor {
  const rawDescription = typeof tool.description === 'string' ? tool.description : '';
  const description = sanitizeDescription(override?.description ?? rawDescription, {
    maxLength: options.maxDescriptionLength,
  });
  const inputSchema = tool.inputSchema as JsonSchemaObject;
  let pathArguments = override?.pathArguments;
  if (pathArguments === undefined) {
    try {
      pathArguments = (options.detectPathArguments ?? defaultDetectPathArguments)(inputSchema);
    } catch (error) {
      warnings.push(`path arguments could not be detected: ${errorMessage(error)}`);
    }
    const known = options.knownPathArguments?.(tool.name);
    if (known !== undefined && known.length > 0)
      pathArguments = [...new Set([...(pathArguments ?? []), ...known])];
  }
  const known = options.knownVerdict?.(tool.name);
  const fingerprint = fingerprintTool(tool);
  const reviewed = options.trustedTools?.[tool.name];
  if (reviewed !== undefined && reviewed !== fingerprint) {
    warnings.push(
      `its definition changed since its annotations were reviewed (fingerprint ${reviewed.slice(0, 12)}, now ${fingerprint.slice(0, 12)}); they are ignored until \`agents tool trust ${serverName} --tool ${tool.name}\` records a new review`,
    );
  }
  const descriptor: ToolDescriptor = {
    id,
    name,
    originalName: tool.name,
    source: 'mcp',
    serverName,
    description,
    inputSchema,
    capabilities: inferCapabilities({
      name: tool.name,
      annotations: tool.annotations,
      override,
      trusted: options.trusted === true || reviewed === fingerprint,
      ...(known === undefined ? {} : { known }),
    }),
    pathArguments: pathArguments ?? [],
    fingerprint,
  };
  const title = tool.title ?? tool.annotations?.title;
  if (typeof title === 'string') descriptor.title = title;
  if (rawDescription !== '' && isDescriptionAltered(rawDescription, description)) {
    descriptor.rawDescription = rawDescription;
  }
  if (tool.outputSchema !== undefined)
    descriptor.outputSchema = tool.outputSchema as JsonSchemaObject;
  if (tool.annotations !== undefined) descriptor.annotations = tool.annotations;
  const taskSupport = listedTaskSupport(tool);
  if (taskSupport !== undefined) descriptor.taskSupport = taskSupport;
  if (warnings.length > 0) descriptor.warnings = warnings;
  return descriptor;
}

/** A tool's `execution.taskSupport` when it is one of the three values the spec defines. */
function listedTaskSupport(tool: Tool): ToolDescriptor['taskSupport'] {
  const value = (tool as { execution?: { taskSupport?: unknown } }).execution?.taskSupport;
  return value === 'required' || value === 'optional' || value === 'forbidden' ? value : undefined;
}

/**
 * Turns one server's listed tools into {@link ToolEntry} records: id `mcp:SERVER/TOOL`,
 * provider-safe name, sanitized description (original kept in `rawDescription` when changed),
 * schemas verbatim, inferred capabilities with provenance, path arguments (override, else the
 * detector), and a fingerprint of the whole wire definition. The argument validator is
 * compiled once per tool, on its first call (not at listing: most tools of a large server are
 * never called); each `execute` validates (an invalid call returns an `isError` result
 * naming the field, without reaching the server) and then calls `caller.callTool` with the
 * server's original tool name.
 *
 * Tools disabled by an override (`enabled: false`) are left out.
 * @throws AgentsError `TOOL_NAME_COLLISION` when the server lists the same tool name twice.
 */
export function createMcpToolEntries(options: McpToolEntriesOptions): ToolEntry[] {
  const { serverName, caller, overrides } = options;
  const seen = new Set<string>();
  const listed: Tool[] = [];
  const candidates: ToolNameCandidate[] = [];
  for (const tool of options.tools) {
    if (seen.has(tool.name)) {
      throw new AgentsError(
        AgentsErrorCode.ToolNameCollision,
        `Server "${serverName}" lists the tool "${tool.name}" twice; tool names must be unique within a server. Fix the server or remove it.`,
        { details: { serverName, toolName: tool.name } },
      );
    }
    seen.add(tool.name);
    const override = overrides?.[tool.name];
    if (override?.enabled === false) continue;
    listed.push(tool);
    candidates.push({
      id: `mcp:${serverName}/${tool.name}`,
      originalName: tool.name,
      serverName,
      preferredName: override?.name,
    });
  }

  const names = resolveToolNames(candidates, { alwaysPrefix: options.prefixToolNames === true });

  const entries: ToolEntry[] = [];
  for (let index = 0; index < listed.length; index++) {
    const tool = listed[index]!;
    const id = candidates[index]!.id;
    const warnings: string[] = [];
    if (!isSchemaObject(tool.inputSchema)) {
      warnings.push('inputSchema is not an object; arguments are not validated');
    }
    const descriptor = buildDescriptor(
      serverName,
      tool,
      id,
      names.get(id)!,
      overrides?.[tool.name],
      options,
      warnings,
    );
    entries.push(createEntry(descriptor, tool, caller));
  }
  return entries;
}

function createEntry(descriptor: ToolDescriptor, tool: Tool, caller: McpToolCaller): ToolEntry {
  const toolName = tool.name;
  // Compiled on the first call, then kept: discovery of a large server stays cheap (most tools
  // are never called in a run), and each tool still compiles at most once. A schema that fails
  // to compile adds its warning to the descriptor then.
  let validator: ArgumentValidator | undefined;
  let outputValidator: ArgumentValidator | undefined;
  const hints: ListedToolHints =
    descriptor.taskSupport === undefined
      ? { inputSchema: tool.inputSchema }
      : { inputSchema: tool.inputSchema, taskSupport: descriptor.taskSupport };
  return {
    descriptor,
    execute(
      args: Record<string, unknown>,
      context: ToolCallContext,
      capabilities?: ToolCallCapabilities,
    ): Promise<ToolResult> {
      if (validator === undefined) {
        validator = compileArgumentValidator(tool.inputSchema);
        const warning = validator.warning;
        if (warning !== undefined && !(descriptor.warnings ?? []).includes(warning)) {
          (descriptor.warnings ??= []).push(warning);
        }
      }
      const verdict = validator.validate(args);
      if (!verdict.valid)
        return Promise.resolve(invalidArgumentsResult(descriptor.name, verdict.message));
      killPoint('before-send');
      if (tool.outputSchema === undefined)
        return caller.callTool(toolName, args, context, capabilities, hints);
      outputValidator ??= compileArgumentValidator(tool.outputSchema);
      const checker = outputValidator;
      return caller
        .callTool(toolName, args, context, capabilities, hints)
        .then((result) => assertToolOutput(result, checker, descriptor.serverName ?? '', toolName));
    },
  };
}

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
  let entries: ToolEntry[] | undefined;
  let byOriginalName = new Map<string, ToolEntry>();
  /** When the last listing's `ttlMs` ends (undefined: no hint, kept until a refresh). */
  let ttl: { until: number } | undefined;
  /** The tool definitions the entries were built from, to skip rebuilding an unchanged list. */
  let builtFrom = '';

  async function listTools(
    listOptions: { signal?: AbortSignal; refresh?: boolean } = {},
  ): Promise<ToolEntry[]> {
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
    const definitions = JSON.stringify(tools);
    if (entries !== undefined && definitions === builtFrom) return entries;
    builtFrom = definitions;
    const next = createMcpToolEntries({
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
    byOriginalName = new Map(next.map((entry) => [entry.descriptor.originalName, entry]));
    return next;
  }

  return {
    serverName,
    listTools,
    async execute(toolName, args, context = {}, capabilities) {
      if (entries === undefined)
        await listTools(context.signal === undefined ? {} : { signal: context.signal });
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
      const [current, { toStructuredTool }] = await Promise.all([
        listTools(listOptions),
        import('./structured-tool.js'),
      ]);
      const toolOptions = options.errors === undefined ? {} : { errors: options.errors };
      return current.map((entry) =>
        toStructuredTool(
          entry.descriptor,
          (request) => entry.execute(request.args, request.context, request.capabilities),
          toolOptions,
        ),
      );
    },
  };
}
