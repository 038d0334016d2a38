import { describe, expect, it } from 'vitest';
import type { InputNotAnswered } from '../../src/serving/paused-calls.js';
import { PausableCall, PausedCalls } from '../../src/serving/paused-calls.js';

const question = { method: 'elicitation/create' as const, params: { message: 'ok?' } };

describe('paused calls (2026-07-28 input_required rounds)', () => {
  it('pauses on a question, resumes with the answer, and finishes with the result', async () => {
    const call = new PausableCall<string>(async (self) => {
      const answer = await self.ask(question, 60_000);
      return `answered ${JSON.stringify(answer)}`;
    });
    const first = await call.next();
    expect(first).toEqual({ asks: { q1: question } });
    // A retry without the answer is asked again; an unknown key is ignored.
    call.answer({ nope: 1 });
    expect(await call.next()).toEqual({ asks: { q1: question } });
    call.answer({ q1: { action: 'accept' } });
    expect(await call.next()).toEqual({ done: 'answered {"action":"accept"}' });
  });

  it('fails an unanswered question after its timeout, and a cancelled call aborts its signal', async () => {
    const timedOut = new PausableCall<string>(async (self) => {
      try {
        await self.ask(question, 5);
        return 'answered';
      } catch (error) {
        return (error as InputNotAnswered).reason;
      }
    });
    await timedOut.finished;
    expect(await timedOut.next()).toEqual({ done: 'timeout' });

    const cancelled = new PausableCall<string>(async (self) => {
      await self.ask(question, 60_000).catch(() => undefined);
      return self.signal.aborted ? 'aborted' : 'running';
    });
    await cancelled.next();
    cancelled.cancel();
    expect(await cancelled.next()).toEqual({ done: 'aborted' });
  });

  it('keeps at most the cap: holding one more ends the oldest paused call', async () => {
    const paused = new PausedCalls<string>(2);
    const make = () =>
      new PausableCall<string>(async (self) => {
        await self.ask(question, 60_000).catch(() => undefined);
        return self.signal.aborted ? 'ended' : 'answered';
      });
    const calls = [make(), make(), make()];
    for (const call of calls) {
      await call.next();
      paused.hold(call);
    }
    expect(paused.size).toBe(2);
    expect(paused.get(calls[0]!.id)).toBeUndefined();
    expect(await calls[0]!.next()).toEqual({ done: 'ended' });
    // A finished call leaves on its own.
    calls[1]!.answer({ q1: {} });
    await calls[1]!.finished;
    await Promise.resolve();
    expect(paused.get(calls[1]!.id)).toBeUndefined();
    paused.close();
    expect(await calls[2]!.next()).toEqual({ done: 'ended' });
  });
});
