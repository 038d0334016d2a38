import { createInterface, type Interface } from 'node:readline';

/**
 * The lines of one input stream (a terminal or a pipe), read by one `node:readline` for the whole
 * command and handed out one at a time: `agents chat` takes its turns and the approval answers
 * of those turns from the same queue, so a prompt never swallows the line meant for the next
 * turn. A wait that is aborted (Ctrl-C) leaves the line it would have taken in the queue.
 */
export interface LineQueue {
  /** The next line, `undefined` once the input has ended; rejects when `signal` aborts. */
  next(signal: AbortSignal): Promise<string | undefined>;
  /** Puts a line back at the front (read ahead to see whether input is left). */
  unshift(line: string): void;
  /** Lines read and not yet taken. */
  readonly buffered: number;
  /** True once the input has ended and every line was taken. */
  readonly ended: boolean;
  /** Stops reading (an editor has the terminal), then goes on. */
  pause(): void;
  resume(): void;
  close(): void;
}

/** A {@link LineQueue} over `input`; nothing is read before the first `next`. */
export function createLineQueue(input: NodeJS.ReadableStream): LineQueue {
  let reader: Interface | undefined;
  const lines: string[] = [];
  let inputEnded = false;
  const waiters = new Set<() => void>();
  const wake = () => {
    for (const waiter of [...waiters]) waiter();
  };
  const open = () => {
    if (reader !== undefined) return;
    reader = createInterface({ input, terminal: false, crlfDelay: Infinity });
    reader.on('line', (line) => {
      lines.push(line);
      wake();
    });
    reader.on('close', () => {
      inputEnded = true;
      wake();
    });
  };
  return {
    async next(signal) {
      open();
      for (;;) {
        const line = lines.shift();
        if (line !== undefined) return line;
        if (inputEnded) return undefined;
        signal.throwIfAborted();
        await new Promise<void>((resolve, reject) => {
          const done = () => {
            waiters.delete(done);
            signal.removeEventListener('abort', onAbort);
            resolve();
          };
          const onAbort = () => {
            waiters.delete(done);
            reject(signal.reason as Error);
          };
          waiters.add(done);
          signal.addEventListener('abort', onAbort, { once: true });
        });
      }
    },
    unshift(line) {
      lines.unshift(line);
    },
    get buffered() {
      return lines.length;
    },
    get ended() {
      return inputEnded && lines.length === 0;
    },
    pause() {
      if (reader === undefined) (input as NodeJS.ReadableStream).pause();
      else reader.pause();
    },
    resume() {
      reader?.resume();
    },
    close() {
      reader?.close();
    },
  };
}
