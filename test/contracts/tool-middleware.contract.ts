import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type {
  ToolCallHandler,
  ToolCallRequest,
  ToolMiddleware,
} from '../../src/core/tool-middleware.js';
import type { ToolResult } from '../../src/core/tool-descriptor.js';

/** One middleware under test, with requests it lets through and (optionally) one it refuses. */
export interface ToolMiddlewareSubject {
  middleware: ToolMiddleware;
  /** A fresh request the middleware lets through to `next`. */
  allowed: (signal: AbortSignal) => ToolCallRequest;
  /** A fresh request the middleware refuses without calling `next`, when it refuses any. */
  refused?: (signal: AbortSignal) => ToolCallRequest;
  /** The `_meta` key of the record a refusal carries (e.g. `agents/policy`). */
  refusalMetaKey?: string;
  /** Frees what `create` made (sandboxes, audit logs). */
  close?(): Promise<void>;
}

/** Freezes a value and everything in it, so a middleware that mutates it throws. */
function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    // An AbortSignal is the caller's to abort; freezing it would be a test artefact.
    if (value instanceof AbortSignal) return value;
    Object.freeze(value);
    for (const item of Object.values(value as Record<string, unknown>)) deepFreeze(item);
  }
  return value;
}

/** A `next` that records each request and answers with a plain text result. */
function recordingNext(answer: (request: ToolCallRequest) => Promise<ToolResult>): {
  next: ToolCallHandler;
  calls: ToolCallRequest[];
} {
  const calls: ToolCallRequest[] = [];
  return {
    calls,
    next: (request) => {
      calls.push(request);
      return answer(request);
    },
  };
}

const ok = (): Promise<ToolResult> =>
  Promise.resolve({ content: [{ type: 'text', text: 'next ran' }] });

/**
 * The contract every layer of the tool pipeline keeps (see `src/pipeline/tool-pipeline.ts`):
 * it calls `next` exactly once or refuses with an `isError` result carrying a typed record,
 * never both; it passes the caller's abort signal on; it never mutates the caller's request;
 * it lets an error of `next` reach the caller; and it holds no state between calls that would
 * confuse two calls running at once.
 */
export function describeToolMiddlewareContract(
  name: string,
  create: () => Promise<ToolMiddlewareSubject>,
  options: { refuses: boolean },
): void {
  describe(`ToolMiddleware contract: ${name}`, () => {
    let subject: ToolMiddlewareSubject;
    beforeEach(async () => {
      subject = await create();
    });
    afterEach(async () => {
      await subject.close?.();
    });

    it('calls next exactly once for a call it lets through, passing the signal', async () => {
      const controller = new AbortController();
      const { next, calls } = recordingNext(ok);
      const result = await subject.middleware.wrap(subject.allowed(controller.signal), next);
      expect(calls).toHaveLength(1);
      expect(calls[0]!.context.signal).toBe(controller.signal);
      expect(result.isError ?? false).toBe(false);
    });

    it("does not mutate the caller's request or its arguments", async () => {
      const request = subject.allowed(new AbortController().signal);
      const before = structuredClone({ args: request.args, id: request.descriptor.id });
      deepFreeze(request.args);
      Object.freeze(request);
      Object.freeze(request.context);
      const { next } = recordingNext(ok);
      await subject.middleware.wrap(request, next);
      expect({ args: request.args, id: request.descriptor.id }).toEqual(before);
    });

    it('lets an error thrown by next reach the caller', async () => {
      const failure = new Error('next failed on purpose');
      const { next, calls } = recordingNext(() => Promise.reject(failure));
      await expect(
        subject.middleware.wrap(subject.allowed(new AbortController().signal), next),
      ).rejects.toThrow(/next failed on purpose/);
      expect(calls).toHaveLength(1);
    });

    it('keeps two calls running at once apart (each reaches next once, each gets its result)', async () => {
      const { next, calls } = recordingNext(async (request) => {
        // Yield to the event loop: both calls are then in the chain at the same time.
        await new Promise((resolve) => setImmediate(resolve));
        return { content: [{ type: 'text', text: `for ${request.context.toolCallId ?? ''}` }] };
      });
      const first = subject.allowed(new AbortController().signal);
      const second = subject.allowed(new AbortController().signal);
      const running = [
        subject.middleware.wrap(
          { ...first, context: { ...first.context, toolCallId: 'call-a' } },
          next,
        ),
        subject.middleware.wrap(
          { ...second, context: { ...second.context, toolCallId: 'call-b' } },
          next,
        ),
      ];
      const results = await Promise.all(running);
      expect(calls.map((call) => call.context.toolCallId).sort()).toEqual(['call-a', 'call-b']);
      const texts = results.map((result) =>
        (Array.isArray(result.content) ? result.content : [])
          .map((item) => (item.type === 'text' ? item.text : ''))
          .join(''),
      );
      expect(texts[0]).toContain('for call-a');
      expect(texts[1]).toContain('for call-b');
    });

    if (options.refuses) {
      it('refuses without calling next, with an error result carrying its typed record', async () => {
        expect(subject.refused, 'a subject that refuses gives a refused() request').toBeDefined();
        const request = subject.refused!(new AbortController().signal);
        const { next, calls } = recordingNext(ok);
        const result = await subject.middleware.wrap(request, next);
        expect(calls).toHaveLength(0);
        expect(result.isError).toBe(true);
        expect(result._meta?.[subject.refusalMetaKey ?? '']).toBeDefined();
      });
    }
  });
}
