/**
 * Helpers for graph modules served by the LangGraph dev server / Studio (published as
 * `@agents/langgraph-mcp/studio`): sandboxes and MCP servers that do not outlive the server.
 */
export type { StudioGraphContext } from './create-studio-graph.js';
export { createStudioGraph } from './create-studio-graph.js';
export type { StudioJanitor } from './janitor.js';
export { startStudioJanitor } from './janitor.js';
