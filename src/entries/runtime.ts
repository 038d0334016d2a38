/**
 * The `@agents/langgraph-mcp/runtime` entry: the `AgentsRuntime`, the one assembly of sandbox
 * backend, server confinement, checkpoint store, servers and live tool set (with one disposal
 * order) that actors, Studio graphs, `agents serve` and the CLI build on, and the confinement
 * backends it chooses from (the sandbox and checkpoint tables are on `/sandbox` and `/graph`).
 */
export type {
  AgentsRuntime,
  AgentsRuntimeOptions,
  ConfinementPlace,
} from '../runtime/agents-runtime.js';
export {
  createAgentsRuntime,
  DEFAULT_SANDBOX_BACKEND,
  removeOnClose,
  sandboxBackendNamed,
} from '../runtime/agents-runtime.js';
export type { ActorConfinementOptions } from '../runtime/confinement.js';
export type {
  ConfinementBackend,
  ConfinementGuarantees,
  LaunchRequest,
  NetworkAccess,
} from '../confinement/backend.js';
export { confinementBackends } from '../confinement/backends.js';
