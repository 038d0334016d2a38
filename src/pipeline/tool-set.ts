import type { StructuredTool } from '@langchain/core/tools';
import type { ToolCallHandler } from '../core/tool-middleware.js';
import { toolErrorResult, type ToolResult } from '../core/tool-descriptor.js';
import { toStructuredTool } from '../mcp/structured-tool.js';
import type { ToolRegistry } from '../registry/tool-registry.js';
import type { ToolPipeline } from './tool-pipeline.js';
import { createInterruptInputHandler } from '../policy/input-requests.js';

/** What {@link createToolSet} needs. */
export interface CreateToolSetOptions {
  /** The tools to offer; the set follows its `change` events (a server's `list_changed`). */
  registry: Pick<ToolRegistry, 'entries' | 'get' | 'on'>;
  /** Every call goes through it: policy, audit, path rewriting, change tracking, budget. */
  pipeline: Pick<ToolPipeline, 'compose'>;
}

/** A live, governed tool list for a LangGraph graph (see {@link createToolSet}). */
export interface ToolSet extends Disposable {
  /**
   * The current tools, ready for `new ToolNode(tools)` and `model.bindTools(tools)`. One array
   * for the set's life, its contents replaced when the registry changes: a `ToolNode` built on
   * it finds a tool by name on each call (pinned by test/pipeline/tool-set.test.ts), so it
   * runs the tools a server adds without a rebuilt graph. Do not mutate it.
   */
  readonly tools: StructuredTool[];
  /** Counts the registry changes seen; rebind a model when it moves. */
  readonly version: number;
  /** Called after each refresh of {@link tools}; returns the unsubscribe function. */
  onChange(listener: (tools: readonly StructuredTool[]) => void): () => void;
  /** Stops following the registry. Idempotent. */
  close(): void;
}

/**
 * The tools of `registry` as LangChain `StructuredTool`s whose calls run through `pipeline`,
 * kept in step with the registry: what an actor uses, and what a hand-built `StateGraph` needs
 * for the same safety in one call.
 *
 * The pipeline is composed once, around a dispatch that finds the CURRENT entry by id: a call
 * to a tool the registry dropped meanwhile gets an error result the model can read (not a
 * stale server call), and a refresh needs no recomposition.
 */
export function createToolSet(options: CreateToolSetOptions): ToolSet {
  const { registry } = options;
  const governed: ToolCallHandler = options.pipeline.compose((request): Promise<ToolResult> => {
    const entry = registry.get(request.descriptor.id);
    if (!entry) {
      return Promise.resolve(
        toolErrorResult(
          `Tool "${request.descriptor.name}" is no longer available; use another tool.`,
        ),
      );
    }
    return entry.execute(request.args, request.context, request.capabilities);
  });
  // A 2026 server's questions (input_required) become LangGraph interrupts, shown with the
  // arguments as the model wrote them; the policy inside may swap in a refusal.
  const handler: ToolCallHandler = (request) =>
    governed(
      request.capabilities?.inputRequests !== undefined ||
        request.capabilities?.clientRequests !== undefined
        ? request
        : {
            ...request,
            capabilities: {
              ...request.capabilities,
              inputRequests: createInterruptInputHandler(
                request.descriptor,
                request.args,
                request.context.toolCallId,
              ),
            },
          },
    );
  const tools: StructuredTool[] = registry
    .entries()
    .map((entry) => toStructuredTool(entry.descriptor, handler));
  const listeners = new Set<(tools: readonly StructuredTool[]) => void>();
  let version = 0;
  const unsubscribe = registry.on('change', (change) => {
    tools.splice(
      0,
      tools.length,
      ...change.entries.map((entry) => toStructuredTool(entry.descriptor, handler)),
    );
    version++;
    for (const listener of listeners) {
      try {
        listener(tools);
      } catch {
        // As the registry's own listeners: one failing subscriber must not stop the others.
      }
    }
  });
  let closed = false;
  const close = (): void => {
    if (closed) return;
    closed = true;
    unsubscribe();
    listeners.clear();
  };
  return {
    tools,
    get version() {
      return version;
    },
    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    close,
    [Symbol.dispose]: close,
  };
}
