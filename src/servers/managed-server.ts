import { basename } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  ErrorCode,
  ListRootsRequestSchema,
  McpError,
  ToolListChangedNotificationSchema,
  type CallToolResult,
  type Implementation,
  type ServerCapabilities,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import {
  resolveServerRestartPolicy,
  resolveServerTimeouts,
  type NamedServerConfig,
  type ServerRestartPolicy,
  type ServerTimeouts,
  type ToolOverrides,
} from '../config/schemas.js';
import {
  AgentsError,
  AgentsErrorCode,
  ServerError,
  errorMessage,
  type ServerPhase,
} from '../errors.js';
import { createMcpToolEntries, listAllTools } from '../mcp/tool-adapter.js';
import {
  isMcpErrorCode,
  sendToolCall,
  toolCallSignal,
  type McpToolCaller,
} from '../mcp/tool-call.js';
import type { ToolCallContext, ToolEntry } from '../core/tool-descriptor.js';
import { knownServerVerdicts } from '../registry/known-servers.js';
import { knownPathArgumentsOf } from '../mcp/path-arguments.js';
import type { Confinement } from './confinement.js';
import { argumentBytesOverLimit, DEFAULT_MAX_ARGUMENT_BYTES } from './argument-size.js';
import {
  ClientRequestRouter,
  FORWARDED_CLIENT_CAPABILITIES,
  ForwardingCallClock,
} from './client-request-router.js';
import { createServerTransport, isSessionNotFound, type ServerTransport } from './connect.js';
import {
  ServerEventEmitter,
  type ServerEndReason,
  type ServerEventSource,
  type ToolsChangedReason,
} from './server-events.js';
import { silentServerLogger, type ServerLogger } from './server-logger.js';
import { settleExitAfterPipeError, watchStrayStdout } from './startup-diagnosis.js';

/** Where a managed server is in its life. */
export type ManagedServerStatus =
  'idle' | 'starting' | 'ready' | 'restarting' | 'failed' | 'closed';

/** Options of {@link createManagedServer}. */
export interface ManagedServerOptions {
  /** Working directory for a stdio server without its own `cwd` (the sandbox root). */
  cwd?: string;
  /** When given, the client declares `roots` and answers `roots/list` with these paths. */
  roots?: () => string[];
  /** Server stderr, skipped stdout lines, restarts and refresh failures go here. Default silent. */
  logger?: ServerLogger;
  /** Per-tool overrides on top of the config's `overrides`. */
  overrides?: ToolOverrides;
  /** Quiet time before a `tools/list_changed` triggers a re-list. Default 200 ms. */
  refreshDebounceMs?: number;
  /** Ping the server this often and restart it when it does not answer. Default `timeouts.healthCheckIntervalMs`. */
  healthCheckIntervalMs?: number;
  /** Retry a read-only call once after a crash, when the restart succeeds. Default true. */
  retryReadOnlyAfterRestart?: boolean;
  /** Max stdout line for stdio servers (bytes). Default 16 MB. */
  maxLineBytes?: number;
  /**
   * Where stdio server process groups are recorded, so a host killed with SIGKILL has them
   * reaped on the next start. Default `defaultRunDir()`; `null` disables recording.
   */
  runDir?: string | null;
  /** OS confinement of stdio servers (bubblewrap), resolved by the caller; default none. */
  confinement?: Confinement;
  /** Builds the transport; defaults to {@link createServerTransport}. Tests pass in-memory ones. */
  transportFactory?: (config: NamedServerConfig) => ServerTransport;
  /** Client name/version sent in `initialize`. */
  clientInfo?: Implementation;
  /**
   * Offer the server `sampling` and `elicitation` (form) in `initialize`, and answer them by
   * forwarding to the `clientRequests` of the tool call in flight (`agents serve`: the MCP
   * client that made the call). Default false: nothing could answer them, so they are not
   * declared. Log messages (`notifications/message`) go to the call's `clientRequests` either
   * way, or to the logger at debug level.
   */
  forwardClientRequests?: boolean;
}

/**
 * One MCP server under supervision: started (spawned or connected), initialized, its tools
 * listed and kept current on `notifications/tools/list_changed`, restarted after a crash with
 * bounded backoff, and stopped cleanly. It is the {@link McpToolCaller} behind its own
 * entries, so every call goes through its timeouts, crash reporting and "tool no longer
 * available" checks. Owns a process or connection: `close()` it (or `await using`).
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

interface Connection {
  generation: number;
  client: Client;
  serverTransport: ServerTransport;
  protocolVersion: string | undefined;
  /** Set when we close it on purpose, so the close handler knows it is not a crash. */
  superseded: boolean;
  endReason?: ServerEndReason;
}

/** Creates a managed server (not started: call `start()`). */
export function createManagedServer(
  config: NamedServerConfig,
  options: ManagedServerOptions = {},
): ManagedServer {
  return new ManagedServerImpl(config, options);
}

/** The "tool no longer available" result the model sees for a removed or never-listed tool. */
export function toolNoLongerAvailableResult(serverName: string, toolName: string): CallToolResult {
  return {
    isError: true,
    content: [
      {
        type: 'text',
        text:
          `Tool "${toolName}" is no longer available on server "${serverName}": the server does not list it (any more). ` +
          'Use one of the tools currently offered.',
      },
    ],
  };
}

/** The result the model sees when a call's arguments are over the server's `maxArgumentBytes`. */
export function argumentsTooLargeResult(
  serverName: string,
  toolName: string,
  bytes: number,
  limitBytes: number,
): CallToolResult {
  return {
    isError: true,
    content: [
      {
        type: 'text',
        text:
          `The arguments of tool "${toolName}" are ${bytes} bytes of JSON, over the limit of ${limitBytes} bytes ` +
          `(maxArgumentBytes) for server "${serverName}"; the call was not sent. ` +
          'Send smaller arguments, e.g. split the content over several calls.',
      },
    ],
  };
}

const CLIENT_INFO: Implementation = { name: 'agents-langgraph-mcp', version: '0.1.0' };

class ManagedServerImpl implements ManagedServer {
  readonly name: string;
  private readonly config: NamedServerConfig;
  private readonly options: ManagedServerOptions;
  private readonly logger: ServerLogger;
  private readonly timeouts: ServerTimeouts;
  private readonly restartPolicy: ServerRestartPolicy;
  private readonly events: ServerEventEmitter;
  private readonly transportFactory: (config: NamedServerConfig) => ServerTransport;
  private readonly maxArgumentBytes: number;

  status: ManagedServerStatus = 'idle';
  stale = false;
  lastError: ServerError | undefined;
  readonly changedToolIds = new Set<string>();
  serverCapabilities: ServerCapabilities | undefined;
  serverInfo: Implementation | undefined;
  instructions: string | undefined;

  private connection: Connection | undefined;
  private startingTransport: ServerTransport | undefined;
  private generation = 0;
  private currentEntries: readonly ToolEntry[] = [];
  private toolsByName = new Map<string, ToolEntry>();
  private listed = false;
  private startPromise: Promise<void> | undefined;
  private closePromise: Promise<void> | undefined;
  private closing = false;
  private restartAttempts = 0;
  private restartTimer: NodeJS.Timeout | undefined;
  private restartInFlight: Promise<void> | undefined;
  private debounceTimer: NodeJS.Timeout | undefined;
  private refreshing: Promise<void> | undefined;
  private refreshQueued = false;
  private healthTimer: NodeJS.Timeout | undefined;
  private healthCheck: Promise<void> | undefined;
  private warnedUndeclaredListChanged = false;
  private readyWaiters: Array<{ resolve: () => void; reject: (error: ServerError) => void }> = [];
  private readonly clientRequests: ClientRequestRouter;

  constructor(config: NamedServerConfig, options: ManagedServerOptions) {
    this.name = config.name;
    this.config = config;
    this.options = options;
    this.logger = options.logger ?? silentServerLogger;
    this.events = new ServerEventEmitter(this.logger);
    this.clientRequests = new ClientRequestRouter(config.name, this.logger);
    this.timeouts = resolveServerTimeouts(config.timeouts);
    this.maxArgumentBytes = config.maxArgumentBytes ?? DEFAULT_MAX_ARGUMENT_BYTES;
    this.restartPolicy = resolveServerRestartPolicy(config.restart);
    this.transportFactory =
      options.transportFactory ??
      ((serverConfig) =>
        createServerTransport(serverConfig, {
          cwd: options.cwd,
          logger: this.logger,
          maxLineBytes: options.maxLineBytes,
          ...(options.runDir === undefined ? {} : { runDir: options.runDir }),
          ...(options.confinement === undefined ? {} : { confinement: options.confinement }),
        }));
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

  on: ServerEventSource['on'] = (event, listener) => this.events.on(event, listener);

  entries(): readonly ToolEntry[] {
    return this.currentEntries;
  }

  start(options: { signal?: AbortSignal } = {}): Promise<void> {
    this.startPromise ??= this.doStart(options.signal);
    return this.startPromise;
  }

  private async doStart(signal: AbortSignal | undefined): Promise<void> {
    if (this.closing) throw this.closedError('initialize');
    signal?.throwIfAborted();
    this.status = 'starting';
    const started = Date.now();
    try {
      const { connection, tools } = await this.connectOnce(signal);
      this.install(connection, tools, undefined, started);
    } catch (error) {
      const failure = this.asServerError(error, 'initialize');
      if (!this.closing) this.status = 'failed';
      this.lastError = failure;
      this.rejectWaiters(failure);
      throw failure;
    }
    const healthEveryMs = this.options.healthCheckIntervalMs ?? this.timeouts.healthCheckIntervalMs;
    if (healthEveryMs > 0) {
      this.healthTimer = setInterval(() => {
        if (this.status === 'ready') void this.checkHealth();
      }, healthEveryMs);
      this.healthTimer.unref();
    }
  }

  /** Connects a fresh client and lists all tools, within the startup budget. Cleans up on failure. */
  private async connectOnce(
    signal: AbortSignal | undefined,
  ): Promise<{ connection: Connection; tools: Tool[] }> {
    const serverTransport = this.transportFactory(this.config);
    this.startingTransport = serverTransport;
    const generation = ++this.generation;
    const connection: Connection = {
      generation,
      client: undefined as unknown as Client,
      serverTransport,
      protocolVersion: undefined,
      superseded: false,
    };
    const transport = serverTransport.transport;
    const setProtocolVersion = transport.setProtocolVersion?.bind(transport);
    transport.setProtocolVersion = (version: string) => {
      connection.protocolVersion = version;
      setProtocolVersion?.(version);
    };
    const roots = this.options.roots;
    const forward = this.options.forwardClientRequests === true;
    const client = new Client(this.options.clientInfo ?? CLIENT_INFO, {
      capabilities: {
        ...(roots ? { roots: { listChanged: true } } : {}),
        ...(forward ? FORWARDED_CLIENT_CAPABILITIES : {}),
      },
    });
    connection.client = client;
    this.clientRequests.install(client, forward);
    if (roots) {
      client.setRequestHandler(ListRootsRequestSchema, () => ({
        roots: roots().map((path) => ({ uri: pathToFileURL(path).href, name: basename(path) })),
      }));
    }
    // Registered before connect: a server may send list_changed right after initialize.
    client.setNotificationHandler(ToolListChangedNotificationSchema, () =>
      this.onListChanged(generation),
    );
    client.onerror = (error) =>
      this.logger.debug(`Server "${this.name}": ${error.message}`, { serverName: this.name });
    client.onclose = () => this.onConnectionClosed(connection);

    const deadline = Date.now() + this.timeouts.startupMs;
    let phase: ServerPhase = 'initialize';
    const listAbort = new AbortController();
    const stray = watchStrayStdout(serverTransport.stdio, {
      serverName: this.name,
      details: () => this.details('initialize', serverTransport),
    });
    try {
      // Our own deadline, longer SDK timeout: the SDK would send notifications/cancelled for
      // initialize, which the spec forbids; we close the connection (and kill the group) instead.
      await this.withDeadline(
        Promise.race([
          client.connect(transport, { timeout: this.timeouts.startupMs * 2 + 1_000 }),
          stray.failed,
        ]),
        deadline,
        signal,
        'initialize',
        serverTransport,
      );
      stray.stop();
      if (this.closing) throw this.closedError('initialize');
      phase = 'list';
      const tools = await this.withDeadline(
        listAllTools(client, { signal: listAbort.signal, serverName: this.name }),
        deadline,
        signal,
        'list',
        serverTransport,
        listAbort,
      );
      if (this.closing) throw this.closedError('list');
      this.serverCapabilities = client.getServerCapabilities();
      this.serverInfo = client.getServerVersion();
      this.instructions = client.getInstructions();
      return { connection, tools };
    } catch (error) {
      connection.superseded = true;
      stray.stop();
      await settleExitAfterPipeError(serverTransport.stdio, error);
      // Describe before closing: closing kills the group, which would hide the real exit status.
      const failure = this.closing
        ? this.closedError(phase)
        : this.describeFailure(error, serverTransport, phase);
      await serverTransport.close();
      await client.close().catch(() => undefined);
      throw failure;
    } finally {
      if (this.startingTransport === serverTransport) this.startingTransport = undefined;
    }
  }

  private async withDeadline<T>(
    work: Promise<T>,
    deadline: number,
    signal: AbortSignal | undefined,
    phase: ServerPhase,
    serverTransport: ServerTransport,
    abort?: AbortController,
  ): Promise<T> {
    // The abandoned promise settles when the transport closes; never leave it unhandled.
    work.catch(() => undefined);
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    const guard = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => {
          abort?.abort();
          reject(
            new ServerError(
              AgentsErrorCode.Timeout,
              `Server "${this.name}" did not finish ${phase === 'list' ? 'tools/list' : 'initialize'} within ` +
                `${this.timeouts.startupMs} ms (${serverTransport.target}); it was stopped. ` +
                'Raise timeouts.startupMs if it is slow to start (e.g. npx downloading).',
              this.details(phase, serverTransport),
            ),
          );
        },
        Math.max(0, deadline - Date.now()),
      );
      if (signal) {
        onAbort = () => {
          abort?.abort();
          reject(
            new ServerError(
              AgentsErrorCode.Aborted,
              `Starting server "${this.name}" was aborted during ${phase}.`,
              this.details(phase, serverTransport),
              { cause: signal.reason },
            ),
          );
        };
        if (signal.aborted) onAbort();
        else signal.addEventListener('abort', onAbort, { once: true });
      }
    });
    try {
      return await Promise.race([work, guard]);
    } finally {
      clearTimeout(timer);
      if (onAbort) signal?.removeEventListener('abort', onAbort);
    }
  }

  private install(
    connection: Connection,
    tools: Tool[],
    reason: ToolsChangedReason | undefined,
    started: number,
  ): void {
    try {
      // Build first: a tool list that cannot be used (e.g. duplicate names) must not leave a connection behind.
      this.swapTools(tools, reason);
    } catch (error) {
      connection.superseded = true;
      void connection.serverTransport.close();
      throw error;
    }
    const previous = this.connection;
    this.connection = connection;
    this.stale = false;
    this.status = 'ready';
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
    for (const waiter of this.readyWaiters.splice(0)) waiter.resolve();
  }

  /** Whether path arguments of this server's tools are detected and rewritten. */
  private rewritesPaths(): boolean {
    return this.config.rewritePaths ?? this.config.transport === 'stdio';
  }

  /** Builds the whole new set, then swaps it in one assignment: never a partial mix. */
  private swapTools(tools: Tool[], reason: ToolsChangedReason | undefined): void {
    const known =
      this.config.transport === 'stdio'
        ? knownPathArgumentsOf([this.config.command, ...(this.config.args ?? [])])
        : undefined;
    // Matched on what was launched and what it says it is (see known-servers.ts).
    const knownVerdict =
      this.config.transport === 'stdio'
        ? knownServerVerdicts(
            [this.config.command, ...(this.config.args ?? [])],
            this.serverInfo?.name,
          )
        : undefined;
    const built = createMcpToolEntries({
      serverName: this.name,
      tools,
      caller: this,
      ...(known === undefined ? {} : { knownPathArguments: (name: string) => known[name] }),
      // A remote server's paths name its own disk, not ours: rewriting them would refuse or
      // corrupt them. Off unless the config turns it on (explicit overrides still apply).
      ...(this.rewritesPaths() ? {} : { detectPathArguments: () => [] }),
      overrides: { ...this.config.overrides, ...this.options.overrides },
      trusted: this.config.trusted,
      ...(this.config.trustedTools === undefined ? {} : { trustedTools: this.config.trustedTools }),
      ...(knownVerdict === undefined ? {} : { knownVerdict }),
      prefixToolNames: this.config.prefixToolNames,
    });
    const previous = new Map(this.currentEntries.map((entry) => [entry.descriptor.id, entry]));
    const added: string[] = [];
    const changed: string[] = [];
    const next = built.map((entry) => {
      const old = previous.get(entry.descriptor.id);
      if (!old) {
        if (this.listed) added.push(entry.descriptor.id);
        return entry;
      }
      previous.delete(entry.descriptor.id);
      if (old.descriptor.fingerprint === entry.descriptor.fingerprint) {
        // Unchanged since the last listing, but a read-only upgrade withheld then stays
        // withheld: re-inferring from the same definition must not grant it later.
        return this.changedToolIds.has(entry.descriptor.id)
          ? withheldReadOnlyUpgrade(old, entry)
          : entry;
      }
      changed.push(entry.descriptor.id);
      this.changedToolIds.add(entry.descriptor.id);
      return withheldReadOnlyUpgrade(old, entry);
    });
    const removed = this.listed ? [...previous.keys()] : [];
    this.currentEntries = Object.freeze(next);
    this.toolsByName = new Map(next.map((entry) => [entry.descriptor.originalName, entry]));
    this.listed = true;
    if (reason && (added.length > 0 || removed.length > 0 || changed.length > 0)) {
      this.logger.info(`Server "${this.name}" tools changed (${reason})`, {
        added,
        removed,
        changed,
      });
      this.events.emit('tools-changed', {
        serverName: this.name,
        reason,
        added,
        removed,
        changed,
        entries: this.currentEntries,
      });
    }
  }

  private onListChanged(generation: number): void {
    if (this.closing || generation !== this.generation) return;
    if (
      !this.serverCapabilities?.tools?.listChanged &&
      !this.warnedUndeclaredListChanged &&
      this.status === 'ready'
    ) {
      this.warnedUndeclaredListChanged = true;
      this.logger.warn(
        `Server "${this.name}" sent tools/list_changed without declaring tools.listChanged; refreshing anyway`,
      );
    }
    // Debounced; at most one refresh in flight and one queued (a storm costs a handful of lists).
    clearTimeout(this.debounceTimer);
    this.debounceTimer = setTimeout(() => {
      this.debounceTimer = undefined;
      this.runRefresh();
    }, this.options.refreshDebounceMs ?? 200);
  }

  private runRefresh(): void {
    if (this.closing) return;
    if (this.refreshing) {
      this.refreshQueued = true;
      return;
    }
    // A list_changed during startup is covered by the initial listing once it is ready.
    this.refreshing = this.refreshTools({}, 'list_changed')
      .catch(() => undefined)
      .finally(() => {
        this.refreshing = undefined;
        if (this.refreshQueued && !this.closing) {
          this.refreshQueued = false;
          this.runRefresh();
        }
      });
  }

  async refreshTools(
    options: { signal?: AbortSignal } = {},
    reason: ToolsChangedReason = 'refresh',
  ): Promise<void> {
    const connection = this.connection;
    if (!connection || this.status !== 'ready') {
      if (this.status === 'starting' || this.status === 'restarting') return;
      throw new ServerError(
        AgentsErrorCode.ServerUnavailable,
        `Cannot refresh the tools of server "${this.name}": it is ${this.status}.`,
        this.details('list', connection?.serverTransport),
      );
    }
    const abort = new AbortController();
    const timer = setTimeout(
      () => abort.abort(new Error('tools/list timed out')),
      this.timeouts.callMs,
    );
    const signal = options.signal ? AbortSignal.any([options.signal, abort.signal]) : abort.signal;
    try {
      const tools = await listAllTools(connection.client, { signal, serverName: this.name });
      // A restart during the listing installed a newer set; this one is outdated.
      if (connection !== this.connection || this.closing) return;
      this.swapTools(tools, reason);
      this.stale = false;
    } catch (error) {
      if (connection !== this.connection || this.closing) return;
      this.stale = true;
      const failure = this.describeFailure(error, connection.serverTransport, 'list');
      this.logger.warn(`${failure.message} Keeping the last known tool set (marked stale).`, {
        serverName: this.name,
      });
      throw failure;
    } finally {
      clearTimeout(timer);
    }
  }

  async callTool(
    name: string,
    args: Record<string, unknown>,
    context: ToolCallContext = {},
  ): Promise<CallToolResult> {
    return this.callOnce(name, args, context, true);
  }

  private async callOnce(
    name: string,
    args: Record<string, unknown>,
    callContext: ToolCallContext,
    mayRetry: boolean,
  ): Promise<CallToolResult> {
    // LangGraph passes its abort signal in the RunnableConfig; either signal cancels the call.
    const signal = toolCallSignal(callContext);
    const context = signal === callContext.signal ? callContext : { ...callContext, signal };
    context.signal?.throwIfAborted();
    if (this.listed && !this.toolsByName.has(name))
      return toolNoLongerAvailableResult(this.name, name);
    // L13: checked before anything is written, so an oversized payload never reaches the pipe.
    const tooBig = argumentBytesOverLimit(args, this.maxArgumentBytes);
    if (tooBig !== undefined) {
      return argumentsTooLargeResult(this.name, name, tooBig, this.maxArgumentBytes);
    }
    const connection = await this.readyConnection(context.signal, name);
    if (!this.toolsByName.has(name)) return toolNoLongerAvailableResult(this.name, name);
    // While the call runs, what the server asks of its client goes to the caller's client, and
    // the no-answer timeout stands still while the client (maybe a person) answers.
    const clock =
      context.clientRequests === undefined
        ? undefined
        : new ForwardingCallClock(this.timeouts.callMs, context.clientRequests);
    const leave = clock === undefined ? undefined : this.clientRequests.enter(clock.forwarder);
    try {
      const result = await sendToolCall(connection.client, name, args, context, {
        serverName: this.name,
        callMs: this.timeouts.callMs,
        maxCallMs: this.timeouts.maxCallMs,
        ...(clock === undefined ? {} : { idleDeadline: clock }),
        details: () => this.details('call', connection.serverTransport),
      });
      this.restartAttempts = 0;
      return result;
    } catch (error) {
      const failure = error as ServerError;
      // One slow call does not make a server unhealthy; a failed ping does.
      if (failure.code === AgentsErrorCode.Timeout) void this.checkHealth();
      if (failure.code === AgentsErrorCode.Aborted || failure.code === AgentsErrorCode.Timeout) {
        throw failure;
      }
      if (isSessionNotFound(failure) && mayRetry) {
        // The server forgot our session (404): the spec says re-initialize. The request was not
        // processed, so repeating it is safe even for write tools.
        await this.reconnect();
        return this.callOnce(name, args, context, false);
      }
      if (
        connection.superseded ||
        connection !== this.connection ||
        isConnectionClosed(failure.cause)
      ) {
        // The server went away under the call: say how it ended (exit code, stderr).
        const ended = this.describeFailure(failure, connection.serverTransport, 'call', name);
        const entry = this.toolsByName.get(name);
        const readOnly =
          entry?.descriptor.capabilities.readOnly.value === true &&
          entry.descriptor.capabilities.writes.value === false;
        // Write-class calls are never repeated: the server may have done the work before dying.
        if (
          mayRetry &&
          readOnly &&
          (this.options.retryReadOnlyAfterRestart ?? true) &&
          this.restartPolicy.enabled
        ) {
          try {
            await this.readyConnection(context.signal, name);
          } catch {
            throw ended;
          }
          return this.callOnce(name, args, context, false);
        }
        throw ended;
      }
      throw failure;
    } finally {
      clock?.stop();
      leave?.();
    }
  }

  /** The live connection, waiting (up to the call timeout) while a restart is under way. */
  private async readyConnection(
    signal: AbortSignal | undefined,
    toolName: string,
  ): Promise<Connection> {
    if (this.status === 'ready' && this.connection) return this.connection;
    if (this.status === 'closed' || this.closing) throw this.closedError('call', toolName);
    if (this.status === 'failed' || this.status === 'idle') {
      throw new ServerError(
        AgentsErrorCode.ServerUnavailable,
        this.status === 'idle'
          ? `Server "${this.name}" is not started; tool "${toolName}" cannot be called.`
          : `Server "${this.name}" is unavailable (${this.lastError?.message ?? 'it failed'}); tool "${toolName}" cannot be called.`,
        { ...this.details('call', undefined), toolName },
        { cause: this.lastError },
      );
    }
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        finish();
        reject(
          new ServerError(
            AgentsErrorCode.ServerUnavailable,
            `Server "${this.name}" did not come back within ${this.timeouts.callMs} ms; tool "${toolName}" was not called.`,
            { ...this.details('call', undefined), toolName },
          ),
        );
      }, this.timeouts.callMs);
      const onAbort = (): void => {
        finish();
        reject(
          new ServerError(
            AgentsErrorCode.Aborted,
            `Tool call "${toolName}" on server "${this.name}" was cancelled while the server was restarting; it was not sent.`,
            { ...this.details('call', undefined), toolName },
            { cause: signal?.reason },
          ),
        );
      };
      const waiter = {
        resolve: () => {
          finish();
          resolve();
        },
        reject: (error: ServerError) => {
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
    if (!this.connection) throw this.closedError('call', toolName);
    return this.connection;
  }

  private onConnectionClosed(connection: Connection): void {
    if (connection.superseded || this.closing || connection !== this.connection) return;
    connection.superseded = true;
    this.connection = undefined;
    const reason = connection.endReason ?? 'crashed';
    const error = this.describeFailure(
      new McpError(ErrorCode.ConnectionClosed, 'Connection closed'),
      connection.serverTransport,
      'call',
    );
    const exit = connection.serverTransport.stdio?.exit;
    this.logger.warn(error.message, { serverName: this.name });
    this.events.emit('server-end', {
      serverName: this.name,
      reason,
      exitCode: exit?.exitCode,
      signal: exit?.signal,
      error,
    });
    this.scheduleRestart(error);
  }

  private scheduleRestart(cause: ServerError): void {
    if (this.closing) return;
    if (!this.restartPolicy.enabled || this.restartAttempts >= this.restartPolicy.maxAttempts) {
      this.status = 'failed';
      const failure = new ServerError(
        AgentsErrorCode.ServerUnavailable,
        this.restartPolicy.enabled
          ? `Server "${this.name}" failed ${this.restartAttempts} restart attempt(s) and is marked failed: ${cause.message}`
          : `Server "${this.name}" stopped and restarts are disabled: ${cause.message}`,
        cause.details,
        { cause },
      );
      this.lastError = failure;
      this.rejectWaiters(failure);
      return;
    }
    this.restartAttempts += 1;
    const base = Math.min(
      this.restartPolicy.maxDelayMs,
      this.restartPolicy.initialDelayMs * 2 ** (this.restartAttempts - 1),
    );
    // ±20% jitter, so several crashed servers do not restart in lock step.
    const delayMs = Math.round(base * (0.8 + Math.random() * 0.4));
    this.status = 'restarting';
    this.lastError = cause;
    this.events.emit('server-restart', {
      serverName: this.name,
      attempt: this.restartAttempts,
      maxAttempts: this.restartPolicy.maxAttempts,
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
    if (this.closing) return;
    const started = Date.now();
    try {
      const { connection, tools } = await this.connectOnce(undefined);
      if (this.closing) {
        connection.superseded = true;
        await connection.serverTransport.close();
        return;
      }
      this.install(connection, tools, reason, started);
    } catch (error) {
      const failure = this.asServerError(error, 'initialize');
      this.logger.warn(`Restarting server "${this.name}" failed: ${failure.message}`, {
        serverName: this.name,
      });
      this.scheduleRestart(failure);
    }
  }

  /** Replaces the connection (HTTP session lost): new session, tools listed and compared again. */
  private async reconnect(): Promise<void> {
    const old = this.connection;
    if (old) old.superseded = true;
    this.connection = undefined;
    this.status = 'restarting';
    if (old) await old.serverTransport.close();
    await this.restartNow('reconnect');
    if ((this.status as ManagedServerStatus) !== 'ready') {
      throw this.lastError ?? this.closedError('connect');
    }
  }

  async ping(options: { signal?: AbortSignal } = {}): Promise<void> {
    const connection = this.connection;
    if (!connection || this.status !== 'ready') {
      throw new ServerError(
        AgentsErrorCode.ServerUnavailable,
        `Cannot ping server "${this.name}": it is ${this.status}.`,
        this.details('ping', undefined),
      );
    }
    try {
      await connection.client.ping({ timeout: this.timeouts.pingMs, signal: options.signal });
      this.restartAttempts = 0;
    } catch (error) {
      throw new ServerError(
        isMcpErrorCode(error, ErrorCode.RequestTimeout)
          ? AgentsErrorCode.Timeout
          : AgentsErrorCode.ServerUnavailable,
        `Server "${this.name}" did not answer ping within ${this.timeouts.pingMs} ms: ${errorMessage(error)}`,
        this.details('ping', connection.serverTransport),
        { cause: error },
      );
    }
  }

  /** Pings; a server that does not answer is wedged and gets restarted. */
  private checkHealth(): Promise<void> {
    this.healthCheck ??= (async () => {
      const connection = this.connection;
      if (!connection || this.status !== 'ready') return;
      try {
        await this.ping();
      } catch (error) {
        if (connection !== this.connection || this.closing) return;
        this.logger.warn(
          `Server "${this.name}" is unresponsive (${errorMessage(error)}); restarting it`,
          { serverName: this.name },
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
    clearTimeout(this.restartTimer);
    clearTimeout(this.debounceTimer);
    clearInterval(this.healthTimer);
    this.rejectWaiters(this.closedError('shutdown'));
    const connection = this.connection;
    this.connection = undefined;
    const errors: unknown[] = [];
    if (connection) {
      connection.superseded = true;
      await connection.serverTransport.close().catch((error: unknown) => errors.push(error));
      await connection.client.close().catch(() => undefined);
    }
    await this.startingTransport?.close().catch((error: unknown) => errors.push(error));
    // Let a start or restart that was mid-way notice the close and clean up its own transport.
    await this.startPromise?.catch(() => undefined);
    await this.restartInFlight?.catch(() => undefined);
    await this.refreshing?.catch(() => undefined);
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
        this.details('shutdown', connection?.serverTransport),
        { cause: errors[0] },
      );
    }
  }

  private rejectWaiters(error: ServerError): void {
    for (const waiter of this.readyWaiters.splice(0)) waiter.reject(error);
  }

  private details(phase: ServerPhase, serverTransport: ServerTransport | undefined) {
    const stdio = serverTransport?.stdio;
    const stderrTail = stdio?.stderrTail();
    return {
      serverName: this.name,
      phase,
      target: serverTransport?.target,
      ...(stdio?.exit ? { exitCode: stdio.exit.exitCode, signal: stdio.exit.signal } : {}),
      ...(stderrTail ? { stderrTail } : {}),
    };
  }

  private closedError(phase: ServerPhase, toolName?: string): ServerError {
    return new ServerError(
      AgentsErrorCode.Closed,
      toolName
        ? `Server "${this.name}" is closed; tool "${toolName}" cannot be called.`
        : `Server "${this.name}" was closed during ${phase}.`,
      { ...this.details(phase, undefined), ...(toolName ? { toolName } : {}) },
    );
  }

  private asServerError(error: unknown, phase: ServerPhase): ServerError {
    if (error instanceof ServerError) return error;
    return new ServerError(
      AgentsErrorCode.ServerStartFailed,
      `Server "${this.name}" failed during ${phase}: ${errorMessage(error)}`,
      this.details(phase, undefined),
      { cause: error },
    );
  }

  /** Turns a failure into a ServerError naming the server, phase, target, exit and stderr tail. */
  private describeFailure(
    error: unknown,
    serverTransport: ServerTransport,
    phase: ServerPhase,
    toolName?: string,
  ): ServerError {
    if (
      error instanceof ServerError &&
      (error.code === AgentsErrorCode.Timeout ||
        error.code === AgentsErrorCode.Aborted ||
        error.code === AgentsErrorCode.Closed)
    ) {
      return error;
    }
    const stdio = serverTransport.stdio;
    const details = { ...this.details(phase, serverTransport), ...(toolName ? { toolName } : {}) };
    const during =
      phase === 'call' && toolName
        ? `tools/call "${toolName}"`
        : phase === 'list'
          ? 'tools/list'
          : phase;
    const stderr = details.stderrTail
      ? ` Last stderr lines:\n${lastLines(details.stderrTail, 10)}`
      : '';
    if (stdio?.failure) {
      return new ServerError(
        AgentsError.isInstance(stdio.failure) ? stdio.failure.code : AgentsErrorCode.ProtocolError,
        `${stdio.failure.message} (during ${during})`,
        details,
        { cause: stdio.failure },
      );
    }
    if (stdio?.exit) {
      const how = stdio.exit.signal
        ? `was killed by ${stdio.exit.signal}`
        : `exited with code ${stdio.exit.exitCode}`;
      return new ServerError(
        phase === 'call' || phase === 'list'
          ? AgentsErrorCode.ServerUnavailable
          : AgentsErrorCode.ServerStartFailed,
        `Server "${this.name}" ${how} during ${during} (command: ${serverTransport.target}).${stderr}`,
        details,
        { cause: error },
      );
    }
    if (
      error instanceof ServerError &&
      error.details.serverName === this.name &&
      !isConnectionClosed(error.cause)
    ) {
      return error;
    }
    if (
      isConnectionClosed(error) ||
      (error instanceof ServerError && isConnectionClosed(error.cause))
    ) {
      return new ServerError(
        phase === 'call' || phase === 'list'
          ? AgentsErrorCode.ServerUnavailable
          : AgentsErrorCode.ServerStartFailed,
        `The connection to server "${this.name}" closed during ${during} (${serverTransport.target}).${stderr}`,
        details,
        { cause: error },
      );
    }
    return new ServerError(
      phase === 'call'
        ? AgentsErrorCode.ToolCallFailed
        : phase === 'list'
          ? AgentsErrorCode.ProtocolError
          : AgentsErrorCode.ServerStartFailed,
      `Server "${this.name}" failed during ${during} (${serverTransport.target}): ${errorMessage(error)}${stderr}`,
      details,
      { cause: error },
    );
  }
}

function isConnectionClosed(error: unknown): boolean {
  return isMcpErrorCode(error, ErrorCode.ConnectionClosed);
}

function lastLines(text: string, count: number): string {
  return text.split('\n').slice(-count).join('\n');
}

/**
 * A changed definition is inferred again, but a write-class tool never becomes read-only by
 * changing itself (rug pull, T3d): keep the old write verdicts until an operator overrides.
 */
function withheldReadOnlyUpgrade(old: ToolEntry, next: ToolEntry): ToolEntry {
  const before = old.descriptor.capabilities;
  const after = next.descriptor.capabilities;
  if (before.readOnly.value || !after.readOnly.value || after.readOnly.source === 'override')
    return next;
  return {
    execute: (args, context) => next.execute(args, context),
    descriptor: {
      ...next.descriptor,
      capabilities: {
        ...after,
        readOnly: {
          value: false,
          source: before.readOnly.source,
          reason:
            'definition changed at run time; the read-only upgrade is withheld until an operator overrides it',
        },
        writes: before.writes,
        destructive: before.destructive,
        disagreements: [
          ...after.disagreements,
          'read-only upgrade after a definition change was withheld',
        ],
      },
    },
  };
}
