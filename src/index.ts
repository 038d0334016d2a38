/**
 * The public API of `@agents/langgraph-mcp`: what a program that uses MCP tools from LangGraph
 * needs, and nothing it does not. Named exports only; adding a line here is an API decision
 * (semver applies to these names, not to the modules behind them).
 *
 * Public: the records every tool becomes (`ToolDescriptor`, `ToolEntry`, `ChangeRecord`), the
 * config schemas, actors (`createActor`) and the parts to build a graph by hand (MCP tool
 * adapter, managed servers, the tool registry, sandbox, middleware and `createToolPipeline`,
 * policy, checkpoints and rollback, skills).
 *
 * Not here, on purpose:
 * - optional parts, each its own entry so the root loads with the required peers only:
 *   `/serve` (serving tools as an MCP server), `/langchain` (needs the `langchain` peer),
 *   `/studio` (LangGraph Studio graphs), `/testing` (scripted model, descriptor builder);
 * - internals a program has no use for and the library must stay free to change: how tools
 *   are called and listed (`createClientCaller`, `listAllTools`), named (`resolveToolNames`),
 *   sanitized, fingerprinted (`fingerprintTool`), validated and classified
 *   (`inferCapabilities`, `detectPathArguments`); the run lock (`markRunActive`); which folders
 *   a confined server may see (`sandboxRoots`); the CLI's process bookkeeping.
 */

// errors
export type { AgentsErrorOptions, ServerErrorDetails, ServerPhase } from './errors.js';
export { AgentsError, AgentsErrorCode, ServerError, errorMessage } from './errors.js';

// core records
export type {
  Capabilities,
  CapabilitySource,
  CapabilityVerdict,
  ChangeRecord,
  ChangedPath,
  JsonSchemaObject,
  ToolCallContext,
  ToolDescriptor,
  ToolEntry,
  ToolResult,
  ToolSource,
} from './core/tool-descriptor.js';
export { ResultMetaKey } from './core/tool-descriptor.js';

// config
export type {
  Actor,
  HttpServerConfig,
  NamedServerConfig,
  ServerConfig,
  ServerConfigInput,
  Skill,
  StdioServerConfig,
  ToolOverride,
  ToolOverrides,
  ToolResource,
} from './config/schemas.js';
export {
  ActorSchema,
  ServerConfigSchema,
  SkillSchema,
  ToolOverrideSchema,
  ToolResourceSchema,
} from './config/schemas.js';
export type { ConfigProblem, ParseYamlOptions } from './config/load.js';
export { loadYamlFile, parseYaml } from './config/load.js';
export { configJsonSchemas } from './config/json-schema.js';

// mcp: MCP tools -> descriptors -> LangChain StructuredTools
export type {
  MCPToolAdapter,
  McpToolAdapterOptions,
  McpToolCaller,
  McpToolEntriesOptions,
} from './mcp/tool-adapter.js';
export { createMcpToolAdapter, createMcpToolEntries } from './mcp/tool-adapter.js';
export type { StructuredToolOptions } from './mcp/structured-tool.js';
export { toStructuredTool } from './mcp/structured-tool.js';
export type { McpToolArtifact } from './mcp/content.js';

// registry: the one registry of tools an actor, `agents serve` and policy read
export type {
  ToolRegistry,
  ToolRegistryChange,
  ToolRegistryListener,
} from './registry/tool-registry.js';
export { createToolRegistry } from './registry/tool-registry.js';

// servers: lifecycles
export type {
  ManagedServer,
  ManagedServerOptions,
  ManagedServerStatus,
} from './servers/managed-server.js';
export { createManagedServer } from './servers/managed-server.js';
export type { ServerLease, ServerManager, ServerManagerOptions } from './servers/server-manager.js';
export { createServerManager } from './servers/server-manager.js';
export type {
  ServerEndEvent,
  ServerEventMap,
  ServerRestartEvent,
  ServerStartEvent,
  ToolsChangedEvent,
} from './servers/server-events.js';
export type { ServerLogger } from './servers/server-logger.js';
export { silentServerLogger } from './servers/server-logger.js';

// sandbox
export type { PathMap, Sandbox, Snapshot } from './sandbox/types.js';
export type { CreateSandboxOptions } from './sandbox/git/local-sandbox.js';
export type {
  RunSandbox,
  SandboxBackend,
  SnapshotEntry,
  SnapshotStore,
} from './sandbox/backend.js';
export { SANDBOX_BACKENDS, sandboxBackend } from './sandbox/backends.js';
export { createSandbox } from './sandbox/git/local-sandbox.js';
export type { OpenSandboxOptions, OpenedSandbox } from './sandbox/git/open-sandbox.js';
export { openSandbox, removeSandbox } from './sandbox/git/open-sandbox.js';
export type { PruneSandboxesOptions, PruneSandboxesResult } from './sandbox/prune-sandboxes.js';
export { pruneSandboxes } from './sandbox/prune-sandboxes.js';
export type { ListSandboxesOptions, SandboxEntry } from './sandbox/sandbox-inventory.js';
export { listSandboxes } from './sandbox/sandbox-inventory.js';
export { agentsStateDir, projectStateDir, STATE_DIR_ENV } from './sandbox/state-dir.js';
export type { CreatePathMapOptions, SandboxPathMap } from './sandbox/path-map.js';
export { createPathMap } from './sandbox/path-map.js';
export type {
  DiffHunk,
  DiffLine,
  DiffSandboxOptions,
  FileDiff,
  FormatSandboxDiffOptions,
  SandboxDiff,
} from './sandbox/deliver/diff.js';
export { diffSandbox, formatSandboxDiff } from './sandbox/deliver/diff.js';
export type {
  ApplyChange,
  ApplyConflict,
  ApplyResult,
  ApplySandboxOptions,
} from './sandbox/deliver/apply.js';
export { applySandbox, undoSandboxApply } from './sandbox/deliver/apply.js';
export type { UndoApplyOptions, UndoApplyResult } from './sandbox/deliver/apply-journal.js';
export type { CommitSandboxOptions, CommitSandboxResult } from './sandbox/deliver/commit-branch.js';
export { commitSandbox } from './sandbox/deliver/commit-branch.js';
export type { DeliverySandbox } from './sandbox/deliver/store-access.js';
export { isDeliverySandbox } from './sandbox/deliver/store-access.js';
export type {
  SandboxBaseOrigin,
  SandboxFrom,
  SandboxWarning,
} from './sandbox/git/base-snapshot.js';

// middleware: one execution path for every tool call
export type { ToolCallHandler, ToolCallRequest, ToolMiddleware } from './core/tool-middleware.js';
export { composeMiddleware } from './core/tool-middleware.js';
export { createPathRewriteMiddleware } from './middleware/path-rewrite.js';
export type { ChangeTrackingOptions } from './middleware/change-tracking.js';
export { createChangeTrackingMiddleware } from './middleware/change-tracking.js';
export type {
  ActiveSkillState,
  RollbackRecord,
  SandboxState,
  SandboxStateUpdate,
} from './middleware/state.js';
export {
  SandboxStateSchema,
  sandboxDeltaStateFields,
  sandboxStateFields,
  undoStack,
} from './middleware/state.js';
export type {
  ToolCallRouteOptions,
  ToolCallTaskInput,
  TrackedToolNodeOptions,
} from './middleware/tool-node.js';
export { createTrackedToolNode, routeToolCallsPerTask } from './middleware/tool-node.js';
// pipeline: the one middleware order (audit → allowed-tools → policy → budget → paths → changes)
export type { ToolPipeline, ToolPipelineOptions } from './pipeline/tool-pipeline.js';
export { createToolPipeline } from './pipeline/tool-pipeline.js';
export type { CreateToolSetOptions, ToolSet } from './pipeline/tool-set.js';
export { createToolSet } from './pipeline/tool-set.js';
export type { Checkpointer, CheckpointBackend } from './checkpoint/backend.js';
export type { CheckpointerSettings } from './checkpoint/backends.js';
export { checkpointBackends, createCheckpointer } from './checkpoint/backends.js';
export type {
  CheckpointEntry,
  CheckpointedGraph,
  RollbackOptions,
  RollbackResult,
} from './middleware/rollback.js';
export { listCheckpoints, rollback } from './middleware/rollback.js';
export type { UndoRollbackOptions } from './middleware/undo-rollback.js';
export { undoRollback } from './middleware/undo-rollback.js';
// createSandboxAgentMiddleware needs the optional `langchain` peer: `@agents/langgraph-mcp/langchain`.

// policy
export type {
  ClientRequestPolicy,
  Policy,
  PolicyDecision,
  PolicyInput,
  PolicyMode,
  PolicyRule,
} from './config/policy-schema.js';
export { PolicySchema, parsePolicy } from './config/policy-schema.js';
export type { PolicyVerdict } from './policy/decide.js';
export { decide } from './policy/decide.js';
export type { PinStore, ToolPin } from './policy/pins.js';
export { createMemoryPinStore, createPinStore } from './policy/pins.js';
export type { ApprovalPreview, ApprovalResponse } from './policy/approval.js';
export { isApprovalPreview, parseApprovalResponse } from './policy/approval.js';
export type {
  Approver,
  PolicyMiddlewareOptions,
  PolicyRecord,
} from './policy/policy-middleware.js';
export { createInterruptApprover, createPolicyMiddleware } from './policy/policy-middleware.js';
export type { HumanInTheLoopPolicy } from './policy/hitl.js';
export { createHumanInTheLoopPolicy } from './policy/hitl.js';
export type { BudgetRecord, OutputBudgetOptions, Spill } from './policy/output-budget.js';
export { createFileSpill, createOutputBudgetMiddleware } from './policy/output-budget.js';
export type { AuditEntry, AuditLog } from './policy/audit.js';
export {
  auditLogPath,
  createAuditLog,
  createAuditMiddleware,
  readAuditLog,
} from './policy/audit.js';

// serve: `@agents/langgraph-mcp/serve`. A tool call's context may carry the forwarder of the
// MCP client behind `agents serve` (ToolCallContext.clientRequests):
export type { ClientRequestForwarder } from './core/client-requests.js';

// workspace, skills, actors
export type {
  WorkspaceKind,
  WorkspaceListing,
  WorkspaceProblem,
  WorkspaceRecord,
  WorkspaceStore,
  WorkspaceStoreOptions,
} from './workspace/store.js';
export { createWorkspaceStore, defaultWorkspaceDir } from './workspace/store.js';
export type {
  NamedSkill,
  SkillPlan,
  SkillRegistry,
  SkillRegistryOptions,
  SkillServer,
} from './actors/skill-registry.js';
export { createSkillRegistry, planSkills, SKILL_TOOLS_GROUP } from './actors/skill-registry.js';
export type { BuiltinToolName, BuiltinToolsOptions } from './skills/builtin-tools.js';
export { BUILTIN_TOOL_NAMES, createBuiltinTools } from './skills/builtin-tools.js';
export type { CustomToolReference } from './skills/custom-tools.js';
export { loadCustomTools, toCustomToolEntry } from './skills/custom-tools.js';
export type { AgentSkill, AgentSkillSet, AgentSkillWarning } from './skills/agent-skills.js';
export {
  createAgentSkillTool,
  createAllowedToolsMiddleware,
  loadAgentSkills,
} from './skills/agent-skills.js';
export type {
  ActorConfigInput,
  ActorGraph,
  ActorInstance,
  ActorRunEvent,
  ActorRunOptions,
  ActivateOptions,
  CreateActorOptions,
  DeactivateOptions,
} from './actors/actor.js';
export { compileActorStateGraph, createActor } from './actors/actor.js';
export type { PendingApproval } from './actors/approvals.js';
export { pendingApprovalsOf, toResumeValue } from './actors/approvals.js';
export type { OpenThreadSandboxOptions, ThreadSandboxRecord } from './actors/thread-sandbox.js';
export {
  findThreadSandboxes,
  openThreadSandbox,
  removeThreadSandbox,
  threadSandboxDir,
} from './actors/thread-sandbox.js';
export type { RemoveThreadOptions, RemoveThreadResult } from './actors/remove-thread.js';
export { removeThread } from './actors/remove-thread.js';
export type { ActivateSkillsOptions, ActiveSkills } from './actors/activate-skills.js';
export { activateSkills } from './actors/activate-skills.js';
export type { ResolveChatModelOptions } from './actors/model.js';
export { resolveChatModel } from './actors/model.js';
// The scripted model (offline runs, tests): `@agents/langgraph-mcp/testing`.
export type { ToolProgressEvent } from './mcp/structured-tool.js';
export { DEFAULT_SANDBOX_EXCLUDES } from './sandbox/sandbox-excludes.js';
export { DEFAULT_MAX_FILE_BYTES } from './sandbox/large-files.js';
export type { OversizedFile } from './sandbox/large-files.js';
export type { NestedRepo } from './sandbox/nested-repos.js';
