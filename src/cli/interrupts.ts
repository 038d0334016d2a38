/**
 * Lets one command take Ctrl-C from the binary's default (abort the command, again to force):
 * `agents chat` stops the current turn on the first and leaves on the second. The handler
 * returns true when it took the signal; false hands it back to the default.
 */
type InterruptHandler = () => boolean;

let handler: InterruptHandler | undefined;

/** Takes SIGINT while the returned function is not called. */
export function takeInterrupts(take: InterruptHandler): () => void {
  handler = take;
  return () => {
    if (handler === take) handler = undefined;
  };
}

/** Called by the binary on SIGINT: true when a command took it. */
export function interruptTaken(): boolean {
  return handler?.() ?? false;
}
