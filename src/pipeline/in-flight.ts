import type { ToolMiddleware } from '../core/tool-middleware.js';

/** Counts the tool calls running through a middleware chain, so a shutdown can wait for them. */
export interface InFlightCalls {
  /** Place it outermost: a call counts from entering the chain until every layer is done. */
  readonly middleware: ToolMiddleware;
  /** Calls running now. */
  readonly count: number;
  /**
   * Resolves when no call is running, or after `timeoutMs` (then with `false`): a shutdown waits
   * here before closing what the calls still write to (the audit log, the sandbox).
   */
  idle(timeoutMs?: number): Promise<boolean>;
}

/** Makes an {@link InFlightCalls} counter; it holds no resources. */
export function createInFlightCalls(): InFlightCalls {
  let count = 0;
  let waiters: Array<() => void> = [];
  const settle = (): void => {
    if (--count > 0) return;
    const ready = waiters;
    waiters = [];
    for (const waiter of ready) waiter();
  };
  return {
    middleware: {
      name: 'in-flight',
      async wrap(request, next) {
        count++;
        try {
          return await next(request);
        } finally {
          settle();
        }
      },
    },
    get count() {
      return count;
    },
    idle(timeoutMs) {
      if (count === 0) return Promise.resolve(true);
      return new Promise<boolean>((resolve) => {
        let timer: NodeJS.Timeout | undefined;
        const done = (): void => {
          if (timer !== undefined) clearTimeout(timer);
          resolve(true);
        };
        waiters.push(done);
        if (timeoutMs !== undefined) {
          timer = setTimeout(() => {
            waiters = waiters.filter((waiter) => waiter !== done);
            resolve(false);
          }, timeoutMs);
          timer.unref();
        }
      });
    },
  };
}
