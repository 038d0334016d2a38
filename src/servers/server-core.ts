import type { Client, ClientCapabilities, Transport } from '@modelcontextprotocol/client';
import type { Implementation, ServerCapabilities } from '@modelcontextprotocol/client';
import type {
  NamedServerConfig,
  ServerRestartPolicy,
  ServerTimeouts,
} from '../config/server-schema.js';
import type { ToolOverrides } from '../config/tool-schema.js';
import type { ServerError } from '../errors.js';
import type { Confinement } from '../confinement/confinement.js';
import type { ServerTransport } from './connect.js';
import type { ServerEndReason, ServerEventEmitter } from './server-events.js';
import type { ServerFailures } from './server-failure.js';
import type { ServerLogger } from './server-logger.js';

/** Where a managed server is in its life. */
export type ManagedServerStatus =
  'idle' | 'starting' | 'ready' | 'restarting' | 'failed' | 'closed';

/** Options of `createManagedServer`. */
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
  /** Ping the server this often and restart it when it does not answer. Default: `timeouts.healthCheckIntervalMs`. */
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
  /** Builds the transport; defaults to `createServerTransport`. Tests pass in-memory ones. */
  transportFactory?: (config: NamedServerConfig) => ServerTransport;
  /**
   * Wraps each connection's transport, whichever factory built it (a run's recorder: see
   * docs/replay.md). Default none.
   */
  wrapTransport?: (transport: Transport, config: NamedServerConfig) => Transport;
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

/** One connected client of a managed server; a restart makes a new one. */
export interface Connection {
  generation: number;
  client: Client;
  /** What `client` declares (a call that declares the Tasks extension declares these too). */
  clientCapabilities: ClientCapabilities;
  serverTransport: ServerTransport;
  protocolVersion: string | undefined;
  /** Set when we close it on purpose, so the close handler knows it is not a crash. */
  superseded: boolean;
  endReason?: ServerEndReason;
  /**
   * True while tool-list changes reach us as they happen: a 2025 server that declared
   * `tools.listChanged`, or an open 2026 `subscriptions/listen` stream.
   */
  toolChangesLive?: boolean;
  /** The `ttlMs` of the connection's first tool list (2026-07-28 caching hint), if any. */
  toolListTtlMs?: number;
}

/**
 * The state a managed server's parts share (connection, supervisor, tool set, call): who it
 * is, how it is configured, and where it is in its life. The `ManagedServer` owns it; each
 * part keeps its own state and reads or moves this one.
 */
export interface ServerCore {
  readonly name: string;
  readonly config: NamedServerConfig;
  readonly options: ManagedServerOptions;
  readonly timeouts: ServerTimeouts;
  readonly restartPolicy: ServerRestartPolicy;
  readonly logger: ServerLogger;
  readonly events: ServerEventEmitter;
  readonly failures: ServerFailures;
  status: ManagedServerStatus;
  /** Generation of the newest connection begun (a restart begins a new one). */
  generation: number;
  /** The live connection, while there is one. */
  connection: Connection | undefined;
  /** The error that made the server `failed`, or the cause of a restart under way. */
  lastError: ServerError | undefined;
  /** Set once `close()` began: nothing new starts. */
  readonly closing: boolean;
  serverCapabilities: ServerCapabilities | undefined;
  serverInfo: Implementation | undefined;
  instructions: string | undefined;
}
