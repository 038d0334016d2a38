import { isSpecType, SdkError, SdkErrorCode } from '@modelcontextprotocol/server';
import type { ClientCapabilities } from '@modelcontextprotocol/server';
import { AgentsError, AgentsErrorCode, errorMessage } from '../errors.js';
import type { ApprovalPreview, ApprovalResponse } from '../policy/approval.js';
import type { Approver } from '../policy/policy-middleware.js';
import { InputNotAnswered } from './paused-calls.js';
import type { InputAsk } from './paused-calls.js';

/** `decidedBy` in the policy record (and audit log) of a call the MCP client answered. */
export const MCP_CLIENT_APPROVER = 'mcp-client';
/** How long an approval question waits for the client's answer by default (ms). */
export const DEFAULT_APPROVAL_TIMEOUT_MS = 10 * 60_000;
/** The default "what next" of a refusal to a client that cannot be asked. */
export const DEFAULT_NO_ELICITATION_HINT =
  'allow the tool with a policy rule (policy.tools or policy.rules) or use a policy mode that does not ask';

const MAX_ARGS_TEXT = 2_000;

/** Puts one question to the client of a served call; resolves with its (untrusted) answer. */
export type AskClient = (
  ask: InputAsk,
  timeoutMs: number,
  signal?: AbortSignal,
) => Promise<unknown>;

/** Options of {@link createClientApprover}. */
export interface ClientApproverOptions {
  /** How the question reaches the client (a request on its session, or an input_required round). */
  ask: AskClient;
  /** What the client declared (at `initialize`, or in the request's `_meta` on 2026-07-28). */
  capabilities: ClientCapabilities | undefined;
  /** The client's name, from its `clientInfo`. */
  clientName: string | undefined;
  /** Aborted when the call is cancelled. */
  signal: AbortSignal;
  /** How long to wait for an answer (default {@link DEFAULT_APPROVAL_TIMEOUT_MS}); then reject. */
  timeoutMs?: number;
  /** What the refusal to a client without elicitation suggests instead (default {@link DEFAULT_NO_ELICITATION_HINT}). */
  noElicitationHint?: string;
}

/** True when the client declared form elicitation (an empty `elicitation: {}` means form). */
export function supportsFormElicitation(capabilities: ClientCapabilities | undefined): boolean {
  return capabilities?.elicitation?.form !== undefined;
}

/**
 * The approval question as the client shows it: tool, server, why, the arguments (logical paths,
 * as the caller wrote them) and each capability verdict with its source.
 */
export function formatApprovalQuestion(preview: ApprovalPreview): string {
  const caps = preview.capabilities;
  const verdicts = (['readOnly', 'writes', 'destructive', 'openWorld'] as const)
    .map((key) => `${key}=${String(caps[key].value)} (${caps[key].source})`)
    .join(', ');
  let args = JSON.stringify(preview.args);
  if (args.length > MAX_ARGS_TEXT) args = `${args.slice(0, MAX_ARGS_TEXT)}… [cut]`;
  const lines = [
    `Approve a call of tool "${preview.toolName}" (${preview.toolId}${preview.serverName === undefined ? '' : ` on server "${preview.serverName}"`})?`,
    `Why: ${preview.reason} [${preview.rule}]`,
    `Arguments: ${args}`,
    `Capabilities: ${verdicts}`,
  ];
  if (preview.pinnedFingerprint !== undefined)
    lines.push('Note: the tool definition changed since it was last approved.');
  for (const note of caps.disagreements) lines.push(`Note: ${note}`);
  return lines.join('\n');
}

/** The approval form: `decision: approve | reject` and an optional `reason`. */
export const APPROVAL_REQUESTED_SCHEMA = {
  type: 'object' as const,
  properties: {
    decision: {
      type: 'string' as const,
      title: 'Decision',
      description: 'approve runs the call; reject refuses it.',
      enum: ['approve', 'reject'],
    },
    reason: {
      type: 'string' as const,
      title: 'Reason',
      description: 'Optional; given back to the caller when you reject.',
    },
  },
  required: ['decision'],
};

function reject(message: string): ApprovalResponse {
  return { type: 'reject', message, by: MCP_CLIENT_APPROVER };
}

/**
 * The approver for a call made over MCP, on either revision: asks the client with
 * `elicitation/create` (a form with `decision: approve | reject` and an optional `reason`)
 * before the tool runs. `accept` + approve runs the call; reject, `decline`, `cancel`, a client
 * error or no answer within the timeout refuse it; answers are recorded with `by: "mcp-client"`.
 * A client that did not declare form elicitation cannot be asked: the approver throws
 * `POLICY_DENIED` saying so, and the policy refuses the call with that message. A cancelled call
 * throws `ABORTED`.
 */
export function createClientApprover(options: ClientApproverOptions): Approver {
  const timeoutMs = options.timeoutMs ?? DEFAULT_APPROVAL_TIMEOUT_MS;
  return async (preview) => {
    if (!supportsFormElicitation(options.capabilities)) {
      throw new AgentsError(
        AgentsErrorCode.PolicyDenied,
        `Tool "${preview.toolName}" needs approval (${preview.rule}: ${preview.reason}), and ` +
          `this MCP client${options.clientName === undefined ? '' : ` ("${options.clientName}")`} ` +
          'cannot be asked: it did not declare the ' +
          `elicitation capability. To run it, ${options.noElicitationHint ?? DEFAULT_NO_ELICITATION_HINT}.`,
        { details: { toolId: preview.toolId, decidedBy: 'mcp-server' } },
      );
    }
    let answer: unknown;
    try {
      answer = await options.ask(
        {
          method: 'elicitation/create',
          params: {
            mode: 'form',
            message: formatApprovalQuestion(preview),
            requestedSchema: APPROVAL_REQUESTED_SCHEMA,
          },
        },
        timeoutMs,
        options.signal,
      );
    } catch (error) {
      if (
        options.signal.aborted ||
        (error instanceof InputNotAnswered && error.reason === 'cancelled')
      ) {
        throw new AgentsError(
          AgentsErrorCode.Aborted,
          `The call of "${preview.toolName}" was cancelled while waiting for approval.`,
          { cause: error, details: { toolId: preview.toolId } },
        );
      }
      const timedOut =
        error instanceof InputNotAnswered ||
        (error instanceof SdkError && error.code === SdkErrorCode.RequestTimeout);
      return reject(
        timedOut
          ? `no answer from the MCP client within ${Math.round(timeoutMs / 1000)} s`
          : `the MCP client could not ask for approval (${errorMessage(error)})`,
      );
    }
    return isSpecType.ElicitResult(answer)
      ? approvalFromElicitResult(answer)
      : reject('the MCP client gave no valid answer');
  };
}

/**
 * The policy's answer from the client's answer to the approval form: `accept` + approve runs the
 * call; anything else refuses it. The answer is untrusted: only the exact strings count.
 */
export function approvalFromElicitResult(result: {
  action?: unknown;
  content?: unknown;
}): ApprovalResponse {
  if (result.action === 'decline') return reject('declined in the MCP client');
  if (result.action === 'cancel') return reject('the approval request was dismissed');
  if (result.action !== 'accept') return reject('the MCP client gave no valid answer');
  const content = (result.content ?? {}) as Record<string, unknown>;
  const decision = content['decision'];
  const reason = content['reason'];
  if (decision === 'approve') return { type: 'approve', by: MCP_CLIENT_APPROVER };
  if (decision === 'reject') {
    return reject(
      typeof reason === 'string' && reason.trim() !== ''
        ? `rejected in the MCP client: ${reason.trim()}`
        : 'rejected in the MCP client',
    );
  }
  return reject('the MCP client accepted without a decision');
}
