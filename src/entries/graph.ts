/**
 * The `@agents/langgraph-mcp/graph` entry: the parts to build a LangGraph graph by hand: the
 * live governed tool set and the pipeline behind it, the tool middleware, the graph state
 * fields, the tracked ToolNode, checkpointers, checkpoints and rollback. It loads LangGraph.
 */
export type { ToolCallHandler, ToolCallRequest, ToolMiddleware } from '../core/tool-middleware.js';
export { composeMiddleware } from '../core/tool-middleware.js';
export { createPathRewriteMiddleware } from '../pipeline/path-rewrite.js';
export type { ChangeTrackingOptions } from '../pipeline/change-tracking.js';
export { createChangeTrackingMiddleware } from '../pipeline/change-tracking.js';
export type { ActiveSkillState, RollbackRecord, SandboxState } from '../core/sandbox-state.js';
export type { SandboxStateUpdate } from '../thread/state.js';
export {
  SandboxStateSchema,
  sandboxDeltaStateFields,
  sandboxStateFields,
} from '../thread/state.js';
export { undoStack } from '../core/sandbox-state.js';
export type {
  ToolCallRouteOptions,
  ToolCallTaskInput,
  TrackedToolNodeOptions,
} from '../pipeline/tool-node.js';
export { createTrackedToolNode, routeToolCallsPerTask } from '../pipeline/tool-node.js';
// pipeline: the one middleware order (audit → allowed-tools → policy → budget → paths → changes)
export type { ToolPipeline, ToolPipelineOptions } from '../pipeline/tool-pipeline.js';
export { createToolPipeline } from '../pipeline/tool-pipeline.js';
export type { CreateToolSetOptions, ToolSet } from '../pipeline/tool-set.js';
export { createToolSet } from '../pipeline/tool-set.js';
export type { Checkpointer, CheckpointBackend } from '../checkpoint/backend.js';
export type { CheckpointerSettings } from '../checkpoint/backends.js';
export { checkpointBackends, createCheckpointer } from '../checkpoint/backends.js';
export type { CheckpointEntry } from '../thread/checkpoint-list.js';
export type { CheckpointedGraph } from '../thread/checkpointed-graph.js';
export type { RollbackOptions } from '../thread/rollback.js';
export type { RollbackResult } from '../thread/restore-and-fork.js';
export { listCheckpoints } from '../thread/checkpoint-list.js';
export { rollback } from '../thread/rollback.js';
export type { UndoRollbackOptions } from '../thread/undo-rollback.js';
export { undoRollback } from '../thread/undo-rollback.js';
// createSandboxAgentMiddleware needs the optional `langchain` peer: `@agents/langgraph-mcp/langchain`.

// serve: `@agents/langgraph-mcp/serve`. A tool call's capabilities may carry the forwarder of the
// MCP client behind `agents serve` (ToolCallCapabilities.clientRequests):
export type { ClientRequestForwarder } from '../core/client-requests.js';

// MCP tools as entries and LangChain tools (the adapter itself is on the root and /adapter)
export type { McpToolEntriesOptions } from '../mcp/tool-adapter.js';
export { createMcpToolEntries } from '../mcp/tool-adapter.js';
export type {
  StructuredToolOptions,
  ToolProgressEvent,
  ToolRetryEvent,
} from '../mcp/structured-tool.js';
export { toStructuredTool } from '../mcp/structured-tool.js';
export type {
  Capabilities,
  CapabilitySource,
  CapabilityVerdict,
  ToolSource,
} from '../core/tool-descriptor.js';
export type { ChangedPath } from '../core/change-record.js';
export { ResultMetaKey } from '../core/tool-descriptor.js';
