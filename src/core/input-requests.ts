/**
 * Multi-round-trip requests (MCP 2026-07-28): a server answers `tools/call` with
 * `resultType: "input_required"`, questions in `inputRequests` and an opaque `requestState`, and
 * has executed nothing yet; the client retries the same call with `inputResponses` and the
 * echoed `requestState`. This is the contract between the one sender of `tools/call`
 * (`mcp/tool-call.ts`, which runs the rounds) and whoever answers the questions (in a graph run:
 * LangGraph `interrupt()`, see `policy/input-requests.ts`; the policy gate in front of it, see
 * `policy/input-gate.ts`).
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
  /**
   * The questions to answer: `elicitation/create` (form), and `sampling/createMessage` when the
   * handler offers sampling (see {@link InputRequestHandler.offersSampling}).
   */
  questions: Record<string, InputRequestEntry>;
  /** The server's opaque state for this round, echoed on the retry. */
  requestState?: string;
  /** 1 for the first question of the call. */
  round: number;
}

/** Who answered or refused a question: for the audit log. */
export interface InputAnswerSource {
  /** `client`: answered by this library itself (roots from the sandbox, a built-in refusal). */
  by: 'person' | 'model' | 'policy' | 'client';
  /** The person's name, the model's name, or the policy's name. */
  name?: string;
}

/** The answers to one round. */
export interface InputRequestAnswer {
  /**
   * By question key: an `ElicitResult` (`{ action, content? }`) for an elicitation, a
   * `CreateMessageResult` (`{ role, content, model, stopReason }`) for a sampling request.
   */
  responses: Record<string, unknown>;
  /**
   * The `requestState` the answers were given for (kept in the checkpoint with the question);
   * echoed on the retry instead of the one the round came with, so answers and state match.
   */
  requestState?: string;
  /** Who gave each answer, by question key (default: a person). */
  sources?: Record<string, InputAnswerSource>;
}

/**
 * Answers the questions of one round. In a graph run it calls LangGraph `interrupt()`, which
 * throws to pause the run (the error must pass through untouched) and, on resume, returns the
 * answer. Throwing `POLICY_DENIED` refuses the questions: the call ends with an error result and
 * the tool never runs (`details.decidedBy` / `details.declined` say who and how, for the audit).
 */
export interface InputRequestHandler {
  (round: InputRequestRound): InputRequestAnswer | Promise<InputRequestAnswer>;
  /**
   * True when sampling questions may be put to this handler: only then is the `sampling`
   * capability declared in the request's `_meta`. A plain function offers form elicitation only.
   */
  readonly offersSampling?: boolean;
  /**
   * Why a question this handler does not take (`method`) is refused, when a policy decided so:
   * the text the call ends with (naming the policy key). Undefined: the generic refusal.
   */
  readonly refusal?: (method: string, serverName: string) => string | undefined;
}

/** `handler` with what it offers and why it refuses (see {@link InputRequestHandler}). */
export function describeInputHandler(
  handler: (round: InputRequestRound) => InputRequestAnswer | Promise<InputRequestAnswer>,
  traits: Pick<InputRequestHandler, 'offersSampling' | 'refusal'>,
): InputRequestHandler {
  return Object.assign((round: InputRequestRound) => handler(round), traits);
}

/** How one question of a round ended, for observers (the audit log). */
export interface InputQuestionOutcome {
  serverName: string;
  toolName: string;
  round: number;
  /** The question's key in `inputRequests` (empty: the server refused to ask, see `refusal`). */
  key: string;
  method: string;
  /** A short, capped summary of what was asked (never the full untrusted text). */
  summary: Record<string, unknown>;
  /**
   * `asked`: put to a person, the run paused for the answer; `answered`: an answer went back
   * to the server; `declined`: the person declined (the tool did not run unless the server
   * goes on without it); `refused`: nobody was asked (policy, not offered, over a bound).
   */
  outcome: 'asked' | 'answered' | 'declined' | 'refused';
  source: InputAnswerSource;
  /** An elicitation answer's action (accept, decline, cancel). */
  action?: string;
  /** The model named in a sampling answer. */
  model?: string;
  /** The refusal text, for `refused` and `declined` that ended the call. */
  reason?: string;
}

/** Sees how each question of a call's `input_required` rounds ended. */
export type InputRequestObserver = (outcome: InputQuestionOutcome) => void;

/** A short summary of one question, safe to log: counts and capped text, never whole messages. */
export function summarizeInputQuestion(entry: InputRequestEntry): Record<string, unknown> {
  const cap = (text: string, max: number): string =>
    text.length > max ? `${text.slice(0, max)}…` : text;
  const params = entry.params ?? {};
  if (entry.method === 'sampling/createMessage') {
    const messages = params['messages'];
    const system = params['systemPrompt'];
    return {
      messages: Array.isArray(messages) ? messages.length : 0,
      ...(typeof params['maxTokens'] === 'number' ? { maxTokens: params['maxTokens'] } : {}),
      ...(typeof system === 'string' ? { systemPrompt: cap(system, 200) } : {}),
      ...(Array.isArray(params['tools']) ? { tools: params['tools'].length } : {}),
    };
  }
  if (entry.method === 'elicitation/create') {
    const message = params['message'];
    const schema = params['requestedSchema'];
    const properties =
      typeof schema === 'object' && schema !== null
        ? (schema as Record<string, unknown>)['properties']
        : undefined;
    return {
      mode: typeof params['mode'] === 'string' ? params['mode'] : 'form',
      ...(typeof message === 'string' ? { message: cap(message, 500) } : {}),
      ...(typeof properties === 'object' && properties !== null
        ? { fields: Object.keys(properties).slice(0, 50) }
        : {}),
    };
  }
  return {};
}
