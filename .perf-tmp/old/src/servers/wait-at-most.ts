/**
 * Waits for `promise` to settle or for `ms` to pass, whichever comes first, and resolves either
 * way (a rejection counts as settled). The timer is cleared when the wait ends, so a bounded wait
 * never leaves a timer behind that keeps the process alive after a `close()` has resolved.
 */
export async function waitAtMost(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      promise.then(
        () => undefined,
        () => undefined,
      ),
      new Promise<void>((resolve) => {
        // Not unref'd: a bounded shutdown must finish even when nothing else keeps the loop alive.
        timer = setTimeout(resolve, ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
