// The `@agents/langgraph-mcp/langchain` entry: what needs langchain's `createAgent` (the
// optional `langchain` peer). Kept out of the package root so the root loads with the required
// peers only.
export type { SandboxAgentMiddlewareOptions } from './pipeline/agent-middleware.js';
export { createSandboxAgentMiddleware } from './pipeline/agent-middleware.js';
