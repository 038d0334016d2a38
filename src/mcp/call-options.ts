/**
 * The options of one `tools/call` (`mcp/tool-call.ts`): their own module so that the lazily loaded
 * task code (`mcp/tasks.ts`) can name them without importing the module that loads it.
 */
import type { ClientCapabilities } from '@modelcontextprotocol/client';
import type { ServerErrorDetails } from '../errors.js';
import type { TaskSupport } from './task-handles.js';

/**
 * A no-answer deadline kept by the caller instead of the SDK's per-call timeout (the
 * forwarding clock of `servers/client-request-router.ts`, which stands still while a person
 * answers an elicitation). The SDK then enforces only `maxCallMs`.
 */
export interface IdleDeadline {
  /** Aborts when the deadline passes. */
  readonly signal: AbortSignal;
  readonly expired: boolean;
  /** Progress arrived: restart the deadline. */
  touch(): void;
}

/** Options of one `sendToolCall` (`mcp/tool-call.ts`). */
export interface SendToolCallOptions {
  /** Named in errors. */
  serverName: string;
  /** Timeout of the call; progress restarts it only with `resetOnProgress`. */
  callMs: number;
  /** Hard cap on the whole call, even while progress arrives. */
  maxCallMs: number;
  /** Each progress notification restarts `callMs` (a progress token on every call). */
  resetOnProgress?: boolean;
  /** Replaces the `callMs` timeout for this call (see {@link IdleDeadline}). */
  idleDeadline?: IdleDeadline;
  /** Folders a 2026 server's `roots/list` question is answered with (the sandbox root). */
  roots?: () => string[];
  /**
   * The tool's listed input schema, for the legs of a multi-round-trip call: the SDK then mirrors
   * `Mcp-Param-*` headers from it without its own output check, which would take an
   * `input_required` answer of a tool with an `outputSchema` for a result missing its content.
   */
  inputSchema?: () => unknown;
  /** Extra error details (the target, a stdio server's stderr tail), read only on failure. */
  details?: () => Partial<ServerErrorDetails>;
  /** The tool's listed `execution.taskSupport` (see `ListedToolHints` in `mcp/tool-call.ts`). */
  taskSupport?: () => TaskSupport | undefined;
  /**
   * The capabilities the client was built with: a call that declares the Tasks extension
   * declares them too (2026 capabilities travel per request; the call's own replace the client's).
   */
  clientCapabilities?: ClientCapabilities;
}
