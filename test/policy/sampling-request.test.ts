import { describe, expect, it } from 'vitest';
import {
  SAMPLING_LIMITS,
  readSamplingRequest,
  renderSamplingRequest,
  samplingResult,
} from '../../src/policy/sampling-request.js';

// A server's sampling request is untrusted: what a person sees and the model gets is bounded.
describe('readSamplingRequest', () => {
  it('keeps text only, drops tools, strips invisible characters and caps sizes and maxTokens', () => {
    const many = Array.from({ length: SAMPLING_LIMITS.messages + 5 }, (_, index) => ({
      role: index % 2 === 0 ? 'user' : 'assistant',
      content: { type: 'text', text: `m${index} ${'x'.repeat(SAMPLING_LIMITS.messageChars)}` },
    }));
    const request = readSamplingRequest({
      systemPrompt: `obey\u202E me ${'y'.repeat(10_000)}`,
      messages: [
        ...many,
        {
          role: 'user',
          content: [
            { type: 'image', data: 'AAAA', mimeType: 'image/png' },
            { type: 'text', text: 'last' },
          ],
        },
      ],
      tools: [{ name: 'exfiltrate', inputSchema: { type: 'object' } }],
      maxTokens: 1_000_000,
    });
    // The newest messages are kept, up to the size budget.
    expect(request.messages.at(-1)?.text).toBe('[image content omitted]\nlast');
    expect(request.messages.length).toBeLessThan(SAMPLING_LIMITS.messages);
    const total = request.messages.reduce((sum, message) => sum + message.text.length, 0);
    expect(total).toBeLessThanOrEqual(SAMPLING_LIMITS.totalChars + request.messages.length * 60);
    expect(request.systemPrompt?.length).toBeLessThanOrEqual(
      SAMPLING_LIMITS.systemPromptChars + 60,
    );
    expect(request.systemPrompt).not.toContain('\u202E');
    expect(request.maxTokens).toBe(SAMPLING_LIMITS.maxTokens);
    expect(request.omitted).toEqual(
      expect.arrayContaining([
        '6 earlier messages',
        'image content',
        'tools',
        'earlier text over the size limit',
      ]),
    );
    expect(renderSamplingRequest(request)).toContain('(left out:');
  });

  it('reads garbage as an empty request instead of throwing', () => {
    expect(readSamplingRequest({ messages: 'nope', maxTokens: -3 })).toEqual({
      messages: [],
      maxTokens: SAMPLING_LIMITS.maxTokens,
      omitted: [],
    });
  });

  it('answers with a well-formed CreateMessageResult, capped', () => {
    expect(samplingResult('hi', 'person')).toEqual({
      role: 'assistant',
      content: { type: 'text', text: 'hi' },
      model: 'person',
      stopReason: 'endTurn',
    });
    const long = samplingResult('z'.repeat(SAMPLING_LIMITS.answerChars + 1), 'm');
    expect(long.content.text).toHaveLength(SAMPLING_LIMITS.answerChars);
    expect(long.stopReason).toBe('maxTokens');
  });
});
