import type {
  ToolCallCapabilities,
  ToolCallContext,
  ToolDescriptor,
  ToolResult,
} from './tool-descriptor.js';

/** One tool call on its way through the middleware chain. */
export interface ToolCallRequest {
  descriptor: ToolDescriptor;
  args: Record<string, unknown>;
  readonly context: ToolCallContext;
  capabilities?: ToolCallCapabilities;
}

/** The innermost handler (or the rest of the chain). */
export type ToolCallHandler = (request: ToolCallRequest) => Promise<ToolResult>;

/**
 * A tool-call middleware: may change the request, short-circuit, or post-process the result.
 * Middleware is composed once, at activation; the chain is the hot path, keep it cheap for
 * read-only calls.
 */
export interface ToolMiddleware {
  name: string;
  wrap(request: ToolCallRequest, next: ToolCallHandler): Promise<ToolResult>;
}

/** Composes middleware (outermost first) around a handler. Done once, not per call. */
export function composeMiddleware(
  middleware: readonly ToolMiddleware[],
  handler: ToolCallHandler,
): ToolCallHandler {
  let next = handler;
  for (let index = middleware.length - 1; index >= 0; index--) {
    const layer = middleware[index]!;
    const inner = next;
    next = (request) => layer.wrap(request, inner);
  }
  return next;
}
