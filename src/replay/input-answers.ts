/**
 * The answers a recording gave to servers' questions (MCP 2026-07-28 `input_required`), for a
 * replay to give again: the call sent again with the answer is in the cassette (its
 * `inputResponses`), so a paused question is answered with what that retry carried. The
 * request then matches the recorded retry, and the tool's recorded answer follows.
 */
import { answerInputRequest } from '../policy/input-answer.js';
import type { ElicitAnswer, InputRequestPreview } from '../policy/input-requests.js';
import type { Cassette, McpExchangeEntry } from './cassette.js';

/** What one recorded `inputResponses` value says, as the answer a person gives. */
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

/** Hands out the recorded answers of a cassette's retried calls, each once, in recorded order. */
export function createRecordedInputAnswers(cassette: Cassette): {
  /** The resume value answering `preview` as recorded; undefined: the recording has none. */
  answerFor(preview: InputRequestPreview): unknown;
} {
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
  return {
    answerFor(preview) {
      for (const retry of retries) {
        const params = retry.params as { name?: unknown; inputResponses: Record<string, unknown> };
        if (used.has(retry) || retry.server !== preview.serverName) continue;
        if (params.name !== preview.originalName) continue;
        const responses: Record<string, ElicitAnswer> = {};
        for (const question of preview.questions) {
          const answer = toElicitAnswer(question, params.inputResponses[question.key]);
          if (answer === undefined) break;
          responses[question.key] = answer;
        }
        if (Object.keys(responses).length !== preview.questions.length) continue;
        used.add(retry);
        return answerInputRequest(preview, responses);
      }
      return undefined;
    },
  };
}
