import { AsyncLocalStorage } from 'node:async_hooks';
import type { ToolCallRequest } from '../core/tool-middleware.js';
import type { ApprovalPreview } from './approval.js';

/**
 * Asks a human about one call and returns the answer (an `ApprovalResponse`-shaped value; anything
 * else counts as a rejection). For graphs this is {@link createInterruptApprover}: LangGraph's
 * `interrupt(preview)`, which pauses the run and returns the `Command({ resume })` value. An
 * approver that cannot ask at all throws `POLICY_DENIED`; the policy then refuses the call with
 * that error's message (outcome `denied`).
 */
export type Approver = (preview: ApprovalPreview, request: ToolCallRequest) => unknown;

const scope = new AsyncLocalStorage<Approver>();

/**
 * Runs `fn` with `approver` bound to every tool call made inside it (across awaits). A policy
 * middleware without its own `approve` option asks this approver instead of LangGraph
 * `interrupt()`: the MCP server binds one per `tools/call`, since over MCP there is no graph to
 * pause and the one to ask is the client that made the call. An approver may return an
 * `ApprovalResponse`, or throw `POLICY_DENIED` when it cannot ask at all (the call is then
 * refused with that message).
 */
export function runWithApprover<T>(approver: Approver, fn: () => T): T {
  return scope.run(approver, fn);
}

/** The approver bound by {@link runWithApprover} around the current call, if any. */
export function boundApprover(): Approver | undefined {
  return scope.getStore();
}
