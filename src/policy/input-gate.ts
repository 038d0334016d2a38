import { AgentsError, AgentsErrorCode } from '../errors.js';
import {
  describeInputHandler,
  type InputAnswerSource,
  type InputRequestAnswer,
  type InputRequestEntry,
  type InputRequestHandler,
  type InputRequestRound,
} from '../core/input-requests.js';
import type { ClientRequestPolicy } from '../config/policy-schema.js';
import type { Sampler } from './model-sampling.js';
import { readSamplingRequest } from './sampling-request.js';

/** Options of {@link gateInputRequests}. */
export interface InputGateOptions {
  /** The policy's name, for refusals (e.g. `actor "coder"`). */
  policyName: string;
  /** The tool being called (its name as the model sees it). */
  toolName: string;
  rules: ClientRequestPolicy;
  /** Writes completions for `sampling: model` (the actor's chat model). */
  sampler?: Sampler;
  signal?: AbortSignal;
}

/**
 * The policy's `clientRequests` in front of whoever answers a 2026-07-28 server's questions
 * (`base`: in a graph run, the LangGraph interrupt that asks a person):
 * - `elicitation: deny` refuses a round with a form in it; otherwise the form goes to `base`.
 * - `sampling: deny` withholds the capability (not declared in `_meta`) and names the policy
 *   key if the server asks anyway; `allow` / `ask` put the request to a person through `base`;
 *   `model` has `sampler` (the actor's model) write the completion, and falls back to a person
 *   when there is no model.
 * With `model`, a round that also holds a form asks the model again when the run resumes after
 * the person's answer (the resumed call replays the round; the tool still runs once).
 */
export function gateInputRequests(
  base: InputRequestHandler,
  options: InputGateOptions,
): InputRequestHandler {
  const { rules, policyName, toolName } = options;
  const byModel = rules.sampling === 'model' && options.sampler !== undefined;
  const offersSampling = rules.sampling !== 'deny' && (byModel || base.offersSampling === true);
  const refused = (text: string, serverName: string): AgentsError =>
    new AgentsError(AgentsErrorCode.PolicyDenied, text, {
      details: { serverName, decidedBy: policyName },
    });
  const answer = async (round: InputRequestRound): Promise<InputRequestAnswer> => {
    const entries = Object.entries(round.questions);
    if (
      rules.elicitation === 'deny' &&
      entries.some(([, q]) => q.method === 'elicitation/create')
    ) {
      throw refused(
        `Refused by ${policyName}: server "${round.serverName}" asked a question (elicitation) ` +
          `before running tool "${toolName}", and clientRequests.elicitation is deny; the tool did not run.`,
        round.serverName,
      );
    }
    const toModel = byModel ? entries.filter(([, q]) => q.method === 'sampling/createMessage') : [];
    const rest = entries.filter(([key]) => !toModel.some(([modelKey]) => modelKey === key));
    const responses: Record<string, unknown> = {};
    const sources: Record<string, InputAnswerSource> = {};
    for (const [key, question] of toModel) {
      const result = await options.sampler!(readSamplingRequest(question.params), {
        serverName: round.serverName,
        toolName,
        ...(options.signal === undefined ? {} : { signal: options.signal }),
      });
      responses[key] = result;
      sources[key] = { by: 'model', name: result.model };
    }
    if (rest.length === 0) {
      return {
        responses,
        ...(round.requestState === undefined ? {} : { requestState: round.requestState }),
        sources,
      };
    }
    const asked = await base({
      ...round,
      questions: Object.fromEntries(rest) as Record<string, InputRequestEntry>,
    });
    return {
      ...asked,
      responses: { ...asked.responses, ...responses },
      sources: { ...asked.sources, ...sources },
    };
  };
  return describeInputHandler(answer, {
    offersSampling,
    refusal: (method, serverName) =>
      method === 'sampling/createMessage' && rules.sampling === 'deny'
        ? `Refused by ${policyName}: server "${serverName}" asked for sampling (a completion ` +
          `from this client's model) before running tool "${toolName}", and ` +
          'clientRequests.sampling is deny; the tool did not run.'
        : undefined,
  });
}
