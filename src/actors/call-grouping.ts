import type { AIMessage, BaseMessage, ToolCall, ToolMessage } from '@langchain/core/messages';
import type { StructuredTool } from '@langchain/core/tools';
import type { Policy } from '../config/policy-schema.js';
import type { ToolDescriptor } from '../core/tool-descriptor.js';
import { decide, effectiveCapabilities } from '../policy/decide.js';

/**
 * Which tool calls of a turn the actor runs in one LangGraph task (`routeToolCallsPerTask`'s
 * `group`): calls of MCP tools that are read-only by their capability verdicts and that the
 * policy allows outright. One task per call costs LangGraph's task set-up, its own saved writes
 * and its own stream chunk (bench/findings.md, issue 37); a turn of read-only calls needs none of
 * what a task per call buys:
 *
 * - exactly once: a grouped task's results are saved at its end, so a crash (or a pause) inside
 *   it runs its calls again. Read-only calls change nothing when run again, which is also why a
 *   read-only call is sent again after its server restarts. Writes keep a task each.
 * - pauses: a grouped call that pauses anyway (a pinned definition changed, a network host to
 *   approve, a 2026 server's question) pauses alone, after its siblings (pipeline/grouped-calls.ts),
 *   so each resume value still reaches its own call. The verdict here only keeps such calls out
 *   of groups where it can tell ahead (no pins, skills or new-tool state is read here; the pin an
 *   approval writes in a group waits for the group's end, policy/pause-deferral.ts). It keeps
 *   out the calls of servers that may ask about a host (`asksAboutHosts`): a host approval pins
 *   the host at once (the call retries with it), so a rerun would not ask again.
 *
 * Only MCP tools: their only ways to pause are the library's own pause points, which a group
 * defers; a custom or built-in tool may call LangGraph `interrupt()` itself.
 */
export function readOnlyAllowedCalls(
  tools: readonly StructuredTool[],
  policy: Policy,
  asksAboutHosts: ReadonlySet<string> = new Set(),
): (call: ToolCall) => boolean {
  // A refreshed tool brings a new descriptor object, so the verdict follows the registry.
  const verdicts = new WeakMap<ToolDescriptor, boolean>();
  return (call) => {
    const tool = tools.find((each) => each.name === call.name);
    const descriptor = (tool as { descriptor?: ToolDescriptor } | undefined)?.descriptor;
    if (descriptor === undefined || descriptor.source !== 'mcp') return false;
    // A host approval pins the host: rerun after a sibling's pause, the call would not ask
    // again and the next answer would reach the wrong call. Such servers' calls stay alone.
    if (descriptor.serverName !== undefined && asksAboutHosts.has(descriptor.serverName))
      return false;
    let groupable = verdicts.get(descriptor);
    if (groupable === undefined) {
      groupable =
        effectiveCapabilities(descriptor.capabilities).readOnly &&
        decide(descriptor, policy).decision === 'allow';
      verdicts.set(descriptor, groupable);
    }
    return groupable;
  };
}

/**
 * The history with each turn's ToolMessages in the order of the model's calls. A grouped task's
 * messages stand where its first call stands (LangGraph applies a step's writes in task order),
 * so a turn `[read, write, read]` is answered `[read, read, write]` in the state. The model gets
 * them in its own order, as with a task per call: the same request whether or not calls were
 * grouped (a replay, whose recording middleware groups nothing, compares it), and the order some
 * providers expect. Returns `messages` itself when nothing is out of order.
 */
export function inCallOrder(messages: BaseMessage[]): BaseMessage[] {
  // Built in one pass, only from the first turn out of order on (most threads have none).
  let reordered: BaseMessage[] | undefined;
  let copied = 0;
  for (let index = 0; index < messages.length; index++) {
    const message = messages[index]!;
    // A cheap test first: most messages of a long thread are tool results.
    if (message.type !== 'ai') continue;
    const calls = (message as AIMessage).tool_calls ?? [];
    if (calls.length < 2) continue;
    const first = index + 1;
    let end = first;
    let inOrder = true;
    for (; end < messages.length && messages[end]!.type === 'tool'; end++)
      if ((messages[end] as ToolMessage).tool_call_id !== calls[end - first]?.id) inOrder = false;
    index = end - 1;
    if (inOrder) continue;
    const position = new Map(calls.map((call, at) => [call.id, at]));
    const rank = (answer: ToolMessage) => position.get(answer.tool_call_id) ?? calls.length;
    const block = (messages.slice(first, end) as ToolMessage[]).sort((a, b) => rank(a) - rank(b));
    reordered ??= [];
    for (let at = copied; at < first; at++) reordered.push(messages[at]!);
    for (const answer of block) reordered.push(answer);
    copied = end;
  }
  if (reordered === undefined) return messages;
  for (let at = copied; at < messages.length; at++) reordered.push(messages[at]!);
  return reordered;
}
