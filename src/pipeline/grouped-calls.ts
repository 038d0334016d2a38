import { ToolMessage } from '@langchain/core/messages';
import type { ToolCall } from '@langchain/core/messages';
import type { ToolDescriptor } from '../core/tool-descriptor.js';
import { effectiveCapabilities } from '../policy/decide.js';
import { isPauseDeferred, runAsGroup, runWithPausesDeferred } from '../policy/pause-deferral.js';

/**
 * The input of a task that runs several tool calls of one turn (see `routeToolCallsPerTask`'s
 * `group` option): the calls alone, plus the state fields the tools read, as for one call.
 */
export interface GroupedToolCallsInput {
  lg_tool_calls: ToolCall[];
  [key: string]: unknown;
}

export function isGroupedToolCalls(input: unknown): input is GroupedToolCallsInput {
  return (
    typeof input === 'object' &&
    input !== null &&
    Array.isArray((input as Record<string, unknown>)['lg_tool_calls'])
  );
}

/**
 * Runs the calls of one grouped task, returning each call's output in call order.
 *
 * First side by side, with every pause point deferred (policy/pause-deferral.ts): a call that
 * would pause (an approval, a network approval, a server's question) stops there instead. Then
 * those calls run again one at a time, in call order, where they may pause for real: a pause ends
 * the task, and on resume the task runs again the same way, so the n-th `interrupt()` of the task
 * is always the same call's and each resume value reaches the call it answers. Calls that finished
 * run again on resume too (their results are saved with the task, not apart): the router groups
 * only read-only calls, for which that changes nothing.
 */
export function runGroupedCalls<T>(
  calls: readonly ToolCall[],
  run: (call: ToolCall) => Promise<T>,
): Promise<T[]> {
  // Pins made by approvals wait for the whole group (see runAsGroup): each run of the task then
  // asks the same calls in the same order.
  return runAsGroup(() => runCalls(calls, run));
}

async function runCalls<T>(
  calls: readonly ToolCall[],
  run: (call: ToolCall) => Promise<T>,
): Promise<T[]> {
  const settled = await Promise.allSettled(
    calls.map((call) => runWithPausesDeferred(() => run(call))),
  );
  const outputs: T[] = [];
  for (const outcome of settled) {
    // Any other failure (a bubble-up such as AUTH_REQUIRED) ends the task as it would for one call.
    if (outcome.status === 'rejected' && !isPauseDeferred(outcome.reason)) throw outcome.reason;
  }
  for (const [index, outcome] of settled.entries()) {
    outputs.push(outcome.status === 'fulfilled' ? outcome.value : await run(calls[index]!));
  }
  return outputs;
}

/**
 * The refusal of a grouped call whose MCP tool may write now: its server relisted it between the
 * routing of the turn (which grouped it as read-only) and its run. A write inside a group would
 * run again whenever the group does (after a crash, or a sibling's pause), so it does not run;
 * the model is told to call it again, and its own task then runs it once.
 */
export function refusedAsChanged(
  tools: readonly unknown[],
  call: ToolCall,
): { messages: ToolMessage[] } | undefined {
  const tool = tools.find((each) => (each as { name?: unknown }).name === call.name);
  const descriptor = (tool as { descriptor?: ToolDescriptor } | undefined)?.descriptor;
  if (descriptor?.source !== 'mcp' || effectiveCapabilities(descriptor.capabilities).readOnly)
    return undefined;
  const message = new ToolMessage({
    tool_call_id: call.id ?? '',
    name: call.name,
    status: 'error',
    content:
      `Tool "${call.name}" (${descriptor.id}) changed after this turn was planned and may write ` +
      'now, so it did not run with the read-only calls it was grouped with. Call it again if still needed.',
  });
  return { messages: [message] };
}
