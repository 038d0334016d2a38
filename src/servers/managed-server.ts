import type { Client } from '@modelcontextprotocol/client';
import type { Implementation, ServerCapabilities } from '@modelcontextprotocol/client';
import type { CallToolResult, Tool } from '@modelcontextprotocol/client';
import { resolveServerRestartPolicy, resolveServerTimeouts } from '../config/server-schema.js';
import type {
  NamedServerConfig,
  ServerRestartPolicy,
  ServerTimeouts,
} from '../config/server-schema.js';
import { AgentsErrorCode, ServerError, errorMessage } from '../errors.js';
import type { McpToolCaller } from '../mcp/tool-call.js';
import type { ToolCallCapabilities, ToolCallContext, ToolEntry } from '../core/tool-descriptor.js';
import { DEFAULT_MAX_ARGUMENT_BYTES } from '../config/server-schema.js';
import { SupervisedCaller } from './server-call.js';
import { ServerConnector } from './server-connection.js';
import type {
  Connection,
  ManagedServerOptions,
  ManagedServerStatus,
  ServerCore,
} from './server-core.js';
import {
  ServerEventEmitter,
  type ServerEventSource,
  type ToolsChangedReason,
} from './server-events.js';
import { ServerFailures } from './server-failure.js';
import { silentServerLogger, type ServerLogger } from './server-logger.js';
import { ServerSupervisor } from './server-supervisor.js';
import { ServerToolSet } from './server-tool-set.js';

/**
 * One MCP server under supervision: started (spawned or connected), initialized, its tools
 * listed and kept current on `notifications/tools/list_changed`, restarted after a crash with
 * bounded backoff, and stopped cleanly. It is the {@link McpToolCaller} behind its own
 * entries, so every call goes through its timeouts, crash reporting and "tool no longer
 * available" checks. Owns a process or connection: `close()` it (or `await using`).
 *
 * Its parts, one concern each: `server-connection.ts` (transport, client, initialize, first
 * listing), `server-supervisor.ts` (restart, backoff, health), `server-tool-set.ts` (listing,
 * `list_changed` refresh, atomic swap), `server-call.ts` (a supervised call over
 * `mcp/tool-call.ts`).
 */
export interface ManagedServer extends McpToolCaller, AsyncDisposable, ServerEventSource {
  readonly name: string;
  readonly status: ManagedServerStatus;
  /** The connected SDK client, while there is a connection. */
  readonly client: Client | undefined;
  /** Negotiated protocol version, after initialize. */
  readonly protocolVersion: string | undefined;
  readonly serverCapabilities: ServerCapabilities | undefined;
  readonly serverInfo: Implementation | undefined;
  readonly instructions: string | undefined;
  /** Process id (= process group id) of a stdio server while it runs. */
  readonly pid: number | undefined;
  /** True when the last refresh failed: `entries()` is the last good set. */
  readonly stale: boolean;
  /** The error that made the server `failed`, if it is. */
  readonly lastError: ServerError | undefined;
  /** Ids of tools whose definition (fingerprint) changed since the first listing. */
  readonly changedToolIds: ReadonlySet<string>;
  /**
   * Spawns or connects, initializes (within `timeouts.startupMs`; `initialize` is never
   * cancelled: on timeout the connection is closed and the process group killed) and lists all
   * tools. Throws a {@link ServerError} (code SERVER_START_FAILED, TIMEOUT or ABORTED) naming
   * the server, phase, target, exit code/signal and stderr tail. Calling it twice returns the
   * same promise.
   */
  start(options?: { signal?: AbortSignal }): Promise<void>;
  /** The current tool set; replaced as a whole on refresh, never mutated. */
  entries(): readonly ToolEntry[];
  /** Lists the tools again now and swaps the set. Throws on failure and keeps the last good set. */
  refreshTools(options?: { signal?: AbortSignal }): Promise<void>;
  /** Health check with its own short timeout (`timeouts.pingMs`). Throws a ServerError (phase `ping`). */
  ping(options?: { signal?: AbortSignal }): Promise<void>;
  /** Sends `notifications/roots/list_changed` (after the sandbox root changed). */
  notifyRootsChanged(): Promise<void>;
  /** Stops the server: DELETE for HTTP sessions; stdin close → SIGTERM → SIGKILL for the group. Idempotent. */
  close(): Promise<void>;
}

/** Creates a managed server (not started: call `start()`). */
export function createManagedServer(
  config: NamedServerConfig,
  options: ManagedServerOptions = {},
): ManagedServer {
  return new ManagedServerImpl(config, options);
}

/** Owns the shared state and runs the life cycle: start, install a connection, close. */
class ManagedServerImpl implements ManagedServer, ServerCore {
  readonly name: string;
  readonly config: NamedServerConfig;
  readonly options: ManagedServerOptions;
  readonly logger: ServerLogger;
  readonly timeouts: ServerTimeouts;
  readonly restartPolicy: ServerRestartPolicy;
  readonly events: ServerEventEmitter;
  readonly failures: ServerFailures;

  status: ManagedServerStatus = 'idle';
  generation = 0;
  connection: Connection | undefined;
  lastError: ServerError | undefined;
  closing = false;
  serverCapabilities: ServerCapabilities | undefined;
  serverInfo: Implementation | undefined;
  instructions: string | undefined;

  private readonly connector: ServerConnector;
  private readonly supervisor: ServerSupervisor;
  private readonly toolSet: ServerToolSet;
  private readonly caller: SupervisedCaller;
  private startPromise: Promise<void> | undefined;
  private closePromise: Promise<void> | undefined;

  constructor(config: NamedServerConfig, options: ManagedServerOptions) {
    this.name = config.name;
    this.config = config;
    this.options = options;
    this.logger = options.logger ?? silentServerLogger;
    this.events = new ServerEventEmitter(this.logger);
    this.failures = new ServerFailures(config.name);
    this.timeouts = resolveServerTimeouts(config.timeouts);
    this.restartPolicy = resolveServerRestartPolicy(config.restart);
    this.connector = new ServerConnector(this, {
      onListChanged: (generation) => this.toolSet.onListChanged(generation),
      onClose: (connection) => this.supervisor.onConnectionClosed(connection),
    });
    this.supervisor = new ServerSupervisor(this, {
      connect: (signal) => this.connector.connect(signal),
      install: (connection, tools, reason, started) =>
        this.install(connection, tools, reason, started),
    });
    this.toolSet = new ServerToolSet(this, this);
    this.caller = new SupervisedCaller(
      this,
      this.supervisor,
      this.toolSet,
      this.connector.clientRequests,
      config.maxArgumentBytes ?? DEFAULT_MAX_ARGUMENT_BYTES,
    );
  }

  get client(): Client | undefined {
    return this.connection?.client;
  }

  get protocolVersion(): string | undefined {
    return this.connection?.protocolVersion;
  }

  get pid(): number | undefined {
    return this.connection?.serverTransport.stdio?.pid;
  }

  get stale(): boolean {
    return this.toolSet.stale;
  }

  get changedToolIds(): ReadonlySet<string> {
    return this.toolSet.changedToolIds;
  }

  on: ServerEventSource['on'] = (event, listener) => this.events.on(event, listener);

  entries(): readonly ToolEntry[] {
    return this.toolSet.entries();
  }

  refreshTools(options: { signal?: AbortSignal } = {}): Promise<void> {
    return this.toolSet.refresh(options);
  }

  ping(options: { signal?: AbortSignal } = {}): Promise<void> {
    return this.supervisor.ping(options);
  }

  callTool(
    name: string,
    args: Record<string, unknown>,
    context: ToolCallContext = {},
    capabilities?: ToolCallCapabilities,
  ): Promise<CallToolResult> {
    return this.caller.callTool(name, args, context, capabilities);
  }

  start(options: { signal?: AbortSignal } = {}): Promise<void> {
    this.startPromise ??= this.doStart(options.signal);
    return this.startPromise;
  }

  private async doStart(signal: AbortSignal | undefined): Promise<void> {
    if (this.closing) throw this.failures.closed('initialize');
    signal?.throwIfAborted();
    this.status = 'starting';
    const started = Date.now();
    try {
      const { connection, tools } = await this.connector.connect(signal);
      this.install(connection, tools, undefined, started);
    } catch (error) {
      const failure = this.failures.asServerError(error, 'initialize');
      if (!this.closing) this.status = 'failed';
      this.lastError = failure;
      this.supervisor.fail(failure);
      throw failure;
    }
    this.supervisor.startHealthChecks();
  }

  private install(
    connection: Connection,
    tools: Tool[],
    reason: ToolsChangedReason | undefined,
    started: number,
  ): void {
    try {
      // Build first: a tool list that cannot be used (e.g. duplicate names) must not leave a connection behind.
      this.toolSet.swap(tools, reason);
    } catch (error) {
      connection.superseded = true;
      void connection.serverTransport.close();
      throw error;
    }
    const previous = this.connection;
    this.connection = connection;
    this.status = 'ready';
    this.toolSet.scheduleExpiry(connection, connection.toolListTtlMs);
    this.lastError = undefined;
    if (previous && previous !== connection) {
      previous.superseded = true;
      void previous.serverTransport.close();
    }
    if (this.serverCapabilities?.tools === undefined && tools.length > 0) {
      this.logger.debug(`Server "${this.name}" lists tools without declaring the tools capability`);
    }
    this.events.emit('server-start', {
      serverName: this.name,
      restart: reason !== undefined,
      protocolVersion: connection.protocolVersion,
      toolCount: tools.length,
      durationMs: Date.now() - started,
      pid: connection.serverTransport.stdio?.pid,
    });
    this.supervisor.ready();
  }

  async notifyRootsChanged(): Promise<void> {
    if (!this.options.roots || !this.connection) return;
    await this.connection.client.sendRootsListChanged();
  }

  close(): Promise<void> {
    this.closePromise ??= this.doClose();
    return this.closePromise;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  private async doClose(): Promise<void> {
    this.closing = true;
    const wasRunning = this.status === 'ready' || this.status === 'restarting';
    this.status = 'closed';
    this.supervisor.stop(this.failures.closed('shutdown'));
    const toolsSettled = this.toolSet.close();
    const connection = this.connection;
    this.connection = undefined;
    const errors: unknown[] = [];
    if (connection) {
      connection.superseded = true;
      await connection.serverTransport.close().catch((error: unknown) => errors.push(error));
      await connection.client.close().catch(() => undefined);
    }
    await this.connector.closeStarting().catch((error: unknown) => errors.push(error));
    // Let a start or restart that was mid-way notice the close and clean up its own transport.
    await this.startPromise?.catch(() => undefined);
    await this.supervisor.settled();
    await toolsSettled;
    if (wasRunning || connection) {
      const exit = connection?.serverTransport.stdio?.exit;
      this.events.emit('server-end', {
        serverName: this.name,
        reason: 'closed',
        exitCode: exit?.exitCode,
        signal: exit?.signal,
      });
    }
    this.events.clear();
    if (errors.length > 0) {
      throw new ServerError(
        AgentsErrorCode.Closed,
        `Server "${this.name}" did not shut down cleanly: ${errors.map(errorMessage).join('; ')}`,
        this.failures.details('shutdown', connection?.serverTransport),
        { cause: errors[0] },
      );
    }
  }
}
