import { interrupt, isGraphInterrupt } from '@langchain/langgraph';
import { z } from 'zod';
import { AgentsError, AgentsErrorCode, errorMessage } from '../errors.js';
import {
  describeInputHandler,
  type InputAnswerSource,
  type InputRequestAnswer,
  type InputRequestHandler,
  type InputRequestRound,
} from '../core/input-requests.js';
import type { ToolDescriptor } from '../core/tool-descriptor.js';
import { sanitizeDescription } from '../mcp/sanitize.js';
import { deferPauseIfGrouped } from './pause-deferral.js';
import { readSamplingRequest, renderSamplingRequest, samplingResult } from './sampling-request.js';
import type { SamplingMessage } from './sampling-request.js';

/** Marks an interrupt value as questions of a tool's server (so UIs and the CLI can recognise it). */
export const INPUT_REQUEST_KIND = 'agents/tool-input';

/**
 * One question of an {@link InputRequestPreview}: a form the server wants filled in, or a
 * completion it wants written (sampling), shown as a one-field form (`text`) so every UI and
 * `actor resume --answer '{"text":"..."}'` answer it like any form.
 */
export interface InputQuestion {
  /** The key the answer goes under (`inputResponses[key]`). */
  key: string;
  method: 'elicitation/create' | 'sampling/createMessage';
  /** The server's message (for sampling: its messages rendered), sanitized and capped. */
  message: string;
  /** The flat JSON Schema of the form (properties of primitive types), as the server sent it. */
  requestedSchema: Record<string, unknown>;
  /** For sampling: the request, bounded and sanitized (text only, no tools). */
  sampling?: { messages: SamplingMessage[]; systemPrompt?: string; maxTokens: number };
}

/** The form a person answers a sampling question with. */
const COMPLETION_FORM = {
  type: 'object',
  properties: { text: { type: 'string', title: 'Completion to send back' } },
  required: ['text'],
} as const;

/**
 * What a human sees when a 2026-07-28 server asks something before running a tool (an
 * `input_required` round): the value of the LangGraph interrupt, shaped like the approval
 * preview (`toolId`, `serverName`, `args`, `toolCallId`). `requestState` is the server's opaque
 * state for the round: kept here, so in the checkpoint, and echoed with the answers on resume.
 */
export interface InputRequestPreview {
  kind: typeof INPUT_REQUEST_KIND;
  toolId: string;
  toolName: string;
  originalName: string;
  serverName: string;
  args: Record<string, unknown>;
  toolCallId?: string;
  questions: InputQuestion[];
  requestState?: string;
  round: number;
  /** The answers the resume value may carry, per question. */
  allowedResponses: Array<'accept' | 'decline' | 'cancel'>;
}

const MAX_MESSAGE = 2_000;
const MAX_SCHEMA_BYTES = 16 * 1024;

/** True when an interrupt value is one of our input-request previews. */
export function isInputRequestPreview(value: unknown): value is InputRequestPreview {
  return (
    typeof value === 'object' &&
    value !== null &&
    'kind' in value &&
    value.kind === INPUT_REQUEST_KIND
  );
}

/** Builds the preview of one round (messages sanitized, schemas capped). */
export function toInputRequestPreview(
  descriptor: ToolDescriptor,
  args: Record<string, unknown>,
  round: InputRequestRound,
  toolCallId?: string,
): InputRequestPreview {
  const questions: InputQuestion[] = Object.entries(round.questions).map(([key, entry]) => {
    if (entry.method === 'sampling/createMessage') {
      const request = readSamplingRequest(entry.params);
      return {
        key,
        method: 'sampling/createMessage',
        message: renderSamplingRequest(request),
        requestedSchema: structuredClone(COMPLETION_FORM) as unknown as Record<string, unknown>,
        sampling: {
          messages: request.messages,
          ...(request.systemPrompt === undefined ? {} : { systemPrompt: request.systemPrompt }),
          maxTokens: request.maxTokens,
        },
      };
    }
    const params = entry.params ?? {};
    const message = typeof params['message'] === 'string' ? params['message'] : '';
    const schema = params['requestedSchema'];
    const fits =
      typeof schema === 'object' &&
      schema !== null &&
      JSON.stringify(schema).length <= MAX_SCHEMA_BYTES;
    return {
      key,
      method: 'elicitation/create',
      message: sanitizeDescription(message, { maxLength: MAX_MESSAGE }),
      requestedSchema: fits ? (schema as Record<string, unknown>) : { type: 'object' },
    };
  });
  return {
    kind: INPUT_REQUEST_KIND,
    toolId: descriptor.id,
    toolName: descriptor.name,
    originalName: descriptor.originalName,
    serverName: round.serverName,
    args,
    ...(toolCallId === undefined ? {} : { toolCallId }),
    questions,
    ...(round.requestState === undefined ? {} : { requestState: round.requestState }),
    round: round.round,
    allowedResponses: ['accept', 'decline', 'cancel'],
  };
}

const ElicitAnswerSchema = z.object({
  action: z.enum(['accept', 'decline', 'cancel']),
  content: z.record(z.string(), z.unknown()).optional(),
});
/** One answer to one question: an MCP `ElicitResult`. */
export type ElicitAnswer = z.infer<typeof ElicitAnswerSchema>;

/**
 * A human's answer to an {@link InputRequestPreview}: the `resume` value of `Command({ resume })`.
 * `responses` by question key; `requestState` copied from the preview (the CLI and
 * {@link answerInputRequest} do); `by` names who answered. A bare `{ action, content? }` answers
 * every question of the round alike (handy in Studio for the usual single question).
 */
export const InputResponseSchema = z.object({
  type: z.literal('input'),
  responses: z.record(z.string(), ElicitAnswerSchema),
  requestState: z.string().optional(),
  by: z.string().optional(),
});
/** See {@link InputResponseSchema}. */
export type InputResponse = z.infer<typeof InputResponseSchema>;

/**
 * Reads a resume value into the answers for `round`. `undefined` when it is not understood (the
 * caller refuses the call: a garbled answer is no consent to anything). Sampling answers stay
 * as given here ({@link createInterruptInputHandler} turns them into `CreateMessageResult`s).
 */
export function parseInputResponse(
  value: unknown,
  round: InputRequestRound,
): InputRequestAnswer | undefined {
  const full = InputResponseSchema.safeParse(value);
  if (full.success) {
    const source: InputAnswerSource = {
      by: 'person',
      ...(full.data.by === undefined ? {} : { name: full.data.by }),
    };
    return {
      responses: full.data.responses,
      ...(full.data.requestState === undefined ? {} : { requestState: full.data.requestState }),
      sources: Object.fromEntries(Object.keys(full.data.responses).map((key) => [key, source])),
    };
  }
  const bare = ElicitAnswerSchema.safeParse(value);
  if (!bare.success) return undefined;
  return {
    responses: Object.fromEntries(Object.keys(round.questions).map((key) => [key, bare.data])),
  };
}

/**
 * The person's answers to the sampling questions of `round` as `CreateMessageResult`s (model
 * `person`). A decline, a cancel or an answer without text ends the call: sampling has no
 * "declined" answer to send back, and the tool has not run.
 */
function withCompletions(
  answer: InputRequestAnswer,
  round: InputRequestRound,
  toolId: string,
): InputRequestAnswer {
  const responses = { ...answer.responses };
  for (const [key, entry] of Object.entries(round.questions)) {
    if (entry.method !== 'sampling/createMessage' || !(key in responses)) continue;
    const given = ElicitAnswerSchema.safeParse(responses[key]);
    const text = given.success ? given.data.content?.['text'] : undefined;
    const by = answer.sources?.[key]?.name;
    if (
      !given.success ||
      given.data.action !== 'accept' ||
      typeof text !== 'string' ||
      text === ''
    ) {
      throw new AgentsError(
        AgentsErrorCode.PolicyDenied,
        `Declined by ${by ?? 'the user'}: server "${round.serverName}" asked for a completion ` +
          `(sampling) before running ${toolId}; the tool did not run.`,
        { details: { toolId, declined: true, ...(by === undefined ? {} : { decidedBy: by }) } },
      );
    }
    responses[key] = samplingResult(text, 'person');
  }
  return { ...answer, responses };
}

/**
 * The handler for graph runs: each round becomes a LangGraph `interrupt()` with an
 * {@link InputRequestPreview}; the run pauses (checkpointed, requestState included) and, on
 * resume (in this or another process), the call is sent again and `interrupt` returns the
 * answer. Outside a graph with a checkpointer the questions are refused (`POLICY_DENIED`).
 */
export function createInterruptInputHandler(
  descriptor: ToolDescriptor,
  args: Record<string, unknown>,
  toolCallId?: string,
): InputRequestHandler {
  // A person can write a completion too; the policy's gate decides whether they are asked to.
  return describeInputHandler(ask, { offersSampling: true });
  function ask(round: InputRequestRound): InputRequestAnswer {
    const preview = toInputRequestPreview(descriptor, args, round, toolCallId);
    // Inside a task of grouped calls the question waits until this call runs alone.
    deferPauseIfGrouped(`Question of server "${round.serverName}" for ${descriptor.id}`);
    let raw: unknown;
    try {
      raw = interrupt(preview);
    } catch (error) {
      if (isGraphInterrupt(error)) throw error;
      throw new AgentsError(
        AgentsErrorCode.PolicyDenied,
        `Server "${round.serverName}" asked a question before running ${descriptor.id}, but it ` +
          `could not be put to a person: ${errorMessage(error)}. Run the tool inside a LangGraph ` +
          'graph compiled with a checkpointer; the tool did not run.',
        { cause: error, details: { toolId: descriptor.id } },
      );
    }
    const answer = parseInputResponse(raw, round);
    if (answer === undefined) {
      throw new AgentsError(
        AgentsErrorCode.PolicyDenied,
        `The answer to the question of server "${round.serverName}" for ${descriptor.id} was not ` +
          'understood (expected { type: "input", responses: { KEY: { action, content } } } or ' +
          '{ action, content }); the tool did not run.',
        { details: { toolId: descriptor.id } },
      );
    }
    return withCompletions(answer, round, descriptor.id);
  }
}

/** A handler that refuses every question (policy `clientRequests.elicitation: deny`). */
export function refusingInputHandler(policyName: string, toolName: string): InputRequestHandler {
  return (round) => {
    throw new AgentsError(
      AgentsErrorCode.PolicyDenied,
      `Refused by ${policyName}: server "${round.serverName}" asked a question (elicitation) ` +
        `before running tool "${toolName}", and clientRequests.elicitation is deny; the tool did not run.`,
      { details: { serverName: round.serverName } },
    );
  };
}
