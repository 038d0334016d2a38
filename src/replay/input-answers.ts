/**
 * The answers a recording gave to servers' questions (MCP 2026-07-28 `input_required`), for a
 * replay to give again. A cassette records them on each call's `call` entry (`answers`): the
 * replay answers with those, and the call sent again with the answer must then match the
 * recorded retry (its `inputResponses`), so an answer edited in either place diverges. A
 * cassette written before `answers` existed is answered with what the recorded retry carried.
 */
import { answerInputRequest } from '../policy/input-answer.js';
import type { ElicitAnswer, InputRequestPreview } from '../policy/input-requests.js';
import type { Cassette, McpExchangeEntry, RecordedAnswer } from './cassette.js';

/** What one recorded answer (as sent in `inputResponses`) says, as the answer a person gives. */
function toElicitAnswer(question: InputRequestPreview['questions'][number], sent: unknown) {
  const value = (sent ?? {}) as { action?: unknown; content?: unknown };
  if (question.method === 'sampling/createMessage') {
    // A completion is sent as a sampling result; a person gave it as the form's `text`.
    const content = value.content as { text?: unknown } | undefined;
    return typeof content?.text === 'string'
      ? ({ action: 'accept', content: { text: content.text } } satisfies ElicitAnswer)
      : undefined;
  }
  if (value.action !== 'accept' && value.action !== 'decline' && value.action !== 'cancel') {
    return undefined;
  }
  return {
    action: value.action,
    ...(typeof value.content === 'object' && value.content !== null
      ? { content: value.content as Record<string, unknown> }
      : {}),
  } satisfies ElicitAnswer;
}

/** The resume value answering every question of `preview` from `sent`; undefined: it cannot. */
function resumeValueOf(preview: InputRequestPreview, sent: Record<string, unknown>): unknown {
  const responses: Record<string, ElicitAnswer> = {};
  for (const question of preview.questions) {
    const answer = toElicitAnswer(question, sent[question.key]);
    if (answer === undefined) return undefined;
    responses[question.key] = answer;
  }
  return answerInputRequest(preview, responses);
}

/**
 * An earlier round's recorded answer as a resume value, without that round's preview: a
 * sampling result (`role`, `content.text`) was a completion, anything else a form's answer.
 */
function resumeValueOfEarlier(sent: Record<string, unknown>): unknown {
  const responses: Record<string, ElicitAnswer> = {};
  for (const [key, value] of Object.entries(sent)) {
    const method =
      typeof (value as { role?: unknown } | null)?.role === 'string'
        ? 'sampling/createMessage'
        : 'elicitation/create';
    const answer = toElicitAnswer(
      { key, method } as InputRequestPreview['questions'][number],
      value,
    );
    if (answer === undefined) return undefined;
    responses[key] = answer;
  }
  return { type: 'input', responses };
}

/** Hands out the recorded answers of a cassette, each once, in recorded order. */
export function createRecordedInputAnswers(cassette: Cassette): {
  /** The resume value answering `preview` as recorded; undefined: the recording has none. */
  answerFor(preview: InputRequestPreview): unknown;
  /**
   * The resume values of `preview`'s call for its rounds 1 to `preview.round` (a call waiting
   * at a later round is asked its earlier rounds again when it runs again); undefined: the
   * recording has not all of them.
   */
  answersUpTo(preview: InputRequestPreview): unknown[] | undefined;
} {
  // Each tool call id's answers, its calls in finishing order (a chat reuses ids across turns).
  const byCall = new Map<string, RecordedAnswer[]>();
  for (const entry of cassette.entries) {
    if (entry.kind !== 'call' || entry.answers === undefined) continue;
    const id = entry.toolCallId ?? '';
    byCall.set(id, [...(byCall.get(id) ?? []), ...entry.answers]);
  }
  if (byCall.size > 0) {
    const answerFor = (preview: InputRequestPreview): unknown => {
      const answer = byCall.get(preview.toolCallId ?? '')?.shift();
      return answer === undefined ? undefined : resumeValueOf(preview, answer.responses);
    };
    return {
      answerFor,
      answersUpTo(preview) {
        const queue = byCall.get(preview.toolCallId ?? '') ?? [];
        const earlier: unknown[] = [];
        while (queue[0] !== undefined && queue[0].round < preview.round) {
          earlier.push(resumeValueOfEarlier(queue.shift()!.responses));
        }
        const last = answerFor(preview);
        const values = [...earlier, last];
        return values.length === preview.round && values.every((value) => value !== undefined)
          ? values
          : undefined;
      },
    };
  }
  // Before `answers` were recorded: what the call sent again with the answer carried.
  const retries = cassette.entries
    .filter(
      (entry): entry is McpExchangeEntry =>
        entry.kind === 'mcp' &&
        entry.method === 'tools/call' &&
        typeof (entry.params as { inputResponses?: unknown } | undefined)?.inputResponses ===
          'object',
    )
    .sort((a, b) => a.seq - b.seq);
  const used = new Set<McpExchangeEntry>();
  const answerFor = (preview: InputRequestPreview): unknown => {
    for (const retry of retries) {
      const params = retry.params as { name?: unknown; inputResponses: Record<string, unknown> };
      if (used.has(retry) || retry.server !== preview.serverName) continue;
      if (params.name !== preview.originalName) continue;
      const value = resumeValueOf(preview, params.inputResponses);
      if (value === undefined) continue;
      used.add(retry);
      return value;
    }
    return undefined;
  };
  return {
    answerFor,
    // The retries do not say which round they answered: a first round only.
    answersUpTo: (preview) => {
      const value = preview.round === 1 ? answerFor(preview) : undefined;
      return value === undefined ? undefined : [value];
    },
  };
}
