import { basename } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import type { CallToolResult } from '@modelcontextprotocol/client';
import { AgentsError, AgentsErrorCode, errorMessage } from '../errors.js';
import {
  summarizeInputQuestion,
  type InputAnswerSource,
  type InputQuestionOutcome,
  type InputRequestEntry,
  type InputRequestHandler,
  type InputRequestObserver,
  type InputRequestRound,
} from '../core/input-requests.js';

/**
 * The multi-round-trip loop of one `tools/call` on a 2026-07-28 server, run by us instead of the
 * SDK's auto-fulfilment so a question can become a LangGraph interrupt: each `input_required`
 * answer is split into what we answer ourselves (`roots/list`: the sandbox root), what we refuse
 * (URL elicitation; sampling unless the handler offers it) and what goes to the
 * {@link InputRequestHandler} (form elicitation, offered sampling); then the call is sent again
 * with `inputResponses` and the echoed `requestState`. The server has executed nothing before
 * the last leg, so pausing, resuming from another process and re-sending the first leg all leave
 * the tool run exactly once. Every question's outcome goes to the observer (the audit log).
 */

/** The wire shape of an `input_required` result (the SDK's manual mode hands it back as is). */
export interface InputRequiredResult {
  resultType: 'input_required';
  inputRequests?: Record<string, unknown>;
  requestState?: string;
}

/** One leg: `tools/call` with these params, handing back `input_required` instead of answering it. */
export type ToolCallLeg = (params: ToolCallParams) => Promise<CallToolResult | InputRequiredResult>;

/** `tools/call` params plus the retry fields of 2026-07-28. */
export interface ToolCallParams {
  name: string;
  arguments: Record<string, unknown>;
  inputResponses?: Record<string, unknown>;
  requestState?: string;
  _meta?: Record<string, unknown>;
}

/** Bounds on what a server may make us carry (it is untrusted; the state goes into checkpoints). */
export const INPUT_ROUND_LIMITS = {
  rounds: 10,
  questions: 16,
  requestStateBytes: 256 * 1024,
} as const;

/** Options of {@link runInputRounds}. */
export interface InputRoundsOptions {
  serverName: string;
  toolName: string;
  handler: InputRequestHandler;
  /** Folders `roots/list` is answered with (the sandbox root); without it roots are refused. */
  roots?: () => string[];
  signal?: AbortSignal;
  /** Told how each question ended (the audit log); its failures are ignored. */
  observe?: InputRequestObserver;
}

/** JSON-RPC code of a server's "the client did not declare a capability this needs" (2026-07-28). */
const MISSING_CLIENT_CAPABILITY = -32021;

/** True for an `input_required` result. */
export function isInputRequired(value: unknown): value is InputRequiredResult {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as { resultType?: unknown }).resultType === 'input_required'
  );
}

/**
 * Sends the call, answers `input_required` rounds until the server gives a complete result,
 * and returns it. A question nobody may answer ends the call with an error result saying so (the
 * tool did not run). Errors of the handler other than `POLICY_DENIED` (a LangGraph interrupt
 * above all) pass through untouched.
 */
export async function runInputRounds(
  leg: ToolCallLeg,
  base: ToolCallParams,
  options: InputRoundsOptions,
): Promise<CallToolResult> {
  const { handler } = options;
  const where = `Tool "${options.toolName}" on server "${options.serverName}"`;
  const tell = (
    round: number,
    key: string,
    entry: InputRequestEntry,
    outcome: InputQuestionOutcome['outcome'],
    source: InputAnswerSource,
    extra: Partial<Pick<InputQuestionOutcome, 'action' | 'model' | 'reason'>> = {},
  ): void => {
    try {
      options.observe?.({
        serverName: options.serverName,
        toolName: options.toolName,
        round,
        key,
        method: entry.method,
        summary: summarizeInputQuestion(entry),
        outcome,
        source,
        ...extra,
      });
    } catch {
      // An observer (the audit) must not change the call.
    }
  };
  let params = base;
  for (let round = 1; ; round++) {
    let result: CallToolResult | InputRequiredResult;
    try {
      result = await leg(params);
    } catch (error) {
      // A server that checks the declared capabilities (the SDK's do) answers a question we did
      // not offer with -32021 instead of asking it: say which policy withheld it.
      const refused = withheldCapability(error, handler, options.serverName, where);
      if (refused === undefined) throw error;
      tell(round, '', { method: refused.method }, 'refused', refused.source, {
        reason: refused.text,
      });
      return notRun(refused.text);
    }
    if (!isInputRequired(result)) return result;
    if (round > INPUT_ROUND_LIMITS.rounds) {
      return notRun(
        `${where} still asked for input after ${INPUT_ROUND_LIMITS.rounds} rounds; the call was given up and the tool did not run.`,
      );
    }
    const state = result.requestState;
    if (state !== undefined && Buffer.byteLength(state) > INPUT_ROUND_LIMITS.requestStateBytes) {
      return notRun(
        `${where} sent a requestState of ${Buffer.byteLength(state)} bytes, over the ${INPUT_ROUND_LIMITS.requestStateBytes} bytes this client keeps; the tool did not run.`,
      );
    }
    const entries = Object.entries(plainObject(result.inputRequests) ?? {});
    if (entries.length > INPUT_ROUND_LIMITS.questions) {
      return notRun(
        `${where} asked ${entries.length} questions at once, over the limit of ${INPUT_ROUND_LIMITS.questions}; the tool did not run.`,
      );
    }
    const responses: Record<string, unknown> = {};
    const questions: Record<string, InputRequestEntry> = {};
    for (const [key, raw] of entries) {
      const entry = plainObject(raw);
      const method = typeof entry?.['method'] === 'string' ? entry['method'] : '(no method)';
      const entryParams = plainObject(entry?.['params']);
      const question = { method, ...(entryParams === undefined ? {} : { params: entryParams }) };
      if (method === 'roots/list' && options.roots !== undefined) {
        responses[key] = rootsResult(options.roots());
        tell(round, key, question, 'answered', { by: 'client', name: 'sandbox root' });
      } else if (
        (method === 'elicitation/create' && (entryParams?.['mode'] ?? 'form') === 'form') ||
        (method === 'sampling/createMessage' && handler.offersSampling === true)
      ) {
        questions[key] = question;
      } else {
        const byPolicy = handler.refusal?.(method, options.serverName);
        const text = byPolicy ?? refusalText(where, method);
        tell(
          round,
          key,
          question,
          'refused',
          { by: byPolicy === undefined ? 'client' : 'policy' },
          {
            reason: text,
          },
        );
        return notRun(text);
      }
    }
    let echoed = state;
    if (Object.keys(questions).length > 0) {
      const asked: InputRequestRound = {
        serverName: options.serverName,
        toolName: options.toolName,
        questions,
        ...(state === undefined ? {} : { requestState: state }),
        round,
      };
      let answer;
      try {
        answer = await handler(asked);
      } catch (error) {
        const each = (outcome: InputQuestionOutcome['outcome'], source: InputAnswerSource) => {
          for (const [key, entry] of Object.entries(questions)) {
            tell(round, key, entry, outcome, source, {
              ...(outcome === 'asked' ? {} : { reason: errorMessage(error) }),
            });
          }
        };
        if (AgentsError.hasCode(error, AgentsErrorCode.PolicyDenied)) {
          const by = error.details['decidedBy'];
          const declined = error.details['declined'] === true;
          // A person declined, the model failed to answer, or the policy refused.
          each(declined ? 'declined' : 'refused', {
            by: declined ? 'person' : by === 'model' ? 'model' : 'policy',
            ...(typeof by === 'string' && by !== 'model' ? { name: by } : {}),
          });
          return notRun(error.message);
        }
        // LangGraph's interrupt (by name: this layer does not import LangGraph): the run pauses
        // until a person answers; the resumed run asks again and records the answer.
        if (isInterrupt(error)) each('asked', { by: 'person' });
        throw error;
      }
      // Only answers to what was asked: a resume value naming other keys adds nothing.
      for (const [key, entry] of Object.entries(questions)) {
        if (!(key in answer.responses)) continue;
        const response = answer.responses[key];
        responses[key] = response;
        const source = answer.sources?.[key] ?? { by: 'person' };
        const action = plainObject(response)?.['action'];
        const model = plainObject(response)?.['model'];
        tell(
          round,
          key,
          entry,
          action === 'decline' || action === 'cancel' ? 'declined' : 'answered',
          source,
          {
            ...(typeof action === 'string' ? { action } : {}),
            ...(typeof model === 'string' ? { model } : {}),
          },
        );
      }
      echoed = answer.requestState ?? state;
    } else if (entries.length === 0) {
      // A requestState-only round (the server sheds load): a short pause before retrying.
      await sleep(250, undefined, options.signal === undefined ? {} : { signal: options.signal });
    }
    params = {
      ...base,
      ...(Object.keys(responses).length === 0 ? {} : { inputResponses: responses }),
      ...(echoed === undefined ? {} : { requestState: echoed }),
    };
  }
}

/**
 * The policy's refusal when a server answered -32021 (a client capability it needs is missing)
 * for a capability the handler withheld on purpose; undefined for any other error.
 */
function withheldCapability(
  error: unknown,
  handler: InputRequestHandler,
  serverName: string,
  where: string,
): { method: string; text: string; source: InputAnswerSource } | undefined {
  if (!AgentsError.hasCode(error, AgentsErrorCode.ToolCallFailed)) return undefined;
  if (error.details['mcpErrorCode'] !== MISSING_CLIENT_CAPABILITY) return undefined;
  const data = plainObject(plainObject(error.cause)?.['data']);
  const missing = plainObject(data?.['requiredCapabilities']) ?? {};
  // Without the data, the message still names what is missing.
  if (!('sampling' in missing) && !/sampling/i.test(error.message)) return undefined;
  const method = 'sampling/createMessage';
  const byPolicy = handler.refusal?.(method, serverName);
  return byPolicy === undefined
    ? { method, text: refusalText(where, method), source: { by: 'client' } }
    : { method, text: byPolicy, source: { by: 'policy' } };
}

function isInterrupt(error: unknown): boolean {
  const name = (error as { name?: unknown } | undefined)?.name;
  return name === 'GraphInterrupt' || name === 'NodeInterrupt';
}

function rootsResult(paths: string[]): { roots: Array<{ uri: string; name: string }> } {
  return { roots: paths.map((path) => ({ uri: pathToFileURL(path).href, name: basename(path) })) };
}

function refusalText(where: string, method: string): string {
  const what =
    method === 'sampling/createMessage'
      ? 'sampling (an LLM completion from the client), which nobody here can answer for this call'
      : method === 'elicitation/create'
        ? 'a URL-mode elicitation, which this client does not offer (form elicitation only)'
        : method === 'roots/list'
          ? 'the client roots, which this client offers only with a sandbox'
          : `"${method.slice(0, 80)}", which this client does not know`;
  return `${where} asked for ${what}; the call was not run. Use another tool, or run the server where it does not need this.`;
}

function notRun(text: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text }] };
}

function plainObject(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}
