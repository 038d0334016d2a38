/**
 * The `@agents/langgraph-mcp/serve` entry: serving tools as an MCP server (what `agents serve`
 * does), for a program that wants to serve an actor's or its own tools itself. Kept out of the
 * package root because most users only consume MCP servers; the tools, middleware and policy
 * served are the root's.
 */
export type { CreateMcpServerOptions } from './mcp-server.js';
export { createMcpServer } from './mcp-server.js';
export { DEFAULT_SERVE_INSTRUCTIONS } from './served-tool.js';
export type {
  ServedToolRegistry,
  ServedToolSet,
  ServedToolSetOptions,
  ServedToolSource,
} from './served-tool-set.js';
export { createServedToolSet } from './served-tool-set.js';
export type { McpHttpServer, ServeHttpOptions } from './http-options.js';
export { serveHttp } from './http.js';
export type { ServeEntriesOptions } from './serve-entries.js';
export { serveEntries } from './serve-entries.js';
// A served call's upstream server may ask the MCP client for sampling or elicitation: these
// forward such requests to the client behind `agents serve`.
export type {
  ClientRequestGate,
  ClientRequestInfo,
  ClientRequestObserver,
  ClientRequestOutcome,
  ClientRequestSink,
  UpstreamClientRequest,
  UpstreamClientResult,
} from '../core/client-requests.js';
export { createClientRequestForwarder, JsonRpcError } from '../core/client-requests.js';
