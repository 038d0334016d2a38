/**
 * One error type for the whole library. Callers branch on `code`; `details` carries the typed
 * data (server, phase, path, ...) and `cause` always keeps the original error.
 */
export const AgentsErrorCode = {
  ConfigInvalid: 'CONFIG_INVALID',
  ConfigNotFound: 'CONFIG_NOT_FOUND',
  ServerStartFailed: 'SERVER_START_FAILED',
  ServerUnavailable: 'SERVER_UNAVAILABLE',
  ServerNotFound: 'SERVER_NOT_FOUND',
  /** A remote server wants an OAuth login (or a new one) that a non-interactive run cannot do. */
  AuthRequired: 'AUTH_REQUIRED',
  ProtocolError: 'PROTOCOL_ERROR',
  ToolNotFound: 'TOOL_NOT_FOUND',
  ToolUnavailable: 'TOOL_UNAVAILABLE',
  ToolDisabled: 'TOOL_DISABLED',
  ToolNameCollision: 'TOOL_NAME_COLLISION',
  ToolCallFailed: 'TOOL_CALL_FAILED',
  InvalidArguments: 'INVALID_ARGUMENTS',
  PathOutsideSandbox: 'PATH_OUTSIDE_SANDBOX',
  SandboxFailed: 'SANDBOX_FAILED',
  /** A sandbox's `from` names no commit of the repository (or `head` in one with no commits). */
  RevisionNotFound: 'REVISION_NOT_FOUND',
  ConfinementUnavailable: 'CONFINEMENT_UNAVAILABLE',
  /** A connection the network host lists refuse (a remote server's URL or one of its redirects). */
  NetworkRefused: 'NETWORK_REFUSED',
  CheckpointNotFound: 'CHECKPOINT_NOT_FOUND',
  RunActive: 'RUN_ACTIVE',
  RollbackFailed: 'ROLLBACK_FAILED',
  SkillNotFound: 'SKILL_NOT_FOUND',
  ActorNotFound: 'ACTOR_NOT_FOUND',
  PolicyDenied: 'POLICY_DENIED',
  Aborted: 'ABORTED',
  Timeout: 'TIMEOUT',
  Closed: 'CLOSED',
  /** A cassette (a recorded run) is malformed or written in a format version this copy cannot read. */
  CassetteInvalid: 'CASSETTE_INVALID',
  /** A replayed run asked for something its cassette does not hold (a request, an argument, a turn). */
  ReplayDiverged: 'REPLAY_DIVERGED',
} as const;
export type AgentsErrorCode = (typeof AgentsErrorCode)[keyof typeof AgentsErrorCode];

const BRAND = Symbol.for('agents.error');

/** Options accepted by {@link AgentsError}. */
export interface AgentsErrorOptions {
  cause?: unknown;
  details?: Record<string, unknown>;
}

/**
 * The base error of the library. Messages say what happened, where, and what to do next.
 * `AgentsError.isInstance()` works across two loaded copies of the package.
 */
export class AgentsError extends Error {
  readonly code: AgentsErrorCode;
  readonly details: Record<string, unknown>;
  readonly [BRAND] = true;

  constructor(code: AgentsErrorCode, message: string, options: AgentsErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AgentsError';
    this.code = code;
    this.details = options.details ?? {};
  }

  /** True for any AgentsError, including one thrown by another copy of this package. */
  static isInstance(value: unknown): value is AgentsError {
    return typeof value === 'object' && value !== null && BRAND in value;
  }

  /** True when `value` is an AgentsError with the given code. */
  static hasCode(value: unknown, code: AgentsErrorCode): value is AgentsError {
    return AgentsError.isInstance(value) && value.code === code;
  }
}

/** The phase of a server's life in which an error happened. */
export type ServerPhase =
  'spawn' | 'connect' | 'initialize' | 'list' | 'call' | 'ping' | 'shutdown';

/** Data carried by errors that concern one MCP server. */
export interface ServerErrorDetails extends Record<string, unknown> {
  serverName: string;
  phase: ServerPhase;
  /** The command line (stdio) or URL (http/sse), with secrets redacted. */
  target?: string;
  exitCode?: number | null;
  signal?: string | null;
  stderrTail?: string;
  toolName?: string;
}

/** An error concerning one MCP server; `details` says which server and in which phase. */
export class ServerError extends AgentsError {
  declare readonly details: ServerErrorDetails;
  constructor(
    code: AgentsErrorCode,
    message: string,
    details: ServerErrorDetails,
    options: { cause?: unknown } = {},
  ) {
    super(code, message, { ...options, details });
    this.name = 'ServerError';
  }
}

const MCP_ERROR_PREFIX = /^(?:MCP error -?\d+: )+/;
const REPEATED_MCP_ERROR_PREFIX = /(MCP error (-?\d+): )(?:MCP error \2: )+/g;

/**
 * Returns a readable message for any thrown value. The SDK's `McpError` prefixes
 * `MCP error N: ` to a message that an SDK server already prefixed, so a repeated prefix is
 * collapsed to one.
 */
export function errorMessage(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.replace(REPEATED_MCP_ERROR_PREFIX, '$1');
}

/** True when `error` is a Node system error with this `code` (`ENOENT`, `EEXIST`, ...). */
export function isErrno(error: unknown, code: string): boolean {
  return typeof error === 'object' && error !== null && 'code' in error && error.code === code;
}

/** A message without its leading `MCP error N: ` prefixes, for text that states the code itself. */
export function withoutMcpErrorPrefix(message: string): string {
  return message.replace(MCP_ERROR_PREFIX, '');
}
