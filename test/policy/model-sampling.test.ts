/**
 * The model a sampling result names: the provider's `model` / `modelName`, else the model
 * class's public name (`getName()`), never LangChain's internal `_llmType()`.
 */
import { FakeListChatModel } from '@langchain/core/utils/testing';
import { describe, expect, it } from 'vitest';
import { ScriptedChatModel } from '../../src/actors/scripted-model.js';
import { createModelSampler } from '../../src/policy/model-sampling.js';
import type { SamplingRequest } from '../../src/policy/sampling-request.js';

const request: SamplingRequest = {
  messages: [{ role: 'user', text: 'hello' }],
  maxTokens: 50,
  omitted: [],
};
const origin = { serverName: 'srv', toolName: 'tool' };

describe('createModelSampler', () => {
  it('names the model as its provider reports it', async () => {
    const chat = new ScriptedChatModel({ steps: [{ content: 'written', tool_calls: [] }] });
    const result = await createModelSampler(async () => chat)(request, origin);
    expect(result).toMatchObject({ model: 'scripted', content: { text: 'written' } });
  });

  it("names the model's class when the provider reports no model name", async () => {
    const chat = new FakeListChatModel({ responses: ['written'] });
    const result = await createModelSampler(async () => chat)(request, origin);
    expect(result).toMatchObject({ model: 'FakeListChatModel', content: { text: 'written' } });
  });
});
