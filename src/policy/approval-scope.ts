import { AsyncLocalStorage } from 'node:async_hooks';
import type { Approver } from './policy-middleware.js';

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
