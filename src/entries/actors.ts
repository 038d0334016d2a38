/**
 * The `@agents/langgraph-mcp/actors` entry: everything around `createActor` (on the root): the
 * workspace store, skills and built-in tools, approvals, thread sandboxes and removal, the
 * chat model resolver, and the compiled actor graph. It loads LangGraph.
 */
export type {
  WorkspaceKind,
  WorkspaceListing,
  WorkspaceProblem,
  WorkspaceRecord,
  WorkspaceStore,
  WorkspaceStoreOptions,
} from '../workspace/workspace-types.js';
export { createWorkspaceStore } from '../workspace/store.js';
export { defaultWorkspaceDir } from '../workspace/locate-workspace.js';
export type { NamedSkill, SkillPlan } from '../skills/skill-plan.js';
export { planSkills } from '../skills/skill-plan.js';
export type { SkillRegistry, SkillRegistryOptions, SkillServer } from '../skills/skill-registry.js';
export { createSkillRegistry, SKILL_TOOLS_GROUP } from '../skills/skill-registry.js';
export type { BuiltinToolName, BuiltinToolsOptions } from '../skills/builtin-tools.js';
export { BUILTIN_TOOL_NAMES, createBuiltinTools } from '../skills/builtin-tools.js';
export type { CustomToolReference } from '../skills/custom-tools.js';
export { loadCustomTools, toCustomToolEntry } from '../skills/custom-tools.js';
export type { AgentSkill, AgentSkillSet, AgentSkillWarning } from '../skills/agent-skills.js';
export { createAgentSkillTool } from '../skills/skill-activation.js';
export { createAllowedToolsMiddleware } from '../skills/skill-allowed-tools.js';
export { loadAgentSkills } from '../skills/agent-skills.js';
export type {
  ActorConfigInput,
  ActorInstance,
  ActorRunEvent,
  ActorRunOptions,
  ActivateOptions,
  CreateActorOptions,
  DeactivateOptions,
} from '../actors/actor-types.js';
export type { ActorGraph } from '../actors/actor-graph.js';
export { compileActorStateGraph } from '../actors/actor-graph.js';
export { createActor } from '../actors/actor.js';
export type { PendingApproval, PendingInput } from '../actors/approvals.js';
export { pendingApprovalsOf, pendingInputsOf, toResumeValue } from '../actors/approvals.js';
export type { OpenThreadDeliveryOptions, ThreadDeliveryHandle } from '../actors/thread-delivery.js';
export { deliveryThreadOf, openThreadDelivery } from '../actors/thread-delivery.js';
export type { OpenThreadSandboxOptions, ThreadSandboxRecord } from '../actors/thread-sandbox.js';
/** What `ThreadSandboxRecord.config` holds: the actor config facts a run recorded (issue 29). */
export type {
  ActorConfigFacts,
  ActorFileFingerprint,
  ThreadConfigFacts,
} from '../actors/thread-config.js';
export {
  findThreadSandboxes,
  openThreadSandbox,
  removeThreadSandbox,
  threadSandboxDir,
} from '../actors/thread-sandbox.js';
export type { RemoveThreadOptions, RemoveThreadResult } from '../actors/remove-thread.js';
export { removeThread } from '../actors/remove-thread.js';
export type { ActivateSkillsOptions, ActiveSkills } from '../actors/activate-skills.js';
export { activateSkills } from '../actors/activate-skills.js';
export type { ResolveChatModelOptions } from '../actors/model.js';
export { resolveChatModel } from '../actors/model.js';
