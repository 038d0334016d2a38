import { execFile, spawnSync, spawn } from 'node:child_process';
import { AgentsError, AgentsErrorCode } from '../errors.js';
import {
  heldLockFiles,
  removeLockFiles,
  waitingOn,
  watchHostGit,
  type HostGitWatch,
} from './host-git-watch.js';
import { DEFAULT_GIT_TIMEOUT_MS, gitEnv, withFixedGitConfig } from './git-env.js';

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
  /**
   * Told of each fifo git blocked opening and was let through (see host-git-watch.ts): git
   * read it as an empty file and recorded nothing of it.
   */
  onFifo?: (path: string) => void;
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
  return execGit(args, options, 'utf8', 256 * 1024 * 1024);
}

/**
 * {@link runGit} with stdout as bytes (file contents must round-trip exactly; the text runner
 * decodes as UTF-8).
 */
export function runGitBytes(
  args: readonly string[],
  options: RunGitOptions,
): Promise<{ stdout: Buffer; exitCode: number }> {
  return execGit(args, options, 'buffer', 1024 * 1024 * 1024);
}

/** The one place a one-shot git process is started (long-lived ones: {@link startGit}). */
function execGit<E extends 'utf8' | 'buffer'>(
  args: readonly string[],
  options: RunGitOptions,
  encoding: E,
  maxBuffer: number,
): Promise<{ stdout: E extends 'utf8' ? string : Buffer; exitCode: number }> {
  type Out = E extends 'utf8' ? string : Buffer;
  options.signal?.throwIfAborted();
  const timeoutMs = options.timeoutMs ?? DEFAULT_GIT_TIMEOUT_MS;
  const command = `git ${args.join(' ')}`;
  return new Promise((resolve, reject) => {
    // Why a git was killed by us (the timeout, or a fifo it was stuck reading), and the lock
    // files it held then: a killed git cannot remove them, and a stale `index.lock` would fail
    // every later snapshot (issue 35, item 6).
    let killed: { stuckOn: string | undefined; fifoRead: boolean } | undefined;
    let heldLocks: Promise<string[]> = Promise.resolve([]);
    const kill = (stuckOn: string | undefined, fifoRead: boolean) => {
      if (killed !== undefined || child.pid === undefined) return;
      killed = { stuckOn, fifoRead };
      heldLocks = heldLockFiles(child.pid);
      void heldLocks.finally(() => child.kill('SIGKILL'));
    };
    const child = execFile(
      'git',
      args,
      {
        cwd: options.cwd,
        env: withFixedGitConfig(options.env ?? gitEnv()),
        signal: options.signal,
        maxBuffer,
        encoding,
        killSignal: 'SIGKILL',
      },
      (error, stdoutRaw, stderrRaw) => {
        clearTimeout(timer);
        watch?.stop();
        for (const path of watch?.letThrough ?? []) options.onFifo?.(path);
        const stdout = stdoutRaw as Out;
        if (error === null) {
          resolve({ stdout, exitCode: 0 });
          return;
        }
        const stderr = Buffer.isBuffer(stderrRaw) ? stderrRaw.toString('utf8') : stderrRaw;
        const code = (error as NodeJS.ErrnoException & { code?: unknown }).code;
        if (
          killed === undefined &&
          typeof code === 'number' &&
          options.okExitCodes?.includes(code)
        ) {
          resolve({ stdout, exitCode: code });
          return;
        }
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
        if (killed !== undefined) {
          const { stuckOn, fifoRead } = killed;
          void heldLocks.then(removeLockFiles).finally(() =>
            reject(
              fifoRead
                ? new AgentsError(
                    AgentsErrorCode.SandboxFailed,
                    `"${command}" in ${options.cwd} was stopped: it was stuck reading "${String(stuckOn)}", a fifo that a process in the sandbox holds open. Remove that fifo (or stop the process holding it) and try again.`,
                    { cause: error, details: { command: args, cwd: options.cwd, stuckOn } },
                  )
                : new AgentsError(
                    AgentsErrorCode.Timeout,
                    `"${command}" in ${options.cwd} took longer than ${timeoutMs} ms and was killed${stuckOn === undefined ? '' : ` while it waited on "${stuckOn}"`}; the filesystem may be slow or the tree very large.`,
                    {
                      cause: error,
                      details: { command: args, cwd: options.cwd, timeoutMs, stuckOn },
                    },
                  ),
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
    const watch =
      child.pid === undefined
        ? undefined
        : watchHostGit(child.pid, (block) => kill(block.path, true));
    const timer = setTimeout(() => {
      if (child.pid === undefined) return;
      void waitingOn(child.pid).then((path) => kill(path, false));
    }, timeoutMs);
    // A git that exits before reading its input (a failure) closes the pipe: that EPIPE must
    // not crash the process; the exit code above reports the failure.
    child.stdin?.on('error', () => undefined);
    if (options.input !== undefined) child.stdin?.end(options.input);
  });
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
    env: withFixedGitConfig(options.env ?? gitEnv()),
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
  // Looks at git only while a request waits (see host-git-watch.ts): a fifo planted as a
  // `.gitignore` is let through; one a process holds open fails the request with its path.
  let watch: HostGitWatch | undefined;
  const idle = () => {
    watch?.stop();
    watch = undefined;
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
    if (child.pid !== undefined) {
      const pid = child.pid;
      watch ??= watchHostGit(pid, (block) =>
        fail(
          new AgentsError(
            AgentsErrorCode.SandboxFailed,
            `"${command}" in ${options.cwd} was stopped: it was stuck reading "${block.path}", a fifo that a process in the sandbox holds open. Remove that fifo (or stop the process holding it) and try again.`,
            { details: { command: args, cwd: options.cwd, stuckOn: block.path } },
          ),
        ),
      );
    }
    timer ??= setTimeout(() => {
      const pid = child.pid;
      void (pid === undefined ? Promise.resolve(undefined) : waitingOn(pid)).then((stuckOn) => {
        if (pending.length === 0) return; // answered meanwhile
        fail(
          new AgentsError(
            AgentsErrorCode.Timeout,
            `"${command}" in ${options.cwd} gave no answer in ${timeoutMs} ms and was killed${stuckOn === undefined ? '' : ` while it waited on "${stuckOn}"`}.`,
            { details: { command: args, cwd: options.cwd, timeoutMs, stuckOn } },
          ),
        );
      });
    }, timeoutMs);
  };
  const fail = (error: unknown) => {
    if (!alive) return;
    alive = false;
    // Lock files it holds (`update-ref --stdin`) are removed once it is gone.
    const pid = child.pid;
    void (pid === undefined ? Promise.resolve([]) : heldLockFiles(pid)).then((locks) => {
      child.kill('SIGKILL');
      if (locks.length > 0) child.once('exit', () => void removeLockFiles(locks));
    });
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

/**
 * `git --version` of `gitPath`, synchronously (`agents doctor`), with the fixed environment every
 * git here gets. Undefined stdout means it could not run; `error` says why when known.
 */
export function gitVersionSync(gitPath = 'git'): { stdout?: string; error?: string } {
  const result = spawnSync(gitPath, ['--version'], {
    env: gitEnv(),
    encoding: 'utf8',
    timeout: 10_000,
  });
  if (result.error !== undefined) return { error: result.error.message };
  if (result.status !== 0) return {};
  return { stdout: result.stdout };
}
