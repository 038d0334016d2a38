/**
 * The `@agents/langgraph-mcp/servers` entry: managed MCP server lifecycles (spawn, restart,
 * close), the server manager and its events.
 */
export type { ManagedServer } from '../servers/managed-server.js';
export type { ManagedServerOptions, ManagedServerStatus } from '../servers/server-core.js';
export { createManagedServer } from '../servers/managed-server.js';
export type {
  ServerLease,
  ServerManager,
  ServerManagerOptions,
} from '../servers/server-manager.js';
export { createServerManager } from '../servers/server-manager.js';
export type {
  ServerEndEvent,
  ServerEventMap,
  ServerRestartEvent,
  ServerStartEvent,
  ToolsChangedEvent,
} from '../servers/server-events.js';
export type { ServerLogger } from '../servers/server-logger.js';
export { silentServerLogger } from '../servers/server-logger.js';
