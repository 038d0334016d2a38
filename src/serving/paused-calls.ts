import { randomUUID } from 'node:crypto';

// A served 2026-07-28 call that needs something from its client (an approval, or an upstream
// server's elicitation or sampling) cannot send the client a request: it answers
// `input_required` and the client retries. The call itself keeps running here, paused on the
// question, and the retry (identified by a signed requestState naming the call) delivers the
// answers. Nothing after the question runs before the answer: an approval is asked before the
// tool executes, an upstream question blocks the upstream tool.

/** One question for the client, as it goes into `inputRequests`. */
export interface InputAsk {
  method: 'elicitation/create' | 'sampling/createMessage';
  params: Record<string, unknown>;
}

/** Thrown to a question's asker when the client did not answer in time (or the call ended). */
export class InputNotAnswered extends Error {
  constructor(readonly reason: 'timeout' | 'cancelled') {
    super(reason === 'timeout' ? 'the client did not answer in time' : 'the call was cancelled');
    this.name = 'InputNotAnswered';
  }
}

interface OpenAsk {
  ask: InputAsk;
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

/** What the call's current round ends with: its result, or questions for the client. */
export type RoundOutcome<R> = { done: R } | { asks: Record<string, InputAsk> };

/** A call that may pause for its client's input across several requests. */
export class PausableCall<R> {
  readonly id = randomUUID();
  /** Counts the input_required answers given; a retry must name the current one. */
  round = 0;
  /** True while a request is running a round of this call. */
  answering = false;
  readonly controller = new AbortController();
  /** Sends a notification on the current round's response (dropped between rounds). */
  notify: (notification: { method: string; params: Record<string, unknown> }) => void = () =>
    undefined;
  private readonly open = new Map<string, OpenAsk>();
  private nextKey = 1;
  private wake: (() => void) | undefined;
  private readonly outcome: Promise<R>;
  /** Settles when the call has finished, however. */
  readonly finished: Promise<void>;

  constructor(run: (call: PausableCall<R>) => Promise<R>) {
    this.outcome = run(this);
    this.finished = this.outcome.then(
      () => undefined,
      () => undefined,
    );
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Puts a question to the client; resolves with its (untrusted) answer. */
  ask(ask: InputAsk, timeoutMs: number, signal?: AbortSignal): Promise<unknown> {
    if (this.controller.signal.aborted) {
      return Promise.reject(new InputNotAnswered('cancelled'));
    }
    const key = `q${this.nextKey++}`;
    return new Promise((resolve, reject) => {
      const settle = (): void => {
        clearTimeout(entry.timer);
        this.open.delete(key);
        signal?.removeEventListener('abort', onAbort);
      };
      const onAbort = (): void => {
        settle();
        reject(new InputNotAnswered('cancelled'));
      };
      const entry: OpenAsk = {
        ask,
        resolve: (value) => {
          settle();
          resolve(value);
        },
        reject: (error) => {
          settle();
          reject(error);
        },
        timer: setTimeout(() => entry.reject(new InputNotAnswered('timeout')), timeoutMs),
      };
      entry.timer.unref();
      signal?.addEventListener('abort', onAbort, { once: true });
      this.open.set(key, entry);
      this.wake?.();
    });
  }

  /** Delivers a retry's answers to the questions they name; unknown keys are ignored. */
  answer(responses: Record<string, unknown> | undefined): void {
    if (responses === undefined) return;
    for (const [key, entry] of [...this.open]) {
      if (Object.hasOwn(responses, key)) entry.resolve(responses[key]);
    }
  }

  /**
   * Runs until the call finishes or has open questions. Questions still unanswered after a retry
   * are asked again (the client may have dropped one).
   */
  async next(): Promise<RoundOutcome<R>> {
    if (this.open.size > 0) return { asks: this.openAsks() };
    const posted = new Promise<undefined>((resolve) => {
      this.wake = () => resolve(undefined);
    });
    try {
      const first = await Promise.race([this.outcome.then((done) => ({ done })), posted]);
      return first ?? { asks: this.openAsks() };
    } finally {
      this.wake = undefined;
    }
  }

  /** Ends the call: open questions fail as cancelled and the tool's signal aborts. */
  cancel(): void {
    this.controller.abort();
    for (const entry of [...this.open.values()]) entry.reject(new InputNotAnswered('cancelled'));
  }

  private openAsks(): Record<string, InputAsk> {
    return Object.fromEntries([...this.open].map(([key, entry]) => [key, entry.ask]));
  }
}

/** The paused calls of one serving process, capped so abandoned ones cannot pile up. */
export class PausedCalls<R> {
  private readonly calls = new Map<string, PausableCall<R>>();

  constructor(private readonly max: number) {}

  get size(): number {
    return this.calls.size;
  }

  get(id: string): PausableCall<R> | undefined {
    return this.calls.get(id);
  }

  /** Keeps a call that answered input_required; over the cap the oldest paused call is ended. */
  hold(call: PausableCall<R>): void {
    if (!this.calls.has(call.id)) {
      // A call whose questions timed out finishes unasked; its late retry finds nothing.
      void call.finished.then(() => this.calls.delete(call.id));
    }
    this.calls.delete(call.id);
    this.calls.set(call.id, call);
    while (this.calls.size > this.max) {
      const oldest = this.calls.values().next().value!;
      this.calls.delete(oldest.id);
      oldest.cancel();
    }
  }

  release(call: PausableCall<R>): void {
    this.calls.delete(call.id);
  }

  close(): void {
    for (const call of this.calls.values()) call.cancel();
    this.calls.clear();
  }
}
