import { errorMessage } from '../errors.js';

/** Undoes one step of a start (stops a server, closes a file, removes a folder). */
export type Disposer = () => void | Promise<void>;

/**
 * The clean-up of a start, as one stack: each step pushes its disposer once it has succeeded;
 * a failed start and a later stop both unwind the same stack, last step first. So the two can
 * never disagree about what to undo or in which order.
 */
export interface CleanupStack {
  /** Registers the disposer of a step that just succeeded. */
  push(dispose: Disposer): void;
  /** Disposers still to run. */
  readonly size: number;
  /**
   * Runs every disposer, last pushed first, even when some fail, then empties the stack. Throws an
   * `AggregateError` (its message lists each failure) when any failed. Idempotent once empty.
   */
  unwind(what: string): Promise<void>;
}

/** Makes an empty {@link CleanupStack}. */
export function createCleanupStack(): CleanupStack {
  const disposers: Disposer[] = [];
  return {
    push: (dispose) => void disposers.push(dispose),
    get size() {
      return disposers.length;
    },
    async unwind(what) {
      const errors: unknown[] = [];
      // Taken one at a time, so a disposer that pushes (or a second unwind) never runs twice.
      for (let dispose = disposers.pop(); dispose !== undefined; dispose = disposers.pop()) {
        try {
          await dispose();
        } catch (error) {
          errors.push(error);
        }
      }
      if (errors.length > 0) {
        throw new AggregateError(errors, `${what} failed: ${errors.map(errorMessage).join('; ')}`);
      }
    },
  };
}
