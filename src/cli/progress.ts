import { isInteractive } from './output.js';

/**
 * "The CLI talks while it works": one line per slow step (starting a server, listing its tools,
 * waiting for a browser) on stderr. On a terminal a spinner turns in front of the step and the
 * line ends with ✓ or ✗; elsewhere (CI logs, pipes) a plain line appears only when the step is
 * still running after {@link PLAIN_DELAY_MS}, so quick steps stay silent and output stays stable.
 *
 * Hand-rolled rather than nanospinner or ora: both install SIGINT/SIGTERM handlers that call
 * `process.exit` while spinning, which would skip the clean-up the CLI's first Ctrl-C runs
 * (stopping the servers it started).
 */

/** A plain (non-terminal) line is printed for a step still running after this long. */
export const PLAIN_DELAY_MS = 10_000;
const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
const INTERVAL_MS = 80;

/** Shows slow steps on a stream. */
export interface Progress {
  /** Runs `work`, showing `text` while it runs (e.g. `starting fs (npx server-filesystem)`). */
  step<T>(text: string, work: () => Promise<T>): Promise<T>;
}

/** Progress on `stream` (stderr: stdout stays the command's output). */
export function createProgress(
  stream: NodeJS.WritableStream,
  options: { env?: NodeJS.ProcessEnv; plainDelayMs?: number } = {},
): Progress {
  const env = options.env ?? process.env;
  // A spinner also stays out of CI logs.
  const interactive =
    isInteractive(stream, env) &&
    (env['CI'] === undefined || env['CI'] === '' || env['CI'] === 'false');
  const delay = options.plainDelayMs ?? PLAIN_DELAY_MS;
  return {
    async step<T>(text: string, work: () => Promise<T>): Promise<T> {
      if (!interactive) {
        const started = Date.now();
        const timer = setTimeout(() => stream.write(`${text}… (still running)\n`), delay);
        timer.unref();
        try {
          return await work();
        } finally {
          clearTimeout(timer);
          if (Date.now() - started >= delay) stream.write(`${text}: done\n`);
        }
      }
      let frame = 0;
      const draw = () => stream.write(`\r\x1b[2K${FRAMES[frame++ % FRAMES.length]} ${text}…`);
      draw();
      const timer = setInterval(draw, INTERVAL_MS);
      timer.unref();
      try {
        const result = await work();
        stream.write(`\r\x1b[2K✓ ${text}\n`);
        return result;
      } catch (error) {
        stream.write(`\r\x1b[2K✗ ${text}\n`);
        throw error;
      } finally {
        clearInterval(timer);
      }
    },
  };
}
