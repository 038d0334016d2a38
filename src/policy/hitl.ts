import { getConfig } from '@langchain/langgraph';
import type { ToolDescriptor } from '../core/tool-descriptor.js';
import { effectiveCapabilities, decide } from './decide.js';
import type { DecideOptions } from './decide.js';
import type { Approver } from './policy-middleware.js';
import { boundApprover } from './approval-scope.js';
import { createInterruptApprover } from './policy-middleware.js';
import type { PinLookup } from './pins.js';
import type { Policy } from '../config/policy-schema.js';

/** The tool call HITL's predicates receive (a structural subset of langchain's `ToolCallRequest`). */
export interface HitlToolCallRequest {
  toolCall: { name: string; args: Record<string, unknown>; id?: string };
}

/**
 * One `interruptOn` entry for langchain's `humanInTheLoopMiddleware` (structurally its
 * `InterruptOnConfig`; defined here so this module does not depend on `langchain`).
 */
export interface HitlInterruptOnEntry {
  allowedDecisions: Array<'approve' | 'edit' | 'reject'>;
  description: (toolCall: { name: string; args: Record<string, unknown> }) => string;
  when: (request: HitlToolCallRequest) => boolean;
}

/** Options of {@link createHumanInTheLoopPolicy}. */
export interface HumanInTheLoopPolicyOptions {
  policy: Policy;
  /** The tools bound to the agent (by model-facing name). */
  tools: readonly ToolDescriptor[];
  pins?: PinLookup;
  skillOf?: (descriptor: ToolDescriptor) => string | undefined;
  isAddedAtRuntime?: (descriptor: ToolDescriptor) => boolean;
  /**
   * Approver for every `ask` call HITL did not put to a human (tools added later, a call that
   * `allowed-tools` of an active skill or a pin known only to the policy middleware makes `ask`);
   * default LangGraph `interrupt`.
   */
  fallback?: Approver;
}

/** What {@link createHumanInTheLoopPolicy} returns. */
export interface HumanInTheLoopPolicy {
  /** Pass as `humanInTheLoopMiddleware({ interruptOn })`. */
  interruptOn: Record<string, HitlInterruptOnEntry>;
  /**
   * Pass as `createPolicyMiddleware({ approve })`: a call HITL interrupted on (same thread, tool
   * call id and tool name) counts as approved, since HITL rejects and edits before the tool runs;
   * any other `ask` goes to `fallback`, so a call is never approved that no human saw.
   */
  approve: Approver;
}

/**
 * Maps the policy onto langchain's `humanInTheLoopMiddleware` for agents built with `createAgent`,
 * with one core underneath: each entry's `when` is `decide(...) === 'ask'`, evaluated per call, so
 * pins and run-time tools behave as in hand-built graphs. `deny` is not a HITL concept: keep
 * {@link createPolicyMiddleware} in the tools' chain (with this `approve`) to enforce it.
 *
 * The middleware stays the authority: it decides again at call time (with its own pins and the
 * active skill's `allowed-tools`), and its `ask` counts as answered only for a call HITL actually
 * interrupted on; any other `ask` goes to `fallback`. Give both the same `pins` and `skillOf` so
 * HITL asks about all of them and the fallback stays rare.
 */
export function createHumanInTheLoopPolicy(
  options: HumanInTheLoopPolicyOptions,
): HumanInTheLoopPolicy {
  const decideOptions = (descriptor: ToolDescriptor): DecideOptions => {
    const skill = options.skillOf?.(descriptor);
    return {
      ...(options.pins === undefined ? {} : { pins: options.pins }),
      ...(skill === undefined ? {} : { skill }),
      addedAtRuntime: options.isAddedAtRuntime?.(descriptor) ?? false,
    };
  };
  // The calls HITL interrupted on, by thread and tool-call id, with the tool name it showed.
  // Only these count as seen by a human: HITL's `when` cannot see an active skill's
  // `allowed-tools`, and its pins may differ from the middleware's, so "the policy says ask for
  // this tool" is not proof that HITL asked. `when` re-runs on every model turn (and again when
  // a paused run resumes, in this or a later process), so the record is refreshed per call.
  const interrupted = new Map<string, string>();
  const remember = (key: string | undefined, toolName: string, asked: boolean): void => {
    if (key === undefined) return;
    interrupted.delete(key);
    if (!asked) return;
    interrupted.set(key, toolName);
    // Bounded: entries of finished calls are never looked up again.
    if (interrupted.size > MAX_REMEMBERED_CALLS)
      interrupted.delete(interrupted.keys().next().value as string);
  };
  const interruptOn: Record<string, HitlInterruptOnEntry> = {};
  for (const descriptor of options.tools) {
    interruptOn[descriptor.name] = {
      allowedDecisions: ['approve', 'edit', 'reject'],
      when: (request) => {
        const asked =
          decide(descriptor, options.policy, decideOptions(descriptor)).decision === 'ask';
        remember(callKey(currentThreadId(), request.toolCall.id), descriptor.name, asked);
        return asked;
      },
      description: (toolCall) => {
        const verdict = decide(descriptor, options.policy, decideOptions(descriptor));
        const caps = effectiveCapabilities(descriptor.capabilities);
        const flags = (['readOnly', 'writes', 'destructive', 'openWorld'] as const)
          .map(
            (key) =>
              `${key}=${String(caps[key])} (${descriptor.capabilities?.[key]?.source ?? 'default'})`,
          )
          .join(', ');
        return (
          `Approve ${descriptor.id}${descriptor.serverName === undefined ? '' : ` on server "${descriptor.serverName}"`}?\n` +
          `Why: ${verdict.reason} (${verdict.rule.label}).\nCapabilities: ${flags}.\n` +
          `Arguments: ${JSON.stringify(toolCall.args)}`
        );
      },
    };
  }
  const interruptApprover = createInterruptApprover();
  // Like the policy middleware's default: an approver bound to the call (an MCP server asking
  // its client) when there is one, else LangGraph's interrupt().
  const fallback: Approver =
    options.fallback ??
    ((preview, request) => (boundApprover() ?? interruptApprover)(preview, request));
  return {
    interruptOn,
    approve: (preview, request) => {
      const key = callKey(request.context.threadId, request.context.toolCallId);
      // A human edit may rename the tool; that call was not what HITL showed, so ask again.
      if (key !== undefined && interrupted.get(key) === preview.toolName)
        return { type: 'approve', by: 'hitl' };
      return fallback(preview, request);
    },
  };
}

const MAX_REMEMBERED_CALLS = 10_000;

function callKey(threadId: string | undefined, toolCallId: string | undefined): string | undefined {
  return toolCallId === undefined || toolCallId === ''
    ? undefined
    : `${threadId ?? ''}\u0000${toolCallId}`;
}

/** The LangGraph thread of the running node, if any (HITL's predicates run inside one). */
function currentThreadId(): string | undefined {
  let config: unknown;
  try {
    config = getConfig();
  } catch {
    return undefined;
  }
  if (typeof config !== 'object' || config === null || !('configurable' in config))
    return undefined;
  const configurable = config.configurable;
  if (typeof configurable !== 'object' || configurable === null || !('thread_id' in configurable))
    return undefined;
  return typeof configurable.thread_id === 'string' ? configurable.thread_id : undefined;
}
