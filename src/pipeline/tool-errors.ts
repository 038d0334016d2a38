import { ToolMessage } from '@langchain/core/messages';
import type { ToolCall } from '@langchain/core/messages';
import { AgentsError, AgentsErrorCode, errorMessage } from '../errors.js';

/**
 * Errors only a person can clear: the run must stop and reach them, never the model. A server
 * that needs a (step-up) login is one: its message names the `agents server login` command.
 */
const HUMAN_ONLY: ReadonlySet<string> = new Set([AgentsErrorCode.AuthRequired]);

/**
 * Faults of the infrastructure, not of the call: the model did nothing wrong, so it must not be
 * told to "fix its mistakes" (it would change good arguments or give up on a good tool).
 */
const INFRASTRUCTURE: ReadonlySet<string> = new Set([
  AgentsErrorCode.ServerUnavailable,
  AgentsErrorCode.ServerStartFailed,
  AgentsErrorCode.ProtocolError,
  AgentsErrorCode.Timeout,
  AgentsErrorCode.Closed,
  AgentsErrorCode.SandboxFailed,
  AgentsErrorCode.ConfinementUnavailable,
]);

/** The code of an `AgentsError`, or of the first one in its `cause` chain. */
function agentsCodeOf(error: unknown): string | undefined {
  for (let item = error, depth = 0; item !== undefined && depth < 5; depth++) {
    if (AgentsError.isInstance(item)) return item.code;
    item = (item as { cause?: unknown } | null)?.cause;
  }
  return undefined;
}

/** True for an error that must stop the run and reach a person (see {@link HUMAN_ONLY}). */
export function isHumanOnlyToolError(error: unknown): boolean {
  const code = agentsCodeOf(error);
  return code !== undefined && HUMAN_ONLY.has(code);
}

/**
 * The error ToolMessage a thrown tool error becomes. Mistakes of the call (bad arguments, an
 * unknown tool, a failed tool) get LangGraph ToolNode's wording, `Please fix your mistakes.`;
 * infrastructure faults (a crashed or unresponsive server, a timeout) say what they are instead.
 */
export function toolErrorMessage(error: unknown, call: Pick<ToolCall, 'name' | 'id'>): ToolMessage {
  const code = agentsCodeOf(error);
  const content =
    code !== undefined && INFRASTRUCTURE.has(code)
      ? `Error: ${errorMessage(error)}\n This is a fault of the tool's server or the sandbox (${code}), not of your call.`
      : `Error: ${errorMessage(error)}\n Please fix your mistakes.`;
  return new ToolMessage({
    status: 'error',
    content,
    name: call.name,
    tool_call_id: call.id ?? '',
  });
}
