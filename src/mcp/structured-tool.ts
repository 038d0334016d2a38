import { CallbackManager, parseCallbackConfigArg } from '@langchain/core/callbacks/manager';
import { ToolMessage } from '@langchain/core/messages';
import { StructuredTool } from '@langchain/core/tools';
import type {
  StructuredToolCallInput,
  ToolReturnType,
  ToolSchemaBase,
  ToolRunnableConfig,
} from '@langchain/core/tools';
import { AgentsError, AgentsErrorCode } from '../errors.js';
import type { ToolCallHandler } from '../middleware/types.js';
import type { ToolCallContext, ToolDescriptor } from '../registry/tool-descriptor.js';
import { resultText, toToolMessageParts } from './content.js';

export { toToolMessageParts } from './content.js';
export type { McpToolArtifact, ToolMessageContent, ToolMessageParts } from './content.js';

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

type StreamWriter = (chunk: unknown) => void;

function readConfig(config: unknown): {
  signal?: AbortSignal;
  toolCallId?: string;
  threadId?: string;
  writer?: StreamWriter;
} {
  if (!isRecord(config)) return {};
  const out: {
    signal?: AbortSignal;
    toolCallId?: string;
    threadId?: string;
    writer?: StreamWriter;
  } = {};
  if (config['signal'] instanceof AbortSignal) out.signal = config['signal'];
  // LangGraph (1.x) puts the custom-stream writer on the config it passes to tools (ToolNode's runtime).
  const writer = config['writer'];
  if (typeof writer === 'function') out.writer = writer as StreamWriter;
  const toolCall = config['toolCall'];
  if (isRecord(toolCall) && typeof toolCall['id'] === 'string') out.toolCallId = toolCall['id'];
  const configurable = config['configurable'];
  if (isRecord(configurable) && typeof configurable['thread_id'] === 'string') {
    out.threadId = configurable['thread_id'];
  }
  return out;
}

/**
 * A LangChain tool over one {@link ToolDescriptor} and its composed handler.
 *
 * `call()` is overridden on purpose: the handler's entry already validates arguments with the
 * server's own JSON Schema (ajv, compiled once), so LangChain's second JSON Schema validation
 * and its tool-start serialization are skipped; callbacks still fire when any are configured
 * (or tracing is on). The schema is still exposed for model binding.
 */
class McpStructuredTool extends StructuredTool<ToolSchemaBase> {
  static override lc_name(): string {
    return 'McpStructuredTool';
  }

  name: string;
  description: string;
  schema: ToolSchemaBase;
  readonly descriptor: ToolDescriptor;
  readonly #handler: ToolCallHandler;

  constructor(descriptor: ToolDescriptor, handler: ToolCallHandler) {
    super({
      responseFormat: 'content_and_artifact',
      metadata: {
        toolId: descriptor.id,
        ...(descriptor.serverName === undefined ? {} : { serverName: descriptor.serverName }),
      },
    });
    this.name = descriptor.name;
    this.description = descriptor.description;
    this.schema = descriptor.inputSchema as ToolSchemaBase;
    this.descriptor = descriptor;
    this.#handler = handler;
  }

  override async call<
    TArg extends StructuredToolCallInput<ToolSchemaBase>,
    TConfig extends ToolRunnableConfig | undefined,
  >(
    arg: TArg,
    configArg?: TConfig,
    tags?: string[],
  ): Promise<ToolReturnType<TArg, TConfig, unknown>> {
    return (await this.#run(arg, configArg, tags)) as ToolReturnType<TArg, TConfig, unknown>;
  }

  protected override _call(): Promise<never> {
    // Never reached: call() is overridden and runs the handler itself.
    return Promise.reject(new Error('McpStructuredTool._call is not used'));
  }

  #progressForwarder(
    writer: StreamWriter,
    toolCallId: string | undefined,
  ): NonNullable<ToolCallContext['onProgress']> {
    return (progress) => {
      const event: ToolProgressEvent = {
        type: 'tool-progress',
        toolName: this.name,
        toolId: this.descriptor.id,
        ...(toolCallId === undefined ? {} : { toolCallId }),
        ...(this.descriptor.serverName === undefined
          ? {}
          : { serverName: this.descriptor.serverName }),
        progress: progress.progress,
        ...(progress.total === undefined ? {} : { total: progress.total }),
        ...(progress.message === undefined ? {} : { message: progress.message }),
      };
      try {
        writer(event);
      } catch {
        // A failing stream consumer must not fail the tool call that reported progress.
      }
    };
  }

  async #run(arg: unknown, configArg: unknown, tags: string[] | undefined): Promise<unknown> {
    const direct = isToolCall(arg) ? arg : undefined;
    const args: unknown = direct === undefined ? arg : direct.args;
    const fromConfig = readConfig(configArg);
    const toolCallId = direct?.id ?? fromConfig.toolCallId;

    const config = parseCallbackConfigArg(
      configArg as Parameters<typeof parseCallbackConfigArg>[0],
    );
    const callbackManager = CallbackManager.configure(
      config.callbacks,
      this.callbacks,
      config.tags ?? tags,
      this.tags,
      config.metadata,
      this.metadata,
      { verbose: this.verbose },
    );
    const runManager = await callbackManager?.handleToolStart(
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
          { details: { toolId: this.descriptor.id } },
        );
      }
      const context: ToolCallContext = { config: configArg };
      if (fromConfig.signal !== undefined) context.signal = fromConfig.signal;
      if (toolCallId !== undefined) context.toolCallId = toolCallId;
      if (fromConfig.threadId !== undefined) context.threadId = fromConfig.threadId;
      // Only inside a graph run with a writer: otherwise no progress callback, so no per-call cost.
      if (fromConfig.writer !== undefined) {
        context.onProgress = this.#progressForwarder(fromConfig.writer, toolCallId);
      }
      const result = await this.#handler({ descriptor: this.descriptor, args, context });
      const { content, artifact } = toToolMessageParts(result);
      if (toolCallId !== undefined) {
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
          `Tool "${this.name}" (${this.descriptor.id}) returned an error: ${resultText(result) || '(no text)'}`,
          { details: { toolId: this.descriptor.id, result } },
        );
      } else {
        output = content;
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
): StructuredTool {
  return new McpStructuredTool(descriptor, handler);
}
