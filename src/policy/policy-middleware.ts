import { interrupt, isGraphInterrupt } from '@langchain/langgraph';
import { AgentsError, AgentsErrorCode, errorMessage } from '../errors.js';
import { CLIENT_REQUEST_REFUSED_CODE, JsonRpcError } from '../core/client-requests.js';
import type { ToolCallRequest, ToolMiddleware } from '../core/tool-middleware.js';
import { ResultMetaKey, toolErrorResult } from '../core/tool-descriptor.js';
import type { ToolDescriptor, ToolResult } from '../core/tool-descriptor.js';
import { parseApprovalResponse, toApprovalPreview } from './approval.js';
import { refusingInputHandler } from './input-requests.js';
import { gateInputRequests } from './input-gate.js';
import type { Sampler } from './model-sampling.js';
import { boundApprover, type Approver } from './approval-scope.js';
import { decide } from './decide.js';
import { afterGroup, deferPauseIfGrouped } from './pause-deferral.js';
import type { PolicyVerdict } from './decide.js';
import type { PinStore } from './pins.js';
import type { Policy, PolicyDecision } from '../config/policy-schema.js';

export type { Approver };

/** How one call fared under the policy; stored in `result._meta['agents/policy']`. */
export interface PolicyRecord {
  /** The policy's name (usually the actor's). */
  policy: string;
  decision: PolicyDecision;
  outcome: 'allowed' | 'approved' | 'edited' | 'rejected' | 'denied';
  rule: string;
  reason: string;
  /** Who approved, edited or rejected (`policy` when a rule allowed it). */
  decidedBy: string;
  /** The rejection message given to the model. */
  message?: string;
  /** The arguments the human substituted, for `outcome: 'edited'`. */
  editedArgs?: Record<string, unknown>;
}

/** Options of {@link createPolicyMiddleware}. */
export interface PolicyMiddlewareOptions {
  policy: Policy;
  /** Name shown in refusals and the audit log (e.g. `actor "coder"`). Default `policy`. */
  name?: string;
  /**
   * Pinned fingerprints. A tool is pinned at its first allowed or approved call; a changed
   * fingerprint then needs approval whatever the mode. Without a store nothing is pinned.
   */
  pins?: PinStore;
  /**
   * How to ask. Default: the approver the caller bound to this call with `runWithApprover` (the
   * MCP server asks its client), else {@link createInterruptApprover}.
   */
  approve?: Approver;
  /** The skill a tool belongs to, so `skills.NAME` refinements apply. */
  skillOf?: (descriptor: ToolDescriptor) => string | undefined;
  /** True for tools that appeared after activation (they start as `ask` in ask mode). */
  isAddedAtRuntime?: (descriptor: ToolDescriptor) => boolean;
  /**
   * Writes the completions a 2026-07-28 server asks for when `clientRequests.sampling` is
   * `model` (an actor passes its chat model, see `createModelSampler`). Without it a person does.
   */
  sampler?: Sampler;
  /** `allowed-tools` of the active Agent Skill(s) for this call, or undefined for none. */
  activeSkillAllowedTools?: (request: ToolCallRequest) => readonly string[] | undefined;
}

/**
 * The approver for graphs: LangGraph `interrupt(preview)`. It must run inside a graph node (tools
 * run by `ToolNode` do) whose graph has a checkpointer; otherwise it throws `POLICY_DENIED` saying so
 * (the policy middleware turns that into a refusal).
 * On resume LangGraph re-runs the tool, the policy asks again and `interrupt` returns the resume value.
 */
export function createInterruptApprover(): Approver {
  return (preview) => {
    // Inside a task of grouped calls the pause waits until this call runs alone.
    deferPauseIfGrouped(`Approval of ${preview.toolId}`);
    try {
      return interrupt(preview);
    } catch (error) {
      if (isGraphInterrupt(error)) throw error;
      throw new AgentsError(
        AgentsErrorCode.PolicyDenied,
        `Tool "${preview.toolId}" needs approval, but the approval could not be requested: ` +
          `${errorMessage(error)}. Run the tool inside a LangGraph graph compiled with a checkpointer, ` +
          'or pass another `approve` function.',
        { cause: error, details: { toolId: preview.toolId } },
      );
    }
  };
}

/**
 * The request with the policy's gate in front of what its upstream server may ask of the MCP
 * client (sampling, elicitation) while it runs. Only a call the policy let run gets here.
 */
function withClientRequestGate(
  request: ToolCallRequest,
  policy: Policy,
  name: string,
  sampler: Sampler | undefined,
): ToolCallRequest {
  const forwarder = request.capabilities?.clientRequests;
  if (forwarder === undefined) {
    // A 2026 server asks through input_required instead (see createToolSet): same rules, and
    // sampling answered by a person or the actor's model (see gateInputRequests).
    const base = request.capabilities?.inputRequests;
    if (base === undefined) {
      if (policy.clientRequests.elicitation !== 'deny') return request;
      const refuse = refusingInputHandler(name, request.descriptor.name);
      return { ...request, capabilities: { ...request.capabilities, inputRequests: refuse } };
    }
    const gated = gateInputRequests(base, {
      policyName: name,
      toolName: request.descriptor.name,
      rules: policy.clientRequests,
      ...(sampler === undefined ? {} : { sampler }),
      ...(request.context.signal === undefined ? {} : { signal: request.context.signal }),
    });
    return { ...request, capabilities: { ...request.capabilities, inputRequests: gated } };
  }
  const rules = policy.clientRequests;
  const gated = forwarder.withGate((clientRequest, info) => {
    const key = clientRequest.method === 'sampling/createMessage' ? 'sampling' : 'elicitation';
    if (rules[key] === 'deny') {
      throw new JsonRpcError(
        CLIENT_REQUEST_REFUSED_CODE,
        `Refused by ${name}: ${clientRequest.method} from server "${info.serverName}" during ` +
          `tool "${request.descriptor.name}" is denied by clientRequests.${key}.`,
      );
    }
  });
  return { ...request, capabilities: { ...request.capabilities, clientRequests: gated } };
}

function withFullStop(text: string): string {
  return /[.!?]$/.test(text) ? text : `${text}.`;
}

function withPolicyMeta(result: ToolResult, record: PolicyRecord): ToolResult {
  return { ...result, _meta: { ...result._meta, [ResultMetaKey.Policy]: record } };
}

function errorResult(text: string, record: PolicyRecord): ToolResult {
  return toolErrorResult(text, { [ResultMetaKey.Policy]: record });
}

/**
 * The policy as a {@link ToolMiddleware}: `deny` returns an error result naming the policy and the
 * rule (the run goes on), `ask` asks via `approve` (LangGraph `interrupt` by default, or the
 * approver the caller bound with `runWithApprover`) and then runs, runs with edited arguments, or
 * returns the rejection message to the model; when nobody can be asked (the approver throws
 * `POLICY_DENIED`) the call is refused with that message; `allow` runs.
 * Every result carries a {@link PolicyRecord} under `_meta['agents/policy']`.
 *
 * Place it outside path rewriting (the preview shows logical paths) and inside the audit
 * middleware (which records the decision). Decisions use capabilities only, never descriptions.
 */
export function createPolicyMiddleware(options: PolicyMiddlewareOptions): ToolMiddleware {
  const name = options.name ?? 'policy';
  const interruptApprover = createInterruptApprover();
  const approve: Approver =
    options.approve ??
    ((preview, request) => (boundApprover() ?? interruptApprover)(preview, request));
  const { policy, pins } = options;

  const pinOnce = async (descriptor: ToolDescriptor, by: string): Promise<void> => {
    if (pins === undefined) return;
    if (pins.get(descriptor.id)?.fingerprint === descriptor.fingerprint) return;
    // In a grouped task the pin waits for its siblings: pinned now, this call would not ask when
    // the task runs again after a sibling's pause, and the answers would shift by one call.
    await afterGroup(() => pins.pin(descriptor, by));
  };

  return {
    name: 'policy',
    async wrap(request, next) {
      const { descriptor } = request;
      const skill = options.skillOf?.(descriptor);
      const allowedTools = options.activeSkillAllowedTools?.(request);
      const verdict: PolicyVerdict = decide(descriptor, policy, {
        ...(pins === undefined ? {} : { pins }),
        ...(skill === undefined ? {} : { skill }),
        ...(allowedTools === undefined ? {} : { activeSkillAllowedTools: allowedTools }),
        addedAtRuntime: options.isAddedAtRuntime?.(descriptor) ?? false,
      });
      const base = {
        policy: name,
        decision: verdict.decision,
        rule: verdict.rule.label,
        reason: verdict.reason,
      };

      if (verdict.decision === 'deny') {
        const record: PolicyRecord = { ...base, outcome: 'denied', decidedBy: 'policy' };
        return errorResult(
          `Refused by ${name}: tool "${descriptor.name}" (${descriptor.id}) is denied by ${verdict.rule.label}: ` +
            `${verdict.reason}. Do not retry this call; use another tool or ask the user.`,
          record,
        );
      }

      if (verdict.decision === 'allow') {
        await pinOnce(descriptor, 'policy');
        const result = await next(withClientRequestGate(request, policy, name, options.sampler));
        return withPolicyMeta(result, { ...base, outcome: 'allowed', decidedBy: 'policy' });
      }

      const pinned = pins?.get(descriptor.id);
      const preview = toApprovalPreview(descriptor, request.args, verdict, {
        ...(request.context.toolCallId === undefined
          ? {}
          : { toolCallId: request.context.toolCallId }),
        ...(pinned !== undefined && pinned.fingerprint !== descriptor.fingerprint
          ? { pinnedFingerprint: pinned.fingerprint }
          : {}),
      });
      let raw: unknown;
      try {
        raw = await approve(preview, request);
      } catch (error) {
        // A GraphInterrupt thrown here pauses the graph; it must propagate untouched. An approver
        // that cannot ask (no graph, an MCP client without elicitation) refuses the call instead.
        if (!AgentsError.hasCode(error, AgentsErrorCode.PolicyDenied)) throw error;
        const decidedBy = error.details['decidedBy'];
        const record: PolicyRecord = {
          ...base,
          outcome: 'denied',
          decidedBy: typeof decidedBy === 'string' ? decidedBy : 'policy',
          message: error.message,
        };
        return errorResult(error.message, record);
      }
      const answer = parseApprovalResponse(raw);
      if (answer === undefined || answer.type === 'reject') {
        const message =
          answer?.message ??
          (answer === undefined ? 'the approval answer was not understood' : undefined);
        const record: PolicyRecord = {
          ...base,
          outcome: 'rejected',
          decidedBy: answer?.by ?? 'user',
          ...(message === undefined ? {} : { message }),
        };
        return errorResult(
          `The user rejected this call of "${descriptor.name}" (${descriptor.id})` +
            `${message === undefined ? '.' : `: ${withFullStop(message)}`} Do not retry it unchanged.`,
          record,
        );
      }
      const by = answer.by ?? 'user';
      await pinOnce(descriptor, by);
      if (answer.type === 'edit') {
        const result = await next(
          withClientRequestGate({ ...request, args: answer.args }, policy, name, options.sampler),
        );
        return withPolicyMeta(result, {
          ...base,
          outcome: 'edited',
          decidedBy: by,
          editedArgs: answer.args,
        });
      }
      const result = await next(withClientRequestGate(request, policy, name, options.sampler));
      return withPolicyMeta(result, { ...base, outcome: 'approved', decidedBy: by });
    },
  };
}
