import { basename } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { AgentsError, AgentsErrorCode } from '../errors.js';
import type {
  InputRequestEntry,
  InputRequestHandler,
  InputRequestRound,
} from '../core/input-requests.js';

/**
 * The multi-round-trip loop of one `tools/call` on a 2026-07-28 server, run by us instead of the
 * SDK's auto-fulfilment so a question can become a LangGraph interrupt: each `input_required`
 * answer is split into what we answer ourselves (`roots/list`: the sandbox root), what we refuse
 * (sampling, URL elicitation: not offered) and what goes to the {@link InputRequestHandler}
 * (form elicitation); then the call is sent again with `inputResponses` and the echoed
 * `requestState`. The server has executed nothing before the last leg, so pausing, resuming
 * from another process and re-sending the first leg all leave the tool run exactly once.
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
}

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
  const where = `Tool "${options.toolName}" on server "${options.serverName}"`;
  let params = base;
  for (let round = 1; ; round++) {
    const result = await leg(params);
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
      if (method === 'roots/list' && options.roots !== undefined) {
        responses[key] = rootsResult(options.roots());
      } else if (method === 'elicitation/create' && (entryParams?.['mode'] ?? 'form') === 'form') {
        questions[key] = { method, ...(entryParams === undefined ? {} : { params: entryParams }) };
      } else {
        return notRun(refusalText(where, method));
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
        answer = await options.handler(asked);
      } catch (error) {
        if (AgentsError.hasCode(error, AgentsErrorCode.PolicyDenied)) return notRun(error.message);
        throw error;
      }
      // Only answers to what was asked: a resume value naming other keys adds nothing.
      for (const key of Object.keys(questions)) {
        if (key in answer.responses) responses[key] = answer.responses[key];
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

function rootsResult(paths: string[]): { roots: Array<{ uri: string; name: string }> } {
  return { roots: paths.map((path) => ({ uri: pathToFileURL(path).href, name: basename(path) })) };
}

function refusalText(where: string, method: string): string {
  const what =
    method === 'sampling/createMessage'
      ? 'sampling (an LLM completion from the client), which this client does not offer to servers in a graph run'
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
