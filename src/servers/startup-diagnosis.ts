import { AgentsErrorCode, ServerError } from '../errors.js';
import type { ServerErrorDetails } from '../errors.js';
import type { StdioTransport } from './stdio-transport-types.js';

/**
 * How long a server may keep printing non-protocol text on stdout, without sending one JSON-RPC
 * message, before start gives up. A banner followed by the handshake answers within
 * milliseconds; a program that is not an MCP server (or logs to stdout and waits for flags)
 * never does, and waiting the whole startup timeout would blame a slow start.
 */
export const STRAY_OUTPUT_GRACE_MS = 1_500;

/** Pipe errors that mean "the child went away", which its exit status explains better. */
const PIPE_ERROR_CODES = new Set(['EPIPE', 'ECONNRESET', 'ERR_STREAM_DESTROYED']);

function isPipeError(error: unknown): boolean {
  for (let current = error, depth = 0; current && depth < 5; depth++) {
    if (typeof current !== 'object') return false;
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && PIPE_ERROR_CODES.has(code)) return true;
    if (current instanceof Error && /\bEPIPE\b/.test(current.message)) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

/**
 * When writing the handshake failed with a pipe error (the child closed stdin by exiting), waits
 * up to `ms` for the exit to be recorded, so the failure reports the exit code and stderr (a
 * usage message, exit 64) rather than `write EPIPE`. The write usually loses the race with the
 * child's `exit` event.
 */
export async function settleExitAfterPipeError(
  stdio: StdioTransport | undefined,
  error: unknown,
  ms = 1_000,
): Promise<void> {
  if (!stdio || stdio.exit || !isPipeError(error)) return;
  const deadline = Date.now() + ms;
  while (!stdio.exit && Date.now() < deadline) await new Promise((done) => setTimeout(done, 10));
  // stderr can still be in the pipe when `exit` fires; one more turn lets it arrive.
  await new Promise((done) => setTimeout(done, 20));
}

/**
 * Watches a starting stdio server for non-protocol stdout: once it printed text that is not
 * JSON-RPC and then sent no message for {@link STRAY_OUTPUT_GRACE_MS}, `failed` rejects with a
 * `PROTOCOL_ERROR` quoting that text. `stop()` ends the watch (call it in `finally`).
 */
export function watchStrayStdout(
  stdio: StdioTransport | undefined,
  describe: { serverName: string; details: () => ServerErrorDetails },
  graceMs = STRAY_OUTPUT_GRACE_MS,
): { failed: Promise<never>; stop(): void } {
  let timer: NodeJS.Timeout | undefined;
  const failed = new Promise<never>((_, reject) => {
    if (!stdio) return;
    timer = setInterval(() => {
      const stray = stdio.firstStrayLine;
      if (!stray || stdio.messageCount > 0 || Date.now() - stray.at < graceMs) return;
      clearInterval(timer);
      const lines = stdio.garbageLineCount;
      reject(
        new ServerError(
          AgentsErrorCode.ProtocolError,
          `Server "${describe.serverName}" printed text on stdout that is not MCP ` +
            `(${lines} line${lines === 1 ? '' : 's'}, first: ${JSON.stringify(stray.text)}) and did not ` +
            `answer initialize. stdout is reserved for JSON-RPC messages: check that the command ` +
            'starts an MCP server over stdio (some need a flag such as --stdio) and logs to stderr.',
          { ...describe.details(), pid: stdio.pid, strayLine: stray.text },
        ),
      );
    }, 50);
  });
  // Nobody may be listening when the watch is stopped first.
  failed.catch(() => undefined);
  return { failed, stop: () => clearInterval(timer) };
}
