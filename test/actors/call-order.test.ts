import { AIMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import type { BaseMessage } from '@langchain/core/messages';
import { describe, expect, it } from 'vitest';
import { inCallOrder } from '../../src/actors/call-grouping.js';

/*
 * What the actor's model gets (issue 37): a grouped task's ToolMessages stand at its first call
 * in the state; the model gets every turn's answers in its own call order.
 */

const turn = (...ids: string[]) =>
  new AIMessage({
    content: '',
    tool_calls: ids.map((id) => ({ id, name: 't', args: {}, type: 'tool_call' as const })),
  });
const answer = (id: string) => new ToolMessage({ tool_call_id: id, content: id });
const ids = (messages: BaseMessage[]) =>
  messages.map((m) => (ToolMessage.isInstance(m) ? m.tool_call_id : m.getType()));

describe('inCallOrder', () => {
  it("puts each turn's answers in the model's call order", () => {
    const state = [
      new HumanMessage('go'),
      turn('r1', 'w1', 'r2', 'w2'),
      answer('r1'),
      answer('r2'),
      answer('w1'),
      answer('w2'),
      turn('a', 'b'),
      answer('b'),
      answer('a'),
      new AIMessage('done'),
    ];
    expect(ids(inCallOrder(state))).toEqual([
      'human',
      'ai',
      'r1',
      'w1',
      'r2',
      'w2',
      'ai',
      'a',
      'b',
      'ai',
    ]);
    // The state itself is left as it is.
    expect(ids(state).slice(2, 6)).toEqual(['r1', 'r2', 'w1', 'w2']);
  });

  it('returns the same array when nothing is out of order, and keeps unknown ids last', () => {
    const ordered = [turn('a', 'b'), answer('a'), answer('b')];
    expect(inCallOrder(ordered)).toBe(ordered);
    expect(ids(inCallOrder([turn('a', 'b'), answer('x'), answer('b'), answer('a')]))).toEqual([
      'ai',
      'a',
      'b',
      'x',
    ]);
  });
});
