import { AIMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import { describe, expect, it } from 'vitest';
import { formatActivity, stepActivity } from '../../src/thread/step-activity.js';

describe('stepActivity', () => {
  const prompt = new HumanMessage('write the files');
  const call = new AIMessage({
    content: '',
    tool_calls: [
      { id: '1', name: 'write_file', args: {} },
      { id: '2', name: 'read_file', args: {} },
    ],
  });
  const result = new ToolMessage({ content: 'ok', tool_call_id: '1', name: 'write_file' });

  it('reads what a step added beyond its parent: prompt, calls, results, answer', () => {
    expect(stepActivity({ messages: [prompt] }, { messages: [] })).toEqual({
      prompt: 'write the files',
    });
    expect(stepActivity({ messages: [prompt, call] }, { messages: [prompt] })).toEqual({
      tools: ['write_file', 'read_file'],
    });
    expect(
      stepActivity({ messages: [prompt, call, result] }, { messages: [prompt, call] }),
    ).toEqual({ ran: ['write_file'] });
    const answer = new AIMessage('all written');
    expect(formatActivity(stepActivity({ messages: [prompt, answer] }, undefined))).toBe(
      'prompt "write the files"; answer "all written"',
    );
  });

  it('says "-" for a step without messages and clips long text to one line', () => {
    expect(formatActivity(stepActivity({}, {}))).toBe('-');
    const long = new HumanMessage(`line one\n${'x'.repeat(100)}`);
    const shown = formatActivity(stepActivity({ messages: [long] }, undefined), 20);
    expect(shown).toBe('prompt "line one xxxxxxxxxx…"');
  });
});
