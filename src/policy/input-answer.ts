/**
 * Building the answer to a server's questions, apart from `input-requests.ts` (which loads
 * LangGraph for `interrupt()` and zod for the resume schemas): the CLI answers on every
 * `actor resume` and must not load either to start (issue 29).
 */
import type { ElicitAnswer, InputRequestPreview, InputResponse } from './input-requests.js';

/** The resume value answering `preview` with these answers (by question key). */
export function answerInputRequest(
  preview: InputRequestPreview,
  responses: Record<string, ElicitAnswer>,
  by?: string,
): InputResponse {
  return {
    type: 'input',
    responses,
    ...(preview.requestState === undefined ? {} : { requestState: preview.requestState }),
    ...(by === undefined ? {} : { by }),
  };
}
