/**
 * The `@agents/langgraph-mcp/adapter` entry: MCP tools of one connected SDK `Client` as
 * LangChain tools, and nothing else. It loads no LangGraph, checkpointer, sandbox, OAuth or
 * SQLite code; LangChain core loads on the first `tools()` call and ajv on the first tool
 * listed (issue 29: a program that only wants the adapter pays only for the adapter).
 */
export type { AgentsErrorOptions, ServerErrorDetails, ServerPhase } from './errors.js';
export { AgentsError, AgentsErrorCode, ServerError, errorMessage } from './errors.js';
export type {
  JsonSchemaObject,
  ToolCallCapabilities,
  ToolCallContext,
  ToolDescriptor,
  ToolEntry,
  ToolResult,
} from './core/tool-descriptor.js';
export type {
  McpToolAdapter,
  McpToolAdapterOptions,
  PathArgumentDetector,
} from './mcp/tool-adapter.js';
export type { McpToolCaller } from './mcp/tool-call.js';
export { createMcpToolAdapter } from './mcp/tool-adapter.js';
export { withTaskHandles } from './mcp/task-handles.js';
export type { McpToolArtifact } from './mcp/content.js';
