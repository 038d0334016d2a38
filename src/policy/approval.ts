import { z } from 'zod';
import type { CapabilityVerdict, ToolDescriptor } from '../core/tool-descriptor.js';
import type { PolicyVerdict } from './decide.js';

/** Marks an interrupt value as a tool approval request (so UIs and the CLI can recognise it). */
export const APPROVAL_PREVIEW_KIND = 'agents/tool-approval';

/**
 * What a human sees before approving a call: the tool, its arguments (logical paths, as the model
 * wrote them), each capability verdict with where it came from, the server, and why approval is
 * needed. This is the value of the LangGraph interrupt (`__interrupt__[0].value`).
 */
export interface ApprovalPreview {
  kind: typeof APPROVAL_PREVIEW_KIND;
  toolId: string;
  toolName: string;
  originalName: string;
  source: ToolDescriptor['source'];
  serverName?: string;
  title?: string;
  /** The sanitized description, capped; shown so the human can spot a poisoned one. */
  description: string;
  args: Record<string, unknown>;
  capabilities: {
    readOnly: CapabilityVerdict;
    writes: CapabilityVerdict;
    destructive: CapabilityVerdict;
    openWorld: CapabilityVerdict;
    disagreements: string[];
  };
  fingerprint: string;
  /** The fingerprint approved earlier, when the definition changed since. */
  pinnedFingerprint?: string;
  toolCallId?: string;
  /** The rule that asked, and why. */
  rule: string;
  reason: string;
  /** The answers the resume value may carry. */
  allowedResponses: Array<'approve' | 'edit' | 'reject'>;
  /**
   * Set when the question is about network access, not the call itself: the server tried to
   * reach these hosts (on none of its lists, a policy `network` rule asks) and was refused. An
   * approval pins them for the server and runs the call again; a rejection keeps the refusal.
   */
  network?: { serverName: string; hosts: string[] };
}

const MAX_PREVIEW_DESCRIPTION = 1_000;

/** Builds the approval preview for one call. */
export function toApprovalPreview(
  descriptor: ToolDescriptor,
  args: Record<string, unknown>,
  verdict: PolicyVerdict,
  extra: { toolCallId?: string; pinnedFingerprint?: string } = {},
): ApprovalPreview {
  const caps = descriptor.capabilities;
  const missing = (name: string): CapabilityVerdict => ({
    value: name === 'readOnly' ? false : true,
    source: 'default',
    reason: 'no verdict; conservative default',
  });
  const description =
    descriptor.description.length > MAX_PREVIEW_DESCRIPTION
      ? `${descriptor.description.slice(0, MAX_PREVIEW_DESCRIPTION)}… [cut]`
      : descriptor.description;
  return {
    kind: APPROVAL_PREVIEW_KIND,
    toolId: descriptor.id,
    toolName: descriptor.name,
    originalName: descriptor.originalName,
    source: descriptor.source,
    ...(descriptor.serverName === undefined ? {} : { serverName: descriptor.serverName }),
    ...(descriptor.title === undefined ? {} : { title: descriptor.title }),
    description,
    args,
    capabilities: {
      readOnly: caps?.readOnly ?? missing('readOnly'),
      writes: caps?.writes ?? missing('writes'),
      destructive: caps?.destructive ?? missing('destructive'),
      openWorld: caps?.openWorld ?? missing('openWorld'),
      disagreements: caps?.disagreements ?? [],
    },
    fingerprint: descriptor.fingerprint,
    ...(extra.pinnedFingerprint === undefined
      ? {}
      : { pinnedFingerprint: extra.pinnedFingerprint }),
    ...(extra.toolCallId === undefined ? {} : { toolCallId: extra.toolCallId }),
    rule: verdict.rule.label,
    reason: verdict.reason,
    allowedResponses: ['approve', 'edit', 'reject'],
  };
}

/** True when an interrupt value is one of our approval previews. */
export function isApprovalPreview(value: unknown): value is ApprovalPreview {
  return (
    typeof value === 'object' &&
    value !== null &&
    'kind' in value &&
    value.kind === APPROVAL_PREVIEW_KIND
  );
}

const ArgsSchema = z.record(z.string(), z.unknown());

/**
 * A human's answer to an approval request: the `resume` value of `Command({ resume })`.
 * `by` names who answered (recorded in the audit log; default `user`).
 */
export const ApprovalResponseSchema = z.union([
  z.object({ type: z.literal('approve'), by: z.string().optional() }),
  z.object({ type: z.literal('edit'), args: ArgsSchema, by: z.string().optional() }),
  z.object({
    type: z.literal('reject'),
    message: z.string().optional(),
    by: z.string().optional(),
  }),
]);
/** See {@link ApprovalResponseSchema}. */
export type ApprovalResponse = z.infer<typeof ApprovalResponseSchema>;

// langchain's humanInTheLoopMiddleware resume shapes, accepted too so one UI can answer both.
const HitlEditSchema = z.object({
  type: z.literal('edit'),
  editedAction: z.object({ args: ArgsSchema }),
  by: z.string().optional(),
});
const HitlBatchSchema = z.object({ decisions: z.array(z.unknown()).length(1) });

/**
 * Reads a resume value into an {@link ApprovalResponse}. Accepts ours, langchain HITL's
 * `{ type: 'edit', editedAction: { args } }` and a one-item `{ decisions: [...] }` batch.
 * Anything else is `undefined` (the caller rejects the call: a garbled answer is not a yes).
 */
export function parseApprovalResponse(value: unknown): ApprovalResponse | undefined {
  const batch = HitlBatchSchema.safeParse(value);
  const candidate = batch.success ? batch.data.decisions[0] : value;
  const direct = ApprovalResponseSchema.safeParse(candidate);
  if (direct.success) return direct.data;
  const hitlEdit = HitlEditSchema.safeParse(candidate);
  if (hitlEdit.success) {
    return {
      type: 'edit',
      args: hitlEdit.data.editedAction.args,
      ...(hitlEdit.data.by === undefined ? {} : { by: hitlEdit.data.by }),
    };
  }
  return undefined;
}
