import { createChangeTrackingMiddleware } from './change-tracking.js';
import type { ChangeTrackingOptions } from './change-tracking.js';
import { createPathRewriteMiddleware } from './path-rewrite.js';
import { composeMiddleware } from '../core/tool-middleware.js';
import type { ToolCallHandler, ToolMiddleware } from '../core/tool-middleware.js';
import { createAuditMiddleware } from '../policy/audit.js';
import type { AuditMiddlewareOptions } from '../policy/audit.js';
import { createOutputBudgetMiddleware } from '../policy/output-budget.js';
import type { OutputBudgetOptions } from '../policy/output-budget.js';
import { createPolicyMiddleware } from '../policy/policy-middleware.js';
import type { PolicyMiddlewareOptions } from '../policy/policy-middleware.js';
import type { ToolEntry } from '../core/tool-descriptor.js';
import type { SandboxPathMap } from '../sandbox/path-map.js';
import type { Sandbox } from '../sandbox/types.js';
import { createAllowedToolsMiddleware } from '../skills/skill-allowed-tools.js';
import type { SkillActivation } from '../skills/skill-activation.js';
import { activeSkillLookup, policyAllowedToolsOf } from './active-skill.js';

/*
 * The tool-call pipeline: the one place that decides the order of the middleware around a
 * tool call. Actors, Studio graphs, `agents serve` (through the actor) and hand-built graphs
 * all get their chain from here.
 *
 *   ToolNode / MCP tools/call
 *        │
 *        ▼
 *   outer            caller's own layers (the actor's in-flight counter, `middleware` option)
 *   audit            records every call, refusals by the layers below included
 *   allowed-tools    the active Agent Skill's `allowed-tools` (read from graph state)
 *   policy           allow / ask / deny, pins; gets the allowed-tools entries that matched
 *   output budget    cuts what the model sees, after paths were mapped back
 *   path rewrite     logical ⇄ sandbox paths; refuses escapes before any call is sent
 *   change tracking  serializes write-class calls and snapshots the sandbox after each
 *        │
 *        ▼
 *   dispatch         entry.execute() → tools/call
 *
 * Why this order: audit sits outside everything it records; the policy sits outside path
 * rewriting so approval previews show the model's (logical) paths; the budget sees results
 * with logical paths; change tracking is innermost so a snapshot brackets only the call.
 */

/** Options of {@link createToolPipeline}; every layer is optional. */
export interface ToolPipelineOptions {
  /** Layers placed outermost, in order (e.g. an in-flight counter, the caller's own). */
  outer?: readonly ToolMiddleware[];
  /** Audit log layer. */
  audit?: AuditMiddlewareOptions;
  /**
   * Enforce the active Agent Skill's `allowed-tools`. The skill is read from the graph state of
   * the call (`activeSkill`, checkpointed, so a resumed thread keeps it); outside a graph (an MCP
   * `tools/call`) from this in-process activation.
   */
  allowedTools?: SkillActivation;
  /**
   * The safety policy. With `allowedTools`, the policy is also told which of the active skill's
   * entries matched the call (so `Name(args)` entries refine to `ask`); the two never disagree.
   */
  policy?: Omit<PolicyMiddlewareOptions, 'activeSkillAllowedTools'>;
  /** Output budget of what the model sees of a result. */
  budget?: OutputBudgetOptions;
  /** The run's sandbox: adds path rewriting (its `paths`) and change tracking. */
  sandbox?: Sandbox & { readonly paths: SandboxPathMap };
  /** Path rewriting without a sandbox (a map you made); ignored when `sandbox` is given. */
  paths?: SandboxPathMap;
  /** Change tracking settings, or `false` to leave it out (default on with a `sandbox`). */
  changeTracking?: ChangeTrackingOptions | false;
}

/** A composed tool-call pipeline. */
export interface ToolPipeline {
  /** The layers, outermost first (what `agents serve` and `createMcpServer` take). */
  readonly middleware: readonly ToolMiddleware[];
  /** The chain around a dispatch function (composed once; call it per tool call). */
  compose(dispatch: ToolCallHandler): ToolCallHandler;
  /** The chain around one entry's `execute()`. */
  wrap(entry: ToolEntry): ToolCallHandler;
}

/**
 * Builds the tool-call middleware in the library's one order (see the diagram above this
 * function's module). Compose once at activation, not per call.
 */
export function createToolPipeline(options: ToolPipelineOptions = {}): ToolPipeline {
  const middleware: ToolMiddleware[] = [...(options.outer ?? [])];
  if (options.audit) middleware.push(createAuditMiddleware(options.audit));
  const lookup = options.allowedTools ? activeSkillLookup(options.allowedTools) : undefined;
  if (lookup) middleware.push(createAllowedToolsMiddleware(lookup));
  if (options.policy) {
    middleware.push(
      createPolicyMiddleware({
        ...options.policy,
        ...(lookup === undefined
          ? {}
          : { activeSkillAllowedTools: (request) => policyAllowedToolsOf(lookup, request) }),
      }),
    );
  }
  if (options.budget) middleware.push(createOutputBudgetMiddleware(options.budget));
  const paths = options.sandbox?.paths ?? options.paths;
  if (paths) middleware.push(createPathRewriteMiddleware(paths));
  if (options.sandbox && options.changeTracking !== false) {
    middleware.push(createChangeTrackingMiddleware(options.sandbox, options.changeTracking ?? {}));
  }
  const compose = (dispatch: ToolCallHandler): ToolCallHandler =>
    composeMiddleware(middleware, dispatch);
  return {
    middleware,
    compose,
    wrap: (entry) =>
      compose((request) => entry.execute(request.args, request.context, request.capabilities)),
  };
}
