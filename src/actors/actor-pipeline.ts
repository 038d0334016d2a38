import { join, relative, sep } from 'node:path';
import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import type { Actor as ActorConfig } from '../config/actor-schema.js';
import type { ToolMiddleware } from '../core/tool-middleware.js';
import { createToolPipeline } from '../pipeline/tool-pipeline.js';
import type { ToolPipeline } from '../pipeline/tool-pipeline.js';
import type { AuditLog } from '../policy/audit-log.js';
import { settleKnownTools } from '../policy/known-tools.js';
import { createFileSpill } from '../policy/output-budget.js';
import type { Spill } from '../policy/output-budget.js';
import { createPinStore, DEFAULT_PIN_FILE } from '../policy/pins.js';
import { createModelSampler } from '../policy/model-sampling.js';
import type { Policy } from '../config/policy-schema.js';
import type { SkillPlan } from '../skills/skill-plan.js';
import type { SkillRegistry } from '../skills/skill-registry.js';
import type { ToolDescriptor } from '../core/tool-descriptor.js';
import type { RunSandbox } from '../sandbox/backend.js';
import type { SkillActivation } from '../skills/skill-activation.js';
import type { WorkspaceStore } from '../workspace/workspace-types.js';

/** What {@link createActorPipeline} needs. */
export interface ActorPipelineOptions {
  actor: string;
  config: ActorConfig;
  store: WorkspaceStore;
  plan: SkillPlan;
  policy: Policy;
  registry: SkillRegistry;
  activation: SkillActivation;
  auditLog: AuditLog;
  sandbox: RunSandbox | undefined;
  /** The folder the tools work in (the sandbox root, or the project without a sandbox). */
  root: string;
  /** Outermost layers (the in-flight counter, the caller's `middleware` option). */
  outer: readonly ToolMiddleware[];
  /** The actor's chat model, made on first use: writes completions for `sampling: model`. */
  model?: () => Promise<BaseChatModel>;
}

/**
 * The actor's tool pipeline: its audit log, the active skill's `allowed-tools`, its policy
 * (with pins and the tools that are new since activation or since the last run), its output
 * budget, and path rewriting + change tracking in its sandbox. Reads the pins and settles the
 * actor's known-tools list, so it runs once per activation.
 */
export async function createActorPipeline(options: ActorPipelineOptions): Promise<ToolPipeline> {
  const { actor, store, registry, sandbox } = options;
  const pins = await createPinStore(join(store.root, DEFAULT_PIN_FILE));
  // Tools listed later (tools/list_changed) start as `ask` in ask mode, and so do tools that
  // appeared during an earlier run and were never approved (the actor's known-tools list).
  const idsAtActivation = new Set(registry.entries().map((entry) => entry.descriptor.id));
  const newSinceLastRun = await settleKnownTools({
    workspaceRoot: store.root,
    actor,
    ids: idsAtActivation,
    pins,
  });
  const spill = spillFor(options.root, sandbox !== undefined, store);
  return createToolPipeline({
    outer: options.outer,
    audit: { log: options.auditLog, actor },
    allowedTools: options.activation,
    policy: {
      policy: options.policy,
      name: `actor "${actor}"`,
      pins,
      skillOf: skillLookup(options.plan),
      isAddedAtRuntime: (descriptor) =>
        !idsAtActivation.has(descriptor.id) || newSinceLastRun.has(descriptor.id),
      ...(options.model !== undefined && options.policy.clientRequests.sampling === 'model'
        ? { sampler: createModelSampler(options.model) }
        : {}),
    },
    budget: { ...(options.config.budget ?? {}), ...(spill === undefined ? {} : { spill }) },
    ...(sandbox === undefined ? {} : { sandbox }),
  });
}

/**
 * Where the output budget writes full results: a folder in the sandbox (the model's file
 * tools reach it by its logical path), or without a sandbox `<workspace>/output` when the
 * workspace lies inside the project; otherwise nothing is kept (the marker says so).
 */
function spillFor(root: string, sandboxed: boolean, store: WorkspaceStore): Spill | undefined {
  if (sandboxed) return createFileSpill(root);
  const inside = relative(root, store.root);
  if (inside === '' || inside.startsWith('..') || inside.includes(':')) return undefined;
  return createFileSpill(root, { dir: `${inside.split(sep).join('/')}/output` });
}

/**
 * The skill of a descriptor, for `skills.NAME` policy refinements. The policy asks on every
 * call; a descriptor's skill never changes, so the plan is scanned once per descriptor (a
 * refreshed tool brings a new descriptor object).
 */
function skillLookup(plan: SkillPlan): (descriptor: ToolDescriptor) => string | undefined {
  const skills = new WeakMap<ToolDescriptor, string | undefined>();
  return (descriptor) => {
    if (skills.has(descriptor)) return skills.get(descriptor);
    const skill = skillOfDescriptor(plan, descriptor);
    skills.set(descriptor, skill);
    return skill;
  };
}

/** The first skill of the plan that includes a tool. */
function skillOfDescriptor(plan: SkillPlan, descriptor: ToolDescriptor): string | undefined {
  for (const inclusion of plan.inclusions) {
    switch (inclusion.kind) {
      case 'builtin':
        if (descriptor.id === `builtin:${inclusion.name}`) return inclusion.skill;
        break;
      case 'server':
        if (descriptor.source === 'mcp' && descriptor.serverName === inclusion.serverName)
          return inclusion.skill;
        break;
      case 'resource':
        if (
          descriptor.serverName === inclusion.resource.server &&
          descriptor.originalName === inclusion.resource.tool
        ) {
          return inclusion.skill;
        }
        break;
      case 'agent-skills':
        if (descriptor.source === 'agent-skill') return inclusion.skill;
        break;
      case 'custom':
        if (descriptor.source === 'custom') return inclusion.skill;
        break;
    }
  }
  return undefined;
}
