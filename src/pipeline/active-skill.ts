import { readActiveSkill } from '../core/sandbox-state.js';
import type { ActiveSkillState } from '../core/sandbox-state.js';
import type { ToolCallRequest } from '../core/tool-middleware.js';
import type { ToolCallContext } from '../core/tool-descriptor.js';
import { ACTIVATE_SKILL_TOOL_ID } from '../skills/skill-activation.js';
import { isToolAllowed } from '../skills/skill-allowed-tools.js';
import type { ActiveSkillLookup } from '../skills/skill-allowed-tools.js';
import type { SkillActivation } from '../skills/skill-activation.js';

/**
 * The active skill recorded in the graph state of a call: LangGraph's `ToolNode` hands each tool
 * the node's input as `runtime.state` (the whole state, or a task's `Send` payload, which
 * `routeToolCallsPerTask` gives the `activeSkill` field). `null` when the state says no skill is
 * active; `undefined` when the call carries no such state (outside a graph, or a graph without
 * the field).
 */
export function activeSkillInState(context: ToolCallContext): ActiveSkillState | null | undefined {
  const config = context.config;
  if (typeof config !== 'object' || config === null) return undefined;
  const state: unknown = (config as Record<string, unknown>)['state'];
  if (typeof state !== 'object' || state === null || !('activeSkill' in state)) return undefined;
  const value: unknown = (state as Record<string, unknown>)['activeSkill'];
  return value === null || value === undefined ? null : (readActiveSkill(value) ?? null);
}

/**
 * Where the pipeline reads the active skill: the checkpointed graph state when the call has one
 * (so `agents actor resume` in a new process enforces the same `allowed-tools`), otherwise the
 * in-process activation (MCP `tools/call` through `agents serve`, graphs without the field).
 */
export function activeSkillLookup(activation: SkillActivation): ActiveSkillLookup {
  return (request) => {
    const fromState = activeSkillInState(request.context);
    if (fromState === undefined) return activation.get(request.context.threadId);
    if (fromState === null) return undefined;
    return {
      name: fromState.name,
      ...(fromState.allowedTools === null ? {} : { allowedTools: fromState.allowedTools }),
    };
  };
}

/**
 * What the policy is told about `allowed-tools` for one call: the entries of the active skill
 * that match the tool, as policy rules (`mcp:SERVER/TOOL` or `mcp:SERVER/TOOL(args)`), or
 * undefined when no skill restricts tools. Only matching entries: the allowed-tools layer (outside
 * the policy) already refused the rest, so the two never disagree about which tools are listed.
 */
export function policyAllowedToolsOf(
  lookup: ActiveSkillLookup,
  request: ToolCallRequest,
): readonly string[] | undefined {
  if (request.descriptor.id === ACTIVATE_SKILL_TOOL_ID) return undefined;
  const allowed = lookup(request)?.allowedTools;
  if (allowed === undefined) return undefined;
  return allowed
    .filter((entry) => isToolAllowed(request.descriptor, [entry]))
    .map((entry) => {
      const open = entry.indexOf('(');
      return open === -1 ? request.descriptor.id : `${request.descriptor.id}${entry.slice(open)}`;
    });
}
