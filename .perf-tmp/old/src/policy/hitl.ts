import type { ToolDescriptor } from '../registry/tool-descriptor.js';
import { effectiveCapabilities, decide } from './decide.js';
import type { DecideOptions } from './decide.js';
import type { Approver } from './policy-middleware.js';
import { createInterruptApprover } from './policy-middleware.js';
import type { PinLookup } from './pins.js';
import type { Policy } from './schema.js';

/** The tool call HITL's predicates receive (a structural subset of langchain's `ToolCallRequest`). */
export interface HitlToolCallRequest {
  toolCall: { name: string; args: Record<string, unknown> };
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
  /** Approver for calls HITL did not cover (tools added later); default LangGraph `interrupt`. */
  fallback?: Approver;
}

/** What {@link createHumanInTheLoopPolicy} returns. */
export interface HumanInTheLoopPolicy {
  /** Pass as `humanInTheLoopMiddleware({ interruptOn })`. */
  interruptOn: Record<string, HitlInterruptOnEntry>;
  /**
   * Pass as `createPolicyMiddleware({ approve })`: a call HITL already put to the human counts as
   * approved (HITL rejects and edits before the tool runs); any other `ask` uses `fallback`.
   */
  approve: Approver;
}

/**
 * Maps the policy onto langchain's `humanInTheLoopMiddleware` for agents built with `createAgent`,
 * with one core underneath: each entry's `when` is `decide(...) === 'ask'`, evaluated per call, so
 * pins and run-time tools behave as in hand-built graphs. `deny` is not a HITL concept: keep
 * {@link createPolicyMiddleware} in the tools' chain (with this `approve`) to enforce it.
 */
export function createHumanInTheLoopPolicy(
  options: HumanInTheLoopPolicyOptions,
): HumanInTheLoopPolicy {
  const byName = new Map(options.tools.map((descriptor) => [descriptor.name, descriptor]));
  const decideOptions = (descriptor: ToolDescriptor): DecideOptions => {
    const skill = options.skillOf?.(descriptor);
    return {
      ...(options.pins === undefined ? {} : { pins: options.pins }),
      ...(skill === undefined ? {} : { skill }),
      addedAtRuntime: options.isAddedAtRuntime?.(descriptor) ?? false,
    };
  };
  const interruptOn: Record<string, HitlInterruptOnEntry> = {};
  for (const descriptor of options.tools) {
    interruptOn[descriptor.name] = {
      allowedDecisions: ['approve', 'edit', 'reject'],
      when: () => decide(descriptor, options.policy, decideOptions(descriptor)).decision === 'ask',
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
  const fallback = options.fallback ?? createInterruptApprover();
  return {
    interruptOn,
    approve: (preview, request) => {
      // Same descriptor, same decide(): HITL asked exactly when the policy says ask.
      if (byName.get(preview.toolName)?.fingerprint === request.descriptor.fingerprint)
        return { type: 'approve', by: 'hitl' };
      return fallback(preview, request);
    },
  };
}
