import { sanitizeDescription } from '../mcp/sanitize.js';

/**
 * A server's `sampling/createMessage` request (2026-07-28 `input_required`), read as the
 * untrusted input it is: text only, sanitized, bounded in count and size, the tools it offers
 * dropped (a completion answered here never uses tools). What a person is shown and what the
 * actor's model is given both come from this one reading.
 */

/** Bounds on what a server may put in front of a person or the model. */
export const SAMPLING_LIMITS = {
  messages: 32,
  messageChars: 8_000,
  totalChars: 32_000,
  systemPromptChars: 4_000,
  /** The completion sent back, whoever wrote it. */
  answerChars: 32_000,
  /** A server asking for more gets no more than this. */
  maxTokens: 4_096,
} as const;

/** One message of a sampling request, as text. */
export interface SamplingMessage {
  role: 'user' | 'assistant';
  text: string;
}

/** A sampling request, bounded (see {@link readSamplingRequest}). */
export interface SamplingRequest {
  messages: SamplingMessage[];
  systemPrompt?: string;
  maxTokens: number;
  /** What was left out: non-text content, tools, messages or text over the bounds. */
  omitted: string[];
}

/** The answer a server gets: an MCP `CreateMessageResult`. */
export interface SamplingResult {
  role: 'assistant';
  content: { type: 'text'; text: string };
  model: string;
  stopReason: 'endTurn' | 'maxTokens';
  [key: string]: unknown;
}

/** Reads the untrusted `params` of a sampling request into a bounded {@link SamplingRequest}. */
export function readSamplingRequest(params: Record<string, unknown> | undefined): SamplingRequest {
  const omitted = new Set<string>();
  const raw = Array.isArray(params?.['messages']) ? (params['messages'] as unknown[]) : [];
  if (raw.length > SAMPLING_LIMITS.messages)
    omitted.add(`${raw.length - SAMPLING_LIMITS.messages} earlier messages`);
  const messages: SamplingMessage[] = [];
  let total = 0;
  // The latest messages matter most: fill the size budget from the end.
  for (const item of raw.slice(-SAMPLING_LIMITS.messages).reverse()) {
    const message = record(item);
    const role = message?.['role'] === 'assistant' ? 'assistant' : 'user';
    const blocks = Array.isArray(message?.['content'])
      ? message['content']
      : [message?.['content']];
    const parts: string[] = [];
    for (const block of blocks as unknown[]) {
      const content = record(block);
      if (content?.['type'] === 'text' && typeof content['text'] === 'string')
        parts.push(content['text']);
      else {
        const type =
          typeof content?.['type'] === 'string' ? content['type'].slice(0, 20) : 'unknown';
        omitted.add(`${type} content`);
        parts.push(`[${type} content omitted]`);
      }
    }
    const room = Math.max(
      0,
      Math.min(SAMPLING_LIMITS.messageChars, SAMPLING_LIMITS.totalChars - total),
    );
    if (room === 0) {
      omitted.add('earlier text over the size limit');
      continue;
    }
    const text = sanitizeDescription(parts.join('\n'), { maxLength: room });
    total += text.length;
    messages.unshift({ role, text });
  }
  if (params?.['tools'] !== undefined || params?.['toolChoice'] !== undefined) omitted.add('tools');
  const system = params?.['systemPrompt'];
  const asked = params?.['maxTokens'];
  const maxTokens =
    typeof asked === 'number' && Number.isInteger(asked) && asked > 0
      ? Math.min(asked, SAMPLING_LIMITS.maxTokens)
      : SAMPLING_LIMITS.maxTokens;
  return {
    messages,
    ...(typeof system === 'string' && system.trim() !== ''
      ? {
          systemPrompt: sanitizeDescription(system, {
            maxLength: SAMPLING_LIMITS.systemPromptChars,
          }),
        }
      : {}),
    maxTokens,
    omitted: [...omitted],
  };
}

/** The request as a person reads it (the server's text, marked as the server's). */
export function renderSamplingRequest(request: SamplingRequest): string {
  const lines = [`The server asks for a completion (at most ${request.maxTokens} tokens).`];
  if (request.systemPrompt !== undefined)
    lines.push(`[system, from the server] ${request.systemPrompt}`);
  for (const message of request.messages) lines.push(`[${message.role}] ${message.text}`);
  if (request.omitted.length > 0) lines.push(`(left out: ${request.omitted.join(', ')})`);
  return lines.join('\n');
}

/** A well-formed `CreateMessageResult` with `text` (capped) written by `model`. */
export function samplingResult(text: string, model: string): SamplingResult {
  const capped = text.length > SAMPLING_LIMITS.answerChars;
  return {
    role: 'assistant',
    content: { type: 'text', text: capped ? text.slice(0, SAMPLING_LIMITS.answerChars) : text },
    model,
    stopReason: capped ? 'maxTokens' : 'endTurn',
  };
}

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}
