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
import { assertToolOutput, type ListedToolHints, type McpToolCaller } from './tool-call.js';

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

function rawDescriptionOf(tool: Tool): string {
  return typeof tool.description === 'string' ? tool.description : '';
}

// Plain object literals of one shape each (no conditional spreads), each override looked up once.
function buildDescriptor(
  serverName: string,
  tool: Tool,
  id: string,
  name: string,
  description: string,
  override: ToolOverride | undefined,
  options: McpToolEntriesOptions,
): ToolDescriptor {
  const warnings: string[] = [];
  if (!isSchemaObject(tool.inputSchema)) {
    warnings.push('inputSchema is not an object; arguments are not validated');
  }
  const rawDescription = rawDescriptionOf(tool);
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
 * One listed MCP tool. What a model binding reads (id, name, sanitized description, input
 * schema) is set at listing; the rest of the descriptor (capabilities, path arguments,
 * fingerprint, warnings) is built when `descriptor` is first read, and the argument validator
 * on the first call. Most tools of a large server are never called nor inspected, and building
 * every descriptor was most of what discovery cost beyond the listing itself. The listed
 * definition must not change after listing (nothing here changes it).
 */
export class McpToolEntry implements ToolEntry {
  readonly id: string;
  readonly name: string;
  readonly originalName: string;
  readonly serverName: string;
  readonly description: string;
  readonly inputSchema: unknown;
  readonly #tool: Tool;
  readonly #override: ToolOverride | undefined;
  readonly #options: McpToolEntriesOptions;
  #descriptor: ToolDescriptor | undefined;
  #validator: ArgumentValidator | undefined;
  #outputValidator: ArgumentValidator | undefined;
  #hints: ListedToolHints | undefined;

  constructor(
    tool: Tool,
    id: string,
    name: string,
    override: ToolOverride | undefined,
    options: McpToolEntriesOptions,
  ) {
    this.id = id;
    this.name = name;
    this.originalName = tool.name;
    this.serverName = options.serverName;
    this.description = sanitizeDescription(override?.description ?? rawDescriptionOf(tool), {
      maxLength: options.maxDescriptionLength,
    });
    this.inputSchema = tool.inputSchema;
    this.#tool = tool;
    this.#override = override;
    this.#options = options;
  }

  get descriptor(): ToolDescriptor {
    return (this.#descriptor ??= buildDescriptor(
      this.serverName,
      this.#tool,
      this.id,
      this.name,
      this.description,
      this.#override,
      this.#options,
    ));
  }

  execute(
    args: Record<string, unknown>,
    context: ToolCallContext,
    capabilities?: ToolCallCapabilities,
  ): Promise<ToolResult> {
    const tool = this.#tool;
    // Compiled on the first call, then kept: each tool compiles at most once. A schema that
    // fails to compile adds its warning to the descriptor then.
    let validator = this.#validator;
    if (validator === undefined) {
      validator = this.#validator = compileArgumentValidator(tool.inputSchema);
      const warning = validator.warning;
      if (warning !== undefined) {
        const descriptor = this.descriptor;
        if (!(descriptor.warnings ?? []).includes(warning))
          (descriptor.warnings ??= []).push(warning);
      }
    }
    const verdict = validator.validate(args);
    if (!verdict.valid) return Promise.resolve(invalidArgumentsResult(this.name, verdict.message));
    killPoint('before-send');
    const hints = (this.#hints ??= listedHints(tool));
    const { caller } = this.#options;
    if (tool.outputSchema === undefined)
      return caller.callTool(tool.name, args, context, capabilities, hints);
    const checker = (this.#outputValidator ??= compileArgumentValidator(tool.outputSchema));
    return caller
      .callTool(tool.name, args, context, capabilities, hints)
      .then((result) => assertToolOutput(result, checker, this.serverName, tool.name));
  }
}

function listedHints(tool: Tool): ListedToolHints {
  const taskSupport = listedTaskSupport(tool);
  return taskSupport === undefined
    ? { inputSchema: tool.inputSchema }
    : { inputSchema: tool.inputSchema, taskSupport };
}

/**
 * Turns one server's listed tools into {@link ToolEntry} records: id `mcp:SERVER/TOOL`,
 * provider-safe name, sanitized description (original kept in `rawDescription` when changed),
 * schemas verbatim, inferred capabilities with provenance, path arguments (override, else the
 * detector), and a fingerprint of the whole wire definition; each descriptor is built when
 * first read ({@link McpToolEntry}). The argument validator is compiled once per tool, on its
 * first call (not at listing: most tools of a large server are never called); each `execute`
 * validates (an invalid call returns an `isError` result naming the field, without reaching
 * the server) and then calls `caller.callTool` with the server's original tool name.
 *
 * Tools disabled by an override (`enabled: false`) are left out.
 * @throws AgentsError `TOOL_NAME_COLLISION` when the server lists the same tool name twice.
 */
export function createMcpToolEntries(options: McpToolEntriesOptions): ToolEntry[] {
  return buildMcpToolEntries(options);
}

/** {@link createMcpToolEntries} with the entries' own type (what binding reads up front). */
export function buildMcpToolEntries(options: McpToolEntriesOptions): McpToolEntry[] {
  const { serverName, overrides } = options;
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

  const entries: McpToolEntry[] = [];
  for (let index = 0; index < listed.length; index++) {
    const tool = listed[index]!;
    const id = candidates[index]!.id;
    entries.push(new McpToolEntry(tool, id, names.get(id)!, overrides?.[tool.name], options));
  }
  return entries;
}
