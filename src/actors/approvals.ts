import { isApprovalPreview } from '../policy/approval.js';
import type { ApprovalPreview } from '../policy/approval.js';
import { isInputRequestPreview } from '../policy/input-requests.js';
import type { InputRequestPreview } from '../policy/input-requests.js';

/** A tool call waiting for a human: the interrupt to answer and what it asks about. */
export interface PendingApproval {
  /** LangGraph interrupt id; key of the resume map when several calls wait at once. */
  interruptId?: string;
  preview: ApprovalPreview;
}

/**
 * The approval requests in an `__interrupt__` value (of `graph.invoke` output, a stream update
 * or `getState().tasks[].interrupts`). Other interrupts are skipped.
 */
export function pendingApprovalsOf(interrupts: unknown): PendingApproval[] {
  return interruptsOf(interrupts, isApprovalPreview);
}

/** A tool call whose server asked a question (2026-07-28 `input_required`), waiting for a human. */
export interface PendingInput {
  /** LangGraph interrupt id; key of the resume map when several calls wait at once. */
  interruptId?: string;
  preview: InputRequestPreview;
}

/** The server questions in an `__interrupt__` value (as {@link pendingApprovalsOf}). */
export function pendingInputsOf(interrupts: unknown): PendingInput[] {
  return interruptsOf(interrupts, isInputRequestPreview);
}

/** The interrupts of `interrupts` whose value `is` accepts, with their ids. */
function interruptsOf<P>(
  interrupts: unknown,
  is: (value: unknown) => value is P,
): Array<{ interruptId?: string; preview: P }> {
  if (!Array.isArray(interrupts)) return [];
  return interrupts.flatMap((item: unknown) => {
    if (typeof item !== 'object' || item === null || !('value' in item) || !is(item.value))
      return [];
    const id = 'id' in item && typeof item.id === 'string' ? item.id : undefined;
    return [{ ...(id === undefined ? {} : { interruptId: id }), preview: item.value }];
  });
}

/**
 * The `resume` value answering pending approvals: the answer itself when one call waits, or a
 * map from interrupt id to answer when several do (LangGraph's form for parallel interrupts).
 * `answers` is in the order of `pending`.
 */
export function toResumeValue<T>(
  pending: ReadonlyArray<{ interruptId?: string }>,
  answers: readonly T[],
): unknown {
  if (pending.length <= 1) return answers[0];
  const map: Record<string, T> = {};
  pending.forEach((item, index) => {
    const answer = answers[index];
    if (item.interruptId !== undefined && answer !== undefined) map[item.interruptId] = answer;
  });
  return map;
}
