/**
 * Multi-round-trip requests (MCP 2026-07-28): a server answers `tools/call` with
 * `resultType: "input_required"`, questions in `inputRequests` and an opaque `requestState`, and
 * has executed nothing yet; the client retries the same call with `inputResponses` and the
 * echoed `requestState`. This is the contract between the one sender of `tools/call`
 * (`mcp/tool-call.ts`, which runs the rounds) and whoever answers the questions (in a graph run:
 * LangGraph `interrupt()`, see `policy/input-requests.ts`).
 */

/** One question of an `input_required` result, as the server sent it (untrusted). */
export interface InputRequestEntry {
  method: string;
  params?: Record<string, unknown>;
}

/** One `input_required` round of a call, put to an {@link InputRequestHandler}. */
export interface InputRequestRound {
  /** The server that asks. */
  serverName: string;
  /** The tool's name on the server. */
  toolName: string;
  /** The questions to put to a person: `elicitation/create` (form) only. */
  questions: Record<string, InputRequestEntry>;
  /** The server's opaque state for this round, echoed on the retry. */
  requestState?: string;
  /** 1 for the first question of the call. */
  round: number;
}

/** The answers to one round. */
export interface InputRequestAnswer {
  /** By question key: the `ElicitResult` (`{ action, content? }`). */
  responses: Record<string, unknown>;
  /**
   * The `requestState` the answers were given for (kept in the checkpoint with the question);
   * echoed on the retry instead of the one the round came with, so answers and state match.
   */
  requestState?: string;
}

/**
 * Answers the questions of one round. In a graph run it calls LangGraph `interrupt()`, which
 * throws to pause the run (the error must pass through untouched) and, on resume, returns the
 * answer. Throwing `POLICY_DENIED` refuses the questions: the call ends with an error result and
 * the tool never runs.
 */
export type InputRequestHandler = (
  round: InputRequestRound,
) => InputRequestAnswer | Promise<InputRequestAnswer>;
