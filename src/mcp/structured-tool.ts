import { CallbackManager, parseCallbackConfigArg } from '@langchain/core/callbacks/manager';
import { ToolMessage } from '@langchain/core/messages';
import { ensureConfig, mergeConfigs } from '@langchain/core/runnables';
import { AsyncLocalStorageProviderSingleton } from '@langchain/core/singletons';
import { StructuredTool } from '@langchain/core/tools';
import type {
  StructuredToolCallInput,
  ToolReturnType,
  ToolSchemaBase,
  ToolRunnableConfig,
} from '@langchain/core/tools';
import { AgentsError, AgentsErrorCode } from '../errors.js';
import type { ToolCallHandler } from '../core/tool-middleware.js';
import type {
  ToolCallCapabilities,
  ToolCallContext,
  ToolDescriptor,
  ToolTaskStore,
} from '../core/tool-descriptor.js';
import { resultText, toToolMessageContent, toToolMessageParts } from './content.js';
import { threadIdOf } from '../core/thread-id.js';

interface ToolCallLike {
  id?: string;
  args: unknown;
}

function isToolCall(value: unknown): value is ToolCallLike & { type: 'tool_call' } {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as { type?: unknown }).type === 'tool_call'
  );
}

/**
 * LangGraph hands nodes its store wrapped in an `AsyncBatchedStore` that only works while the
 * run does; a task is noted when the call's answer comes, which may be after the run paused
 * (a sibling tool's interrupt), so the note goes to the store underneath.
 */
function underlyingStore(value: unknown): unknown {
  return isRecord(value) && value['lg_name'] === 'AsyncBatchedStore' ? value['store'] : value;
}

function isTaskStore(value: unknown): value is ToolTaskStore {
  return (
    isRecord(value) && typeof value['get'] === 'function' && typeof value['put'] === 'function'
  );
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * What a tool call writes to LangGraph's custom stream (`streamMode: 'custom'`) for each
 * progress notification its server sends.
 */
export interface ToolProgressEvent {
  type: 'tool-progress';
  /** The provider-safe tool name the model called. */
  toolName: string;
  /** The descriptor id, e.g. `mcp:SERVER/TOOL`. */
  toolId: string;
  toolCallId?: string;
  serverName?: string;
  progress: number;
  total?: number;
  message?: string;
}

/**
 * What a tool call writes to LangGraph's custom stream when it is sent again: a read-only call
 * whose server died under it and was restarted, or a call whose HTTP session was lost.
 */
export interface ToolRetryEvent {
  type: 'tool-retry';
  toolName: string;
  toolId: string;
  toolCallId?: string;
  serverName?: string;
  reason: 'server-restarted' | 'session-lost';
  message: string;
}

type StreamWriter = (chunk: unknown) => void;

/**
 * How long one reading of LangChain's callback environment variables is reused, in ms.
 * `CallbackManager.configure` reads six of them on every call, and each `process.env` lookup
 * is a call into C++: together they were the largest single cost of a direct invoke (2–3 µs of a
 * 15–20 µs in-memory call). They are process settings, so a change is seen within this window.
 */
const CALLBACK_ENV_TTL_MS = 100;
/** What `configure` reads: verbose, and the variables of `isTracingEnabled()` (any `"true"`). */
const CALLBACK_ENV_VARIABLES = [
  'LANGCHAIN_VERBOSE',
  'LANGSMITH_TRACING_V2',
  'LANGCHAIN_TRACING_V2',
  'LANGSMITH_TRACING',
  'LANGCHAIN_TRACING',
] as const;
let callbackEnvReadAt = Number.NEGATIVE_INFINITY;
let callbackEnvOn = false;

/** True when the environment switches verbose output or tracing on (read at most every 100 ms). */
function callbackEnvironmentOn(): boolean {
  const now = Date.now();
  // `now < callbackEnvReadAt`: the clock went back (or a test moved it); read again.
  if (now - callbackEnvReadAt >= CALLBACK_ENV_TTL_MS || now < callbackEnvReadAt) {
    callbackEnvReadAt = now;
    callbackEnvOn = CALLBACK_ENV_VARIABLES.some((name) => process.env[name] === 'true');
  }
  return callbackEnvOn;
}

/** Options for {@link toStructuredTool}. */
export interface StructuredToolOptions {
  /**
   * How an `isError` result of a tool call comes back. `'tool-message'` (default): a
   * `ToolMessage` with `status: 'error'`, the server's text as content and the artifact kept.
   * `'throw'`: thrown as `AgentsError` `TOOL_CALL_FAILED`, as `@langchain/mcp-adapters` throws
   * `ToolException`; ToolNode then answers `Error: <text>\n Please fix your mistakes.` (no
   * artifact), and a ToolNode with `handleToolErrors: false` ends the run.
   */
  errors?: 'tool-message' | 'throw';
}

/**
 * A LangChain tool over one {@link ToolDescriptor} and its composed handler.
 *
 * `invoke()` and `call()` are overridden on purpose: the handler's entry already validates
 * arguments with the server's own JSON Schema (ajv, compiled once), so LangChain's second JSON
 * Schema validation and its tool-start serialization are skipped; callbacks still fire when any
 * are configured (config, the tool, an enclosing run, a configure hook, verbose or tracing). The
 * schema is still exposed for model binding. LangChain's own `call()` (a `tool()` over the same
 * JSON Schema) cost ~150 µs a call against ~15 µs here (2026-12-07, in-process, a trivial tool);
 * test/mcp/structured-tool-pinning.test.ts keeps what callbacks and `streamEvents` see equal to
 * what a LangChain `tool()` reports, directly, through ToolNode and on a throw.
 */
class McpStructuredTool extends StructuredTool<ToolSchemaBase> {
  static override lc_name(): string {
    return 'McpStructuredTool';
  }

  name: string;
  description: string;
  schema: ToolSchemaBase;
  /** The descriptor, or an MCP tool entry that builds it on the first read. */
  readonly #tool: ToolDescriptor | LazilyDescribedTool;
  readonly #handler: ToolCallHandler;
  readonly #throwErrors: boolean;

  constructor(
    tool: ToolDescriptor | LazilyDescribedTool,
    handler: ToolCallHandler,
    options: StructuredToolOptions = {},
  ) {
    const metadata: Record<string, unknown> = { toolId: tool.id };
    if (tool.serverName !== undefined) metadata['serverName'] = tool.serverName;
    super({ responseFormat: 'content_and_artifact', metadata });
    this.name = tool.name;
    this.description = tool.description;
    this.schema = tool.inputSchema as ToolSchemaBase;
    this.#tool = tool;
    this.#handler = handler;
    this.#throwErrors = options.errors === 'throw';
  }

  get descriptor(): ToolDescriptor {
    const tool = this.#tool;
    return 'descriptor' in tool ? tool.descriptor : tool;
  }

  override invoke<
    TInput extends StructuredToolCallInput<ToolSchemaBase>,
    TConfig extends ToolRunnableConfig | undefined,
  >(input: TInput, config?: TConfig): Promise<ToolReturnType<TInput, TConfig, unknown>> {
    // The config StructuredTool.invoke builds (defaults merged, the implicit config of an
    // enclosing run applied, the tool call added), minus its extra async step through call().
    let enriched: ToolRunnableConfig;
    try {
      enriched = ensureConfig(mergeConfigs(this.defaultConfig, config));
    } catch (error) {
      // As from the async original: a bad config (e.g. timeout <= 0) rejects, never throws.
      return Promise.reject(error as Error);
    }
    return this.#run(
      input,
      isToolCall(input) ? { ...enriched, toolCall: input } : enriched,
      undefined,
    ) as Promise<ToolReturnType<TInput, TConfig, unknown>>;
  }

  override call<
    TArg extends StructuredToolCallInput<ToolSchemaBase>,
    TConfig extends ToolRunnableConfig | undefined,
  >(
    arg: TArg,
    configArg?: TConfig,
    tags?: string[],
  ): Promise<ToolReturnType<TArg, TConfig, unknown>> {
    return this.#run(arg, configArg, tags) as Promise<ToolReturnType<TArg, TConfig, unknown>>;
  }

  protected override _call(): Promise<never> {
    // Never reached: call() is overridden and runs the handler itself.
    return Promise.reject(new Error('McpStructuredTool._call is not used'));
  }

  /** Progress and retries written to the graph's custom stream (LangGraph's `writer`). */
  #streamCapabilities(writer: StreamWriter, toolCallId: string | undefined): ToolCallCapabilities {
    const { id: toolId, serverName } = this.#tool;
    // What every event names: the tool, and the call when it has an id.
    const tool = {
      toolName: this.name,
      toolId,
      ...(toolCallId === undefined ? {} : { toolCallId }),
      ...(serverName === undefined ? {} : { serverName }),
    };
    const write = (event: ToolProgressEvent | ToolRetryEvent): void => {
      try {
        writer(event);
      } catch {
        // A failing stream consumer must not fail the tool call.
      }
    };
    return {
      onProgress: (progress) =>
        write({
          type: 'tool-progress',
          ...tool,
          progress: progress.progress,
          ...(progress.total === undefined ? {} : { total: progress.total }),
          ...(progress.message === undefined ? {} : { message: progress.message }),
        }),
      onRetry: (retry) => write({ type: 'tool-retry', ...tool, ...retry }),
    };
  }

  async #run(arg: unknown, configArg: unknown, tags: string[] | undefined): Promise<unknown> {
    const direct = isToolCall(arg) ? arg : undefined;
    const args: unknown = direct === undefined ? arg : direct.args;
    // Read straight off the config (no intermediate object): this runs on every call.
    const record = isRecord(configArg) ? configArg : undefined;
    const configToolCall = record?.['toolCall'];
    const toolCallId =
      direct?.id ??
      (isRecord(configToolCall) && typeof configToolCall['id'] === 'string'
        ? configToolCall['id']
        : undefined);

    const config = parseCallbackConfigArg(
      configArg as Parameters<typeof parseCallbackConfigArg>[0],
    );
    // LangChain's configure() attaches handlers only from: callbacks in the config or on the
    // tool, verbose, tracing (environment, or a traced run in async-local storage), and
    // configure hooks (context variables, also in async-local storage). With none of them it
    // returns no manager, so it is not asked at all then; with any of them it decides as usual.
    const mayHaveHandlers =
      config.callbacks !== undefined ||
      this.callbacks !== undefined ||
      this.verbose ||
      AsyncLocalStorageProviderSingleton.getInstance().getStore() !== undefined ||
      callbackEnvironmentOn();
    const callbackManager = mayHaveHandlers
      ? CallbackManager.configure(
          config.callbacks,
          this.callbacks,
          config.tags ?? tags,
          this.tags,
          config.metadata,
          this.metadata,
          { verbose: this.verbose },
        )
      : undefined;
    // A manager without handlers (e.g. LANGCHAIN_TRACING=false makes one) would notify nobody:
    // skip the tool serialization and run bookkeeping.
    const runManager =
      callbackManager === undefined || callbackManager.handlers.length === 0
        ? undefined
        : await callbackManager.handleToolStart(
            this.toJSON(),
            isRecord(args) ? args : String(args),
            config.runId,
            undefined,
            undefined,
            undefined,
            config.runName ?? this.name,
            toolCallId,
          );

    let output: unknown;
    try {
      if (!isRecord(args)) {
        throw new AgentsError(
          AgentsErrorCode.InvalidArguments,
          `Tool "${this.name}" takes an object of named arguments, got ${Array.isArray(args) ? 'an array' : typeof args}.`,
          { details: { toolId: this.#tool.id } },
        );
      }
      // The call's one record, built here once, in one shape: the layers below pass it as is.
      const signal = record?.['signal'];
      // The graph's store (compile({ store })), where a call that became a server task is noted.
      const store = underlyingStore(record?.['store']);
      const context: ToolCallContext = {
        config: configArg,
        signal: signal instanceof AbortSignal ? signal : undefined,
        toolCallId,
        threadId: threadIdOf(record),
        taskStore: isTaskStore(store) ? store : undefined,
      };
      // LangGraph (1.x) puts the custom-stream writer on the config it passes to tools (ToolNode's
      // runtime). Only inside a graph run with a writer: otherwise no progress callback, so no
      // per-call cost.
      const writer = record?.['writer'];
      const result = await this.#handler({
        descriptor: this.descriptor,
        args,
        context,
        ...(typeof writer === 'function'
          ? { capabilities: this.#streamCapabilities(writer as StreamWriter, toolCallId) }
          : {}),
      });
      if (toolCallId !== undefined && !(this.#throwErrors && result.isError === true)) {
        const { content, artifact } = toToolMessageParts(result);
        // A returned ToolMessage is passed through by ToolNode as is, so an `isError` result
        // reaches the model as status "error" without a throw, and keeps its artifact.
        output = new ToolMessage({
          status: result.isError === true ? 'error' : 'success',
          content,
          artifact,
          tool_call_id: toolCallId,
          name: this.name,
        });
      } else if (result.isError === true) {
        throw new AgentsError(
          AgentsErrorCode.ToolCallFailed,
          `Tool "${this.name}" (${this.#tool.id}) returned an error: ${resultText(result) || '(no text)'}`,
          { details: { toolId: this.#tool.id, result } },
        );
      } else {
        // A plain invoke returns the content only: no artifact to build.
        output = toToolMessageContent(result);
      }
    } catch (error) {
      await runManager?.handleToolError(error);
      throw error;
    }
    await runManager?.handleToolEnd(output);
    return output;
  }
}

/**
 * Turns a descriptor and its composed handler (entry `execute` wrapped by middleware) into a
 * LangChain `StructuredTool` that LangGraph's `ToolNode` runs unchanged.
 *
 * Called with a tool call (as ToolNode does), it returns a `ToolMessage`: `status: 'error'`
 * when the result has `isError: true` (invalid arguments come back that way, naming the
 * field), with `structuredContent`, `_meta` and resources on `artifact`. Called with plain
 * arguments, it returns the content, and throws `AgentsError` `TOOL_CALL_FAILED` for an error
 * result. Transport failures (`ServerError`) are thrown either way; ToolNode turns them into an
 * error message. Cheap: no validation, serialization or run tree of its own per call.
 * Inside a LangGraph run (the config carries `writer`), each progress notification from the
 * server is written to the custom stream as a {@link ToolProgressEvent}.
 */
export function toStructuredTool(
  descriptor: ToolDescriptor,
  handler: ToolCallHandler,
  options: StructuredToolOptions = {},
): StructuredTool {
  return new McpStructuredTool(descriptor, handler, options);
}

/** What binding reads up front, and the full descriptor built when first read (`McpToolEntry`). */
export interface LazilyDescribedTool {
  readonly id: string;
  readonly name: string;
  readonly description: string;
  readonly serverName: string;
  readonly inputSchema: unknown;
  readonly descriptor: ToolDescriptor;
}

/**
 * {@link toStructuredTool} for a tool whose descriptor is built when first read (on its first
 * call, or when something asks for `descriptor`): discovery of a large server then builds only
 * what binding the tools to a model reads.
 */
export function toLazilyDescribedStructuredTool(
  tool: LazilyDescribedTool,
  handler: ToolCallHandler,
  options: StructuredToolOptions = {},
): StructuredTool {
  return new McpStructuredTool(tool, handler, options);
}
