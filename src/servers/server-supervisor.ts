import type { Tool } from '@modelcontextprotocol/client';
import { AgentsErrorCode, ServerError, errorMessage } from '../errors.js';
import { isMcpErrorCode } from '../mcp/tool-call.js';
import type { Connection, ManagedServerStatus, ServerCore } from './server-core.js';
import type { ToolsChangedReason } from './server-events.js';

/** What the supervisor needs from the server it watches over. */
export interface SupervisedServer {
  /** Connects a fresh client and lists its tools (within the startup budget). */
  connect(signal: AbortSignal | undefined): Promise<{ connection: Connection; tools: Tool[] }>;
  /** Makes a connection and its tools the live ones. Throws when the tool list is unusable. */
  install(
    connection: Connection,
    tools: Tool[],
    reason: ToolsChangedReason | undefined,
    started: number,
  ): void;
}

interface ReadyWaiter {
  resolve: () => void;
  reject: (error: ServerError) => void;
}

/**
 * Keeps one managed server running: restarts it after a crash with bounded, jittered
 * exponential backoff (`restart` in its config), pings it (`timeouts.pingMs`) and restarts it
 * when it stops answering, replaces a lost HTTP session, and lets calls made during a restart
 * wait for it (up to `timeouts.callMs`).
 */
export class ServerSupervisor {
  private restartAttempts = 0;
  private restartTimer: NodeJS.Timeout | undefined;
  private restartInFlight: Promise<void> | undefined;
  private healthTimer: NodeJS.Timeout | undefined;
  private healthCheck: Promise<void> | undefined;
  private readyWaiters: ReadyWaiter[] = [];

  constructor(
    private readonly core: ServerCore,
    private readonly server: SupervisedServer,
  ) {}

  /** A call or ping got an answer: the server is healthy, the backoff starts over. */
  answered(): void {
    this.restartAttempts = 0;
  }

  /** Starts periodic pings, when the options or the config ask for them. */
  startHealthChecks(): void {
    const everyMs =
      this.core.options.healthCheckIntervalMs ?? this.core.timeouts.healthCheckIntervalMs;
    if (everyMs <= 0) return;
    this.healthTimer = setInterval(() => {
      if (this.core.status === 'ready') void this.checkHealth();
    }, everyMs);
    this.healthTimer.unref();
  }

  /** The server is ready: calls waiting for it go ahead. */
  ready(): void {
    for (const waiter of this.readyWaiters.splice(0)) waiter.resolve();
  }

  /** The server failed or closed: calls waiting for it fail with `error`. */
  fail(error: ServerError): void {
    for (const waiter of this.readyWaiters.splice(0)) waiter.reject(error);
  }

  /** The connection closed without us closing it: report the end and restart. */
  onConnectionClosed(connection: Connection): void {
    const core = this.core;
    if (connection.superseded || core.closing || connection !== core.connection) return;
    connection.superseded = true;
    core.connection = undefined;
    const error = core.failures.connectionClosed(connection.serverTransport, 'call');
    const exit = connection.serverTransport.stdio?.exit;
    core.logger.warn(error.message, { serverName: core.name });
    core.events.emit('server-end', {
      serverName: core.name,
      reason: connection.endReason ?? 'crashed',
      exitCode: exit?.exitCode,
      signal: exit?.signal,
      error,
    });
    this.scheduleRestart(error);
  }

  private scheduleRestart(cause: ServerError): void {
    const core = this.core;
    const policy = core.restartPolicy;
    if (core.closing) return;
    if (!policy.enabled || this.restartAttempts >= policy.maxAttempts) {
      core.status = 'failed';
      const failure = new ServerError(
        AgentsErrorCode.ServerUnavailable,
        policy.enabled
          ? `Server "${core.name}" failed ${this.restartAttempts} restart attempt(s) and is marked failed: ${cause.message}`
          : `Server "${core.name}" stopped and restarts are disabled: ${cause.message}`,
        cause.details,
        { cause },
      );
      core.lastError = failure;
      this.fail(failure);
      return;
    }
    this.restartAttempts += 1;
    const base = Math.min(
      policy.maxDelayMs,
      policy.initialDelayMs * 2 ** (this.restartAttempts - 1),
    );
    // ±20% jitter, so several crashed servers do not restart in lock step.
    const delayMs = Math.round(base * (0.8 + Math.random() * 0.4));
    core.status = 'restarting';
    core.lastError = cause;
    core.events.emit('server-restart', {
      serverName: core.name,
      attempt: this.restartAttempts,
      maxAttempts: policy.maxAttempts,
      delayMs,
      cause,
    });
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      this.restartInFlight = this.restartNow('restart').finally(() => {
        this.restartInFlight = undefined;
      });
    }, delayMs);
  }

  private async restartNow(reason: ToolsChangedReason): Promise<void> {
    const core = this.core;
    if (core.closing) return;
    const started = Date.now();
    try {
      const { connection, tools } = await this.server.connect(undefined);
      if (core.closing) {
        connection.superseded = true;
        await connection.serverTransport.close();
        return;
      }
      this.server.install(connection, tools, reason, started);
    } catch (error) {
      const failure = core.failures.asServerError(error, 'initialize');
      core.logger.warn(`Restarting server "${core.name}" failed: ${failure.message}`, {
        serverName: core.name,
      });
      this.scheduleRestart(failure);
    }
  }

  /** Replaces the connection (HTTP session lost): new session, tools listed and compared again. */
  async reconnect(): Promise<void> {
    const core = this.core;
    const old = core.connection;
    if (old) old.superseded = true;
    core.connection = undefined;
    core.status = 'restarting';
    if (old) await old.serverTransport.close();
    await this.restartNow('reconnect');
    // restartNow moved the status on; widen it again (TypeScript narrowed it above).
    if ((core.status as ManagedServerStatus) !== 'ready') {
      throw core.lastError ?? core.failures.closed('connect');
    }
  }

  /** Health check with its own short timeout (`timeouts.pingMs`). */
  async ping(options: { signal?: AbortSignal } = {}): Promise<void> {
    const core = this.core;
    const connection = core.connection;
    if (!connection || core.status !== 'ready') {
      throw new ServerError(
        AgentsErrorCode.ServerUnavailable,
        `Cannot ping server "${core.name}": it is ${core.status}.`,
        core.failures.details('ping', undefined),
      );
    }
    try {
      const pingOptions = { timeout: core.timeouts.pingMs, signal: options.signal };
      // 2026-07-28 removed ping; server/discover is the cheap request every such server answers.
      if (connection.client.getProtocolEra() === 'modern')
        await connection.client.discover(pingOptions);
      else await connection.client.ping(pingOptions);
      this.answered();
    } catch (error) {
      throw new ServerError(
        isMcpErrorCode(error, 'timeout')
          ? AgentsErrorCode.Timeout
          : AgentsErrorCode.ServerUnavailable,
        `Server "${core.name}" did not answer ping within ${core.timeouts.pingMs} ms: ${errorMessage(error)}`,
        core.failures.details('ping', connection.serverTransport),
        { cause: error },
      );
    }
  }

  /** Pings; a server that does not answer is wedged and gets restarted. */
  checkHealth(): Promise<void> {
    this.healthCheck ??= (async () => {
      const core = this.core;
      const connection = core.connection;
      if (!connection || core.status !== 'ready') return;
      try {
        await this.ping();
      } catch (error) {
        if (connection !== core.connection || core.closing) return;
        core.logger.warn(
          `Server "${core.name}" is unresponsive (${errorMessage(error)}); restarting it`,
          { serverName: core.name },
        );
        connection.endReason = 'unresponsive';
        // Closing the transport fires onConnectionClosed, which schedules the restart.
        await connection.serverTransport.close();
      }
    })().finally(() => {
      this.healthCheck = undefined;
    });
    return this.healthCheck;
  }

  /** The live connection, waiting (up to the call timeout) while a restart is under way. */
  async readyConnection(signal: AbortSignal | undefined, toolName: string): Promise<Connection> {
    const core = this.core;
    if (core.status === 'ready' && core.connection) return core.connection;
    if (core.status === 'closed' || core.closing) throw core.failures.closed('call', toolName);
    if (core.status === 'failed' || core.status === 'idle') {
      throw new ServerError(
        AgentsErrorCode.ServerUnavailable,
        core.status === 'idle'
          ? `Server "${core.name}" is not started; tool "${toolName}" cannot be called.`
          : `Server "${core.name}" is unavailable (${core.lastError?.message ?? 'it failed'}); tool "${toolName}" cannot be called.`,
        { ...core.failures.details('call', undefined), toolName },
        { cause: core.lastError },
      );
    }
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        finish();
        reject(
          new ServerError(
            AgentsErrorCode.ServerUnavailable,
            `Server "${core.name}" did not come back within ${core.timeouts.callMs} ms; tool "${toolName}" was not called.`,
            { ...core.failures.details('call', undefined), toolName },
          ),
        );
      }, core.timeouts.callMs);
      const onAbort = (): void => {
        finish();
        reject(
          new ServerError(
            AgentsErrorCode.Aborted,
            `Tool call "${toolName}" on server "${core.name}" was cancelled while the server was restarting; it was not sent.`,
            { ...core.failures.details('call', undefined), toolName },
            { cause: signal?.reason },
          ),
        );
      };
      const waiter: ReadyWaiter = {
        resolve: () => {
          finish();
          resolve();
        },
        reject: (error) => {
          finish();
          reject(error);
        },
      };
      const finish = (): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        const index = this.readyWaiters.indexOf(waiter);
        if (index !== -1) this.readyWaiters.splice(index, 1);
      };
      this.readyWaiters.push(waiter);
      if (signal?.aborted === true) onAbort();
      else signal?.addEventListener('abort', onAbort, { once: true });
    });
    if (!core.connection) throw core.failures.closed('call', toolName);
    return core.connection;
  }

  /** Stops restarts and pings and fails the calls waiting for the server with `error`. */
  stop(error: ServerError): void {
    clearTimeout(this.restartTimer);
    clearInterval(this.healthTimer);
    this.fail(error);
  }

  /** Resolves once a restart under way has noticed the close and cleaned up. */
  async settled(): Promise<void> {
    await this.restartInFlight?.catch(() => undefined);
  }
}
