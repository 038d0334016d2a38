import { spawn, type ChildProcess } from 'node:child_process';
import type { JSONRPCMessage } from '@modelcontextprotocol/client';
import { getDefaultEnvironment } from '@modelcontextprotocol/client/stdio';
import { JSONRPCMessageSchema } from '@modelcontextprotocol/core';
import { resolveServerTimeouts } from '../config/server-schema.js';
import { AgentsErrorCode, ServerError } from '../errors.js';
import { formatCommandLine } from '../redact.js';
import { defaultRunDir, reapOrphanedServersOnce, recordServerProcess } from './orphan-reaper.js';
import {
  fromWrapperExit,
  isProcessGroupAlive,
  killProcessGroup,
  trackProcessGroup,
  untrackProcessGroup,
  waitForGroupGone,
  type ProcessExit,
} from './process-group.js';
import { silentServerLogger, type ServerLogger } from './server-logger.js';
import { StderrBuffer } from './stderr-buffer.js';
import {
  DEFAULT_MAX_GARBAGE_LINES,
  DEFAULT_MAX_LINE_BYTES,
  DEFAULT_STDERR_BUFFER_BYTES,
  type StdioTransport,
  type StdioTransportOptions,
} from './stdio-transport-types.js';
import { waitAtMost } from './wait-at-most.js';

/**
 * Creates a stdio transport for one server process (not started: the SDK `Client.connect()`
 * starts it). The child is spawned with `shell: false`, `detached: true` (its own process group),
 * piped stdio, and an environment made of the SDK's safe default list plus `env` only.
 */
export function createStdioTransport(options: StdioTransportOptions): StdioTransport {
  return new ProcessStdioTransport(options);
}

class ProcessStdioTransport implements StdioTransport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T) => void;

  readonly target: string;
  private readonly options: StdioTransportOptions;
  private readonly logger: ServerLogger;
  private readonly maxLineBytes: number;
  private readonly maxGarbageLines: number;
  private readonly shutdownMs: number;
  private readonly stderr: StderrBuffer;

  private child: ChildProcess | undefined;
  private state: 'new' | 'starting' | 'open' | 'closing' | 'closed' = 'new';
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private closePromise: Promise<void> | undefined;
  private exitWaiters: Array<() => void> = [];
  private stdoutEndWaiters: Array<() => void> = [];
  private stdoutEnded = false;

  exit: ProcessExit | undefined;
  failure: Error | undefined;
  garbageLineCount = 0;
  firstStrayLine: { text: string; at: number } | undefined;
  messageCount = 0;
  protocolVersion: string | undefined;
  pid: number | undefined;

  constructor(options: StdioTransportOptions) {
    this.options = options;
    this.logger = options.logger ?? silentServerLogger;
    this.maxLineBytes = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
    this.maxGarbageLines = options.maxGarbageLines ?? DEFAULT_MAX_GARBAGE_LINES;
    this.shutdownMs = options.shutdownMs ?? resolveServerTimeouts().shutdownMs;
    this.stderr = new StderrBuffer(
      options.serverName,
      this.logger,
      options.stderrBufferBytes ?? DEFAULT_STDERR_BUFFER_BYTES,
      options.stderrLinesPerSecond ?? 200,
    );
    this.target = options.displayTarget ?? formatCommandLine(options.command, options.args ?? []);
  }

  setProtocolVersion(version: string): void {
    this.protocolVersion = version;
  }

  start(): Promise<void> {
    if (this.state !== 'new') {
      return Promise.reject(
        new Error(
          `The stdio transport of server "${this.options.serverName}" was already started.`,
        ),
      );
    }
    this.state = 'starting';
    return new Promise<void>((resolve, reject) => {
      let child: ChildProcess;
      try {
        child = spawn(this.options.command, [...(this.options.args ?? [])], {
          shell: false,
          detached: true,
          stdio: ['pipe', 'pipe', 'pipe'],
          cwd: this.options.cwd,
          env: { ...getDefaultEnvironment(), ...this.options.env },
          windowsHide: true,
        });
      } catch (error) {
        this.state = 'closed';
        reject(this.spawnError(error));
        return;
      }
      this.child = child;
      let spawned = false;
      // `on`, not `once`: a later 'error' (a failed kill) without a listener would crash the host.
      child.on('error', (error) => {
        if (!spawned) {
          this.state = 'closed';
          reject(this.spawnError(error));
          return;
        }
        this.onerror?.(error);
      });
      child.once('spawn', () => {
        spawned = true;
        this.pid = child.pid;
        if (child.pid !== undefined) {
          const runDir = this.options.runDir === undefined ? defaultRunDir() : this.options.runDir;
          let unrecord = (): void => undefined;
          if (runDir !== null) {
            // Recorded so a later host can reap this group if we die by SIGKILL (no exit hook).
            unrecord = recordServerProcess(
              runDir,
              {
                pgid: child.pid,
                serverName: this.options.serverName,
                target: this.target,
                command: this.options.command,
              },
              this.logger,
            );
            // Our own first spawn is the moment to clean up after an earlier host that crashed.
            void reapOrphanedServersOnce({ runDir, logger: this.logger });
          }
          trackProcessGroup(child.pid, unrecord);
        }
        this.state = 'open';
        resolve();
      });
      child.once('exit', (exitCode, signal) => {
        this.exit = this.options.signalExitCodes
          ? fromWrapperExit(exitCode, signal)
          : { exitCode, signal };
        for (const waiter of this.exitWaiters.splice(0)) waiter();
        if (this.state === 'open') {
          this.logger.debug(`Server "${this.options.serverName}" exited`, { exitCode, signal });
          void this.close();
        }
      });
      // Every stream gets an error listener: EPIPE and friends must never become uncaught errors.
      child.stdin?.on('error', (error) => this.onStreamError('stdin', error));
      child.stdout?.on('error', (error) => this.onStreamError('stdout', error));
      child.stderr?.on('error', (error) => this.onStreamError('stderr', error));
      child.stdout?.on('data', (chunk: Buffer) => this.onStdout(chunk));
      child.stdout?.on('close', () => {
        this.stdoutEnded = true;
        for (const waiter of this.stdoutEndWaiters.splice(0)) waiter();
      });
      child.stderr?.on('data', (chunk: Buffer) => this.stderr.push(chunk));
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin;
    if (this.state !== 'open' || !stdin || !stdin.writable) {
      return Promise.reject(
        new ServerError(
          AgentsErrorCode.Closed,
          `Cannot send to server "${this.options.serverName}": its process is not running.`,
          { serverName: this.options.serverName, phase: 'call', target: this.target, ...this.exit },
        ),
      );
    }
    return new Promise<void>((resolve, reject) => {
      const fail = (error: Error): void => {
        cleanup();
        reject(error);
      };
      const onDrain = (): void => {
        cleanup();
        resolve();
      };
      const onClose = (): void => fail(new Error('stdin closed before the message was written'));
      const cleanup = (): void => {
        stdin.off('drain', onDrain);
        stdin.off('close', onClose);
      };
      const flushed = stdin.write(`${JSON.stringify(message)}\n`, (error) => {
        if (error) fail(error);
      });
      if (flushed) {
        resolve();
        return;
      }
      // Back-pressure: wait until the child has read enough (or its stdin goes away).
      stdin.once('drain', onDrain);
      stdin.once('close', onClose);
    });
  }

  close(): Promise<void> {
    this.closePromise ??= this.shutdown();
    return this.closePromise;
  }

  stderrTail(maxBytes = 4096): string {
    return this.stderr.tail(maxBytes);
  }

  isGroupAlive(): boolean {
    return this.pid !== undefined && isProcessGroupAlive(this.pid);
  }

  private spawnError(error: unknown): ServerError {
    const code = (error as NodeJS.ErrnoException).code;
    const hint =
      code === 'ENOENT'
        ? 'the command was not found; check `command` and PATH'
        : code === 'EACCES'
          ? 'the command is not executable; check its permissions'
          : 'see the cause';
    return new ServerError(
      AgentsErrorCode.ServerStartFailed,
      `Server "${this.options.serverName}" could not be spawned (${code ?? 'error'}: ${hint}; command: ${this.target}).`,
      { serverName: this.options.serverName, phase: 'spawn', target: this.target },
      { cause: error },
    );
  }

  private onStreamError(stream: string, error: Error): void {
    if (this.state === 'closing' || this.state === 'closed') return;
    // EPIPE on stdin means the child is going away; the 'exit' handler closes the transport.
    this.logger.debug(`Server "${this.options.serverName}" ${stream} error: ${error.message}`);
    this.onerror?.(error);
  }

  private fail(error: Error): void {
    if (this.failure || this.state === 'closed') return;
    this.failure = error;
    this.logger.error(error.message, { serverName: this.options.serverName });
    this.onerror?.(error);
    void this.close();
  }

  private onStdout(chunk: Buffer): void {
    if (this.state !== 'open' && this.state !== 'closing') return;
    if (this.failure) return;
    let start = 0;
    for (;;) {
      const newline = chunk.indexOf(10, start);
      if (newline === -1) break;
      const piece = chunk.subarray(start, newline);
      start = newline + 1;
      let line = piece;
      if (this.pending.length > 0) {
        line = Buffer.concat([...this.pending, piece]);
        this.pending = [];
        this.pendingBytes = 0;
      }
      if (line.length > this.maxLineBytes) {
        this.failFrame(line.length);
        return;
      }
      this.handleLine(line);
      if (this.failure) return;
    }
    if (start < chunk.length) {
      const rest = chunk.subarray(start);
      this.pendingBytes += rest.length;
      if (this.pendingBytes > this.maxLineBytes) {
        this.pending = [];
        this.failFrame(this.pendingBytes);
        return;
      }
      this.pending.push(rest);
    }
  }

  private failFrame(seenBytes: number): void {
    this.pending = [];
    this.pendingBytes = 0;
    this.fail(
      new ServerError(
        AgentsErrorCode.ProtocolError,
        `Server "${this.options.serverName}" sent a stdout frame that exceeds ${this.maxLineBytes} bytes ` +
          `(at least ${seenBytes} bytes without a newline); the server was closed. ` +
          'Ask for smaller results or raise maxLineBytes.',
        {
          serverName: this.options.serverName,
          phase: 'call',
          target: this.target,
          limitBytes: this.maxLineBytes,
        },
      ),
    );
  }

  private handleLine(raw: Buffer): void {
    const text = raw.toString('utf8').replace(/\r$/, '');
    if (text.trim() === '') return;
    let message: JSONRPCMessage | undefined;
    try {
      const parsed = JSONRPCMessageSchema.safeParse(JSON.parse(text));
      if (parsed.success) message = parsed.data;
    } catch {
      // not JSON: counted below
    }
    if (message === undefined) {
      this.garbageLineCount += 1;
      this.firstStrayLine ??= { text: text.slice(0, 200), at: Date.now() };
      if (this.garbageLineCount === 1) {
        this.logger.warn(
          `Server "${this.options.serverName}" printed a line on stdout that is not JSON-RPC; such lines are skipped (stdout is reserved for MCP messages).`,
          { serverName: this.options.serverName, sample: text.slice(0, 200) },
        );
      }
      if (this.garbageLineCount > this.maxGarbageLines) {
        this.fail(
          new ServerError(
            AgentsErrorCode.ProtocolError,
            `Server "${this.options.serverName}" printed more than ${this.maxGarbageLines} non-JSON-RPC lines on stdout; ` +
              'it was closed. Make it log to stderr instead.',
            { serverName: this.options.serverName, phase: 'call', target: this.target },
          ),
        );
      }
      return;
    }
    this.messageCount += 1;
    this.onmessage?.(message);
  }

  private waitForExit(ms: number): Promise<void> {
    if (this.exit) return Promise.resolve();
    return waitAtMost(new Promise<void>((resolve) => this.exitWaiters.push(resolve)), ms);
  }

  private async shutdown(): Promise<void> {
    const child = this.child;
    if (!child || this.state === 'new' || this.state === 'closed') {
      this.state = 'closed';
      return;
    }
    const unexpected = this.state === 'open' && this.exit !== undefined;
    this.state = 'closing';
    const pgid = this.pid;
    try {
      child.stdin?.end();
    } catch {
      // already closed
    }
    if (unexpected && !this.stdoutEnded) {
      // The child died on its own: let the last messages it wrote reach us first.
      await waitAtMost(new Promise<void>((resolve) => this.stdoutEndWaiters.push(resolve)), 150);
    }
    if (pgid !== undefined) {
      // Spec order: stdin closed → wait → SIGTERM → wait → SIGKILL, for the whole group.
      await this.waitForExit(this.shutdownMs);
      // Once the leader is gone, descendants got the same EOF; give them a moment, no more.
      let gone = await waitForGroupGone(pgid, this.exit ? Math.min(100, this.shutdownMs) : 0);
      if (!gone) {
        killProcessGroup(pgid, 'SIGTERM');
        gone = await waitForGroupGone(pgid, this.shutdownMs);
      }
      if (!gone) {
        killProcessGroup(pgid, 'SIGKILL');
        gone = await waitForGroupGone(pgid, 1_000);
        if (!gone) {
          this.logger.error(
            `Server "${this.options.serverName}": process group ${pgid} survived SIGKILL`,
            {
              serverName: this.options.serverName,
            },
          );
        }
      }
      await this.waitForExit(500);
      // A group that survived SIGKILL keeps its record, so a later start can try again.
      untrackProcessGroup(pgid, gone);
    }
    // A grandchild may have held the pipes; after the group is gone nothing more will come.
    child.stdout?.destroy();
    child.stderr?.destroy();
    child.stdin?.destroy();
    this.pending = [];
    this.pendingBytes = 0;
    this.state = 'closed';
    this.onclose?.();
  }
}
