import { execFile, spawn } from 'node:child_process';
import type { SimpleGit } from 'simple-git';
import { AgentsError, AgentsErrorCode } from '../errors.js';

/** Default time a single git command may take before it is killed. */
export const DEFAULT_GIT_TIMEOUT_MS = 120_000;

/** Fixed identity for snapshot commits, so the user's git config never matters. */
export const SNAPSHOT_IDENTITY = {
  GIT_AUTHOR_NAME: 'agents-sandbox',
  GIT_AUTHOR_EMAIL: 'agents-sandbox@localhost',
  GIT_COMMITTER_NAME: 'agents-sandbox',
  GIT_COMMITTER_EMAIL: 'agents-sandbox@localhost',
} as const;

/** GIT_* variables we set ourselves; simple-git 4 refuses them unless named. */
const ALLOWED_GIT_ENV = [
  'GIT_INDEX_FILE',
  'GIT_AUTHOR_NAME',
  'GIT_AUTHOR_EMAIL',
  'GIT_COMMITTER_NAME',
  'GIT_COMMITTER_EMAIL',
  'GIT_TERMINAL_PROMPT',
  'GIT_OPTIONAL_LOCKS',
] as const;

/**
 * Builds the environment for a git child process. It never spreads `process.env`: only PATH and
 * HOME (git needs them to run and to find the user's global config), a fixed locale, and our own
 * GIT_* keys. `GIT_OPTIONAL_LOCKS=0` keeps read-only commands from refreshing anyone's index.
 */
export function gitEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {
    PATH: process.env['PATH'] ?? '/usr/bin:/bin',
    LC_ALL: 'C',
    GIT_TERMINAL_PROMPT: '0',
    GIT_OPTIONAL_LOCKS: '0',
    ...SNAPSHOT_IDENTITY,
    ...extra,
  };
  const home = process.env['HOME'];
  if (home !== undefined) env['HOME'] = home;
  return env;
}

/** Options for one git command. */
export interface RunGitOptions {
  cwd: string;
  env?: Record<string, string>;
  signal?: AbortSignal;
  timeoutMs?: number;
  /** Bytes written to git's stdin. */
  input?: string;
  /** Exit codes that are not failures (e.g. 1 for `diff --quiet`). */
  okExitCodes?: readonly number[];
}

/** The outcome of one git command. */
export interface RunGitResult {
  stdout: string;
  exitCode: number;
}

/**
 * Runs one git command with execFile (argument array, no shell). Used for the hot plumbing of
 * snapshots, where a per-call AbortSignal and low overhead matter. Failures become
 * `SANDBOX_FAILED` (or `ABORTED` / `TIMEOUT`) with git's stderr in the message.
 */
export function runGit(args: readonly string[], options: RunGitOptions): Promise<RunGitResult> {
  options.signal?.throwIfAborted();
  const timeoutMs = options.timeoutMs ?? DEFAULT_GIT_TIMEOUT_MS;
  return new Promise((resolve, reject) => {
    const child = execFile(
      'git',
      args,
      {
        cwd: options.cwd,
        env: options.env ?? gitEnv(),
        signal: options.signal,
        timeout: timeoutMs,
        maxBuffer: 256 * 1024 * 1024,
        encoding: 'utf8',
        killSignal: 'SIGKILL',
      },
      (error, stdout, stderr) => {
        if (error === null) {
          resolve({ stdout, exitCode: 0 });
          return;
        }
        const code = (error as NodeJS.ErrnoException & { code?: unknown }).code;
        if (typeof code === 'number' && options.okExitCodes?.includes(code)) {
          resolve({ stdout, exitCode: code });
          return;
        }
        const command = `git ${args.join(' ')}`;
        if (options.signal?.aborted === true) {
          reject(
            new AgentsError(
              AgentsErrorCode.Aborted,
              `Aborted while running "${command}" in ${options.cwd}.`,
              {
                cause: error,
              },
            ),
          );
          return;
        }
        if ((error as { killed?: boolean }).killed === true) {
          reject(
            new AgentsError(
              AgentsErrorCode.Timeout,
              `"${command}" in ${options.cwd} took longer than ${timeoutMs} ms and was killed; the filesystem may be slow or the tree very large.`,
              { cause: error, details: { command: args, cwd: options.cwd, timeoutMs } },
            ),
          );
          return;
        }
        reject(
          new AgentsError(
            AgentsErrorCode.SandboxFailed,
            `"${command}" failed in ${options.cwd} (exit ${String(code)}): ${stderr.trim().slice(-2000) || error.message}`,
            { cause: error, details: { command: args, cwd: options.cwd, exitCode: code, stderr } },
          ),
        );
      },
    );
    // A git that exits before reading its input (a failure) closes the pipe: that EPIPE must
    // not crash the process; the exit code above reports the failure.
    child.stdin?.on('error', () => undefined);
    if (options.input !== undefined) child.stdin?.end(options.input);
  });
}

/**
 * A simple-git instance for porcelain commands (worktree, init), set up for the simple-git 4
 * environment guard: an explicit environment (no `process.env` spread), our GIT_* keys allowed,
 * repository hooks switched off (`core.hooksPath=/dev/null`, so `worktree add` runs no
 * post-checkout hook of the user's), and a block timeout plus optional abort signal. simple-git is
 * loaded on first use: the plumbing here needs only `execFile`, and CLI start-up should not pay.
 */
export async function porcelainGit(
  cwd: string,
  options: { signal?: AbortSignal; timeoutMs?: number; env?: Record<string, string> } = {},
): Promise<SimpleGit> {
  const { simpleGit } = await import('simple-git');
  return simpleGit({
    baseDir: cwd,
    allowEnvironment: ALLOWED_GIT_ENV,
    allowConfig: ['core.hooksPath'],
    config: ['core.hooksPath=/dev/null'],
    timeout: { block: options.timeoutMs ?? DEFAULT_GIT_TIMEOUT_MS },
    ...(options.signal === undefined ? {} : { abort: options.signal }),
  }).env(options.env ?? gitEnv());
}

/** Wraps a simple-git failure at our boundary with what was attempted and where. */
export function wrapGitError(error: unknown, what: string, where: string): AgentsError {
  if (AgentsError.isInstance(error)) return error;
  const message = error instanceof Error ? error.message : String(error);
  const aborted = /abort/i.test(error instanceof Error ? error.name + message : message);
  return new AgentsError(
    aborted ? AgentsErrorCode.Aborted : AgentsErrorCode.SandboxFailed,
    `Could not ${what} in ${where}: ${message.trim()}`,
    { cause: error },
  );
}

/**
 * A git process kept running for many requests (`cat-file --batch`, `check-ignore --stdin`,
 * `update-ref --stdin`): one spawn instead of one per request. Requests are answered in order;
 * each names how to take its answer off git's stdout.
 */
export interface LongLivedGit {
  /**
   * Writes `input` to git's stdin and resolves with what `take` reads off stdout: `take` gets
   * the bytes not yet consumed and returns the value and how many bytes it used, or `undefined`
   * while the answer is incomplete.
   */
  request<T>(
    input: string,
    take: (out: Buffer) => { value: T; used: number } | undefined,
  ): Promise<T>;
  /** Ends the process (stdin closed, then killed if still there). Idempotent. */
  close(): void;
  /** False once the process has exited or failed. */
  readonly alive: boolean;
}

/**
 * Starts a long-lived git process with the same fixed environment as {@link runGit} (never
 * `process.env`). It does not keep the Node process alive while idle. A request that gets no
 * answer in `timeoutMs` kills the process and fails with `TIMEOUT`; an exit fails every pending
 * request with `SANDBOX_FAILED` and git's stderr.
 */
export function startGit(
  args: readonly string[],
  options: { cwd: string; env?: Record<string, string>; timeoutMs?: number },
): LongLivedGit {
  const child = spawn('git', args, {
    cwd: options.cwd,
    env: options.env ?? gitEnv(),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const timeoutMs = options.timeoutMs ?? DEFAULT_GIT_TIMEOUT_MS;
  const command = `git ${args.join(' ')}`;
  type Pending = {
    take: (out: Buffer) => { value: unknown; used: number } | undefined;
    resolve: (value: unknown) => void;
    reject: (error: unknown) => void;
  };
  const pending: Pending[] = [];
  let out: Buffer = Buffer.alloc(0);
  let stderr = '';
  let alive = true;
  let timer: NodeJS.Timeout | undefined;
  const idle = () => {
    // Idle: nothing waits on git, so it must not keep the event loop (and the process) alive.
    child.unref();
    (child.stdout as unknown as { unref?: () => void }).unref?.();
    (child.stderr as unknown as { unref?: () => void }).unref?.();
    (child.stdin as unknown as { unref?: () => void }).unref?.();
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
  };
  const busy = () => {
    child.ref();
    (child.stdout as unknown as { ref?: () => void }).ref?.();
    timer ??= setTimeout(() => {
      fail(
        new AgentsError(
          AgentsErrorCode.Timeout,
          `"${command}" in ${options.cwd} gave no answer in ${timeoutMs} ms and was killed.`,
          { details: { command: args, cwd: options.cwd, timeoutMs } },
        ),
      );
    }, timeoutMs);
  };
  const fail = (error: unknown) => {
    alive = false;
    child.kill('SIGKILL');
    for (const entry of pending.splice(0)) entry.reject(error);
    idle();
  };
  idle();
  child.stdin.on('error', () => undefined);
  child.stderr.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-4000);
  });
  child.stdout.on('data', (chunk: Buffer) => {
    out = out.length === 0 ? chunk : Buffer.concat([out, chunk]);
    while (pending.length > 0) {
      const answer = pending[0]!.take(out);
      if (answer === undefined) break;
      out = out.subarray(answer.used);
      pending.shift()!.resolve(answer.value);
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
    }
    if (pending.length === 0) idle();
    else busy();
  });
  const exited = (detail: string) => {
    if (!alive) return;
    fail(
      new AgentsError(
        AgentsErrorCode.SandboxFailed,
        `"${command}" in ${options.cwd} ${detail}: ${stderr.trim().slice(-2000)}`,
        { details: { command: args, cwd: options.cwd, stderr } },
      ),
    );
  };
  child.on('error', (error) => exited(`could not run (${error.message})`));
  child.on('exit', (code, signal) => exited(`exited (${signal ?? `code ${String(code)}`})`));
  return {
    get alive() {
      return alive;
    },
    request<T>(
      input: string,
      take: (out: Buffer) => { value: T; used: number } | undefined,
    ): Promise<T> {
      if (!alive) {
        return Promise.reject(
          new AgentsError(AgentsErrorCode.SandboxFailed, `"${command}" is no longer running.`, {
            details: { command: args, cwd: options.cwd, stderr },
          }),
        );
      }
      return new Promise<T>((resolve, reject) => {
        pending.push({ take, resolve: resolve as (value: unknown) => void, reject });
        busy();
        child.stdin.write(input);
      });
    },
    close() {
      if (!alive) return;
      alive = false;
      child.stdin.end();
      for (const entry of pending.splice(0))
        entry.reject(new AgentsError(AgentsErrorCode.Closed, `"${command}" was closed.`));
      idle();
      // A git that ignores EOF (it should not) is not left behind.
      setTimeout(() => {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      }, 2000).unref();
    },
  };
}
