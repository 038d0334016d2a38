/**
 * The root of `@agents/langgraph-mcp`: what a newcomer needs, readable in one screen. Adapt an
 * MCP server's tools to LangChain (`createMcpToolAdapter`), keep them in a registry
 * (`createToolRegistry`), run an actor that owns its servers, sandbox and checkpoints
 * (`createActor`), load YAML config, and the typed errors. Adding a line here is an API decision
 * (semver applies to these names); `api/*.md` lists every entry's names and a test keeps it so.
 *
 * Importing the root loads no LangGraph, LangChain core or SQLite (issue 29): `createActor`
 * loads them when called.
 *
 * The rest is on named entries (package.json "exports"):
 * - `/adapter`: the adapter alone, the lightest entry;
 * - `/graph`: build a graph by hand: the live governed tool set (`createToolSet`), the tool
 *   pipeline and middleware, state fields, the tracked ToolNode, checkpointers and rollback;
 * - `/actors`: around `createActor`: workspace store, skills, approvals, thread sandboxes;
 * - `/sandbox`: the git sandbox and delivery (diff, apply, commit);
 * - `/servers`: managed server lifecycles; `/policy`: policy, pins, approvals, budget, audit;
 * - `/config`: the config schemas; `/serve`, `/studio`, `/testing`, `/langchain` as before.
 */
import type { ActorInstance, CreateActorOptions } from './actors/actor-types.js';

// errors
export type { AgentsErrorOptions, ServerErrorDetails, ServerPhase } from './errors.js';
export { AgentsError, AgentsErrorCode, ServerError, errorMessage } from './errors.js';

// the records every tool becomes, and what a tool call changed
export type { ChangeRecord } from './core/change-record.js';
export type {
  JsonSchemaObject,
  ToolCallCapabilities,
  ToolCallContext,
  ToolDescriptor,
  ToolEntry,
  ToolResult,
} from './core/tool-descriptor.js';

// config: YAML files of servers, skills and actors
export type { Actor } from './config/actor-schema.js';
export type {
  HttpServerConfig,
  NamedServerConfig,
  ServerConfig,
  ServerConfigInput,
  StdioServerConfig,
} from './config/server-schema.js';
export type { Skill } from './config/skill-schema.js';
export type { ConfigProblem, ParseYamlOptions } from './config/load.js';
export { loadYamlFile, parseYaml } from './config/load.js';

// MCP tools → LangChain tools
export type { McpToolAdapter, McpToolAdapterOptions } from './mcp/tool-adapter.js';
export type { McpToolCaller } from './mcp/tool-call.js';
export { createMcpToolAdapter } from './mcp/tool-adapter.js';
export { withTaskHandles } from './mcp/task-handles.js';
export type { McpToolArtifact } from './mcp/content.js';

// the one registry of tools an actor, `agents serve` and policy read
export type {
  ToolRegistry,
  ToolRegistryChange,
  ToolRegistryListener,
} from './registry/tool-registry.js';
export { createToolRegistry } from './registry/tool-registry.js';

// actors
export type {
  ActorConfigInput,
  ActorInstance,
  ActorRunEvent,
  ActorRunOptions,
  ActivateOptions,
  CreateActorOptions,
  DeactivateOptions,
} from './actors/actor-types.js';
export type { ActorGraph } from './actors/actor-graph.js';

/**
 * Creates an actor: an agent graph that owns its MCP servers, sandbox and checkpointer (see
 * `actors/actor.ts`). LangGraph and the actor code load on the first call, not on import.
 */
export async function createActor(options: CreateActorOptions): Promise<ActorInstance> {
  const actor = await import('./actors/actor.js');
  return actor.createActor(options);
}
