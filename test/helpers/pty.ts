import { spawn } from 'node:child_process';

/** What a command printed on its terminal, and how it ended. */
export interface PtyRun {
  /** Everything the terminal showed (stdout and stderr interleaved, CRLF line ends). */
  output: string;
  code: number | null;
}

/** Quotes one argument for the `sh -c` line `script` runs (test code only; argv is ours). */
function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/**
 * Runs `argv` on a pseudo-terminal (util-linux `script`), so it sees a TTY on stdin, stdout and
 * stderr as in an interactive shell. `onOutput` is called with all output so far and may answer
 * by writing keys (`'\u0003'` is Ctrl-C, delivered by the terminal as SIGINT).
 */
export function runInPty(
  argv: readonly string[],
  options: {
    cwd: string;
    env?: NodeJS.ProcessEnv;
    onOutput?: (output: string, type: (keys: string) => void) => void;
  },
): Promise<PtyRun> {
  const child = spawn('script', ['-qfec', argv.map(shellQuote).join(' '), '/dev/null'], {
    cwd: options.cwd,
    env: { ...process.env, TERM: 'xterm-256color', ...options.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let output = '';
  const type = (keys: string) => child.stdin.write(keys);
  const onData = (chunk: Buffer) => {
    output += chunk.toString();
    options.onOutput?.(output, type);
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  return new Promise((resolve) =>
    child.on('close', (code) => {
      child.stdin.destroy();
      resolve({ output, code });
    }),
  );
}
