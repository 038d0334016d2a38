import type { CallToolResult, ToolAnnotations } from '@modelcontextprotocol/client';
import type { ClientRequestForwarder } from './client-requests.js';
import type { InputRequestHandler, InputRequestObserver } from './input-requests.js';

/** Where a tool comes from. */
export type ToolSource = 'mcp' | 'builtin' | 'custom' | 'agent-skill';

/** Where a capability verdict came from, strongest first. */
export type CapabilitySource =
  'override' | 'annotation' | 'known-server' | 'name-heuristic' | 'default';

/** One capability verdict and the reason for it. */
export interface CapabilityVerdict {
  value: boolean;
  source: CapabilitySource;
  /** Human-readable reason, e.g. `name word "delete"` or `annotation readOnlyHint=true ignored: name says write`. */
  reason: string;
}

/** Capability metadata of a tool; every verdict keeps its provenance. */
export interface Capabilities {
  readOnly: CapabilityVerdict;
  writes: CapabilityVerdict;
  destructive: CapabilityVerdict;
  openWorld: CapabilityVerdict;
  /** Disagreements between evidence sources (e.g. name says write, annotation says read-only). */
  disagreements: string[];
}

/** A JSON Schema object as a server sent it. Kept verbatim; never simplified. */
export type JsonSchemaObject = { type?: unknown; [key: string]: unknown };

/**
 * The record every tool becomes, whatever its source.
 * `inputSchema` / `outputSchema` are exactly what the server sent.
 */
export interface ToolDescriptor {
  /**
   * Stable id, the one policy rules, pins, known tools and the audit log use: a tool resource's
   * id (`repo.status`; ADR-0027 "AEP tool contributions resolve to MCP") for a tool reached
   * through one, so it survives a server
   * rename; otherwise `mcp:SERVER/TOOL`, `builtin:NAME`, `custom:NAME`, `skill:NAME`.
   */
  id: string;
  /** Provider-safe name the model sees (`^[a-zA-Z0-9_-]{1,64}$`). */
  name: string;
  /** The tool's own name at its source (the MCP server's tool name). */
  originalName: string;
  source: ToolSource;
  /** The MCP server name, for `source: 'mcp'`. */
  serverName?: string;
  title?: string;
  /** Sanitized, capped description the model sees. */
  description: string;
  /** The original description as received, kept for audit. */
  rawDescription?: string;
  inputSchema: JsonSchemaObject;
  outputSchema?: JsonSchemaObject;
  annotations?: ToolAnnotations;
  /**
   * The listed `execution.taskSupport` of an MCP tool (Tasks extension): `forbidden` is never
   * offered a task, `required` always is.
   */
  taskSupport?: 'required' | 'optional' | 'forbidden';
  capabilities: Capabilities;
  /**
   * Argument locations that hold file paths, as dotted paths with `[]` for array items:
   * `path`, `paths[]`, `edits[].file`.
   */
  pathArguments: string[];
  /** sha256 of the canonical (sorted keys) wire definition; changes when anything changes. */
  fingerprint: string;
  /**
   * Problems found while building the descriptor that did not stop it (e.g. an input schema
   * that could not be compiled, so arguments are checked only by the server).
   */
  warnings?: string[];
}

/** Where one tool call runs: built once where it enters (tool, `agents serve`, CLI), never copied. */
export interface ToolCallContext {
  /** The call's one abort signal (a graph run's is the RunnableConfig's `signal`). */
  readonly signal?: AbortSignal;
  readonly toolCallId?: string;
  readonly threadId?: string;
  /** The LangGraph RunnableConfig, when called from a graph. */
  readonly config?: unknown;
  /**
   * Where a call that became a server task (MCP Tasks extension) records the task id, keyed by
   * `threadId` and `toolCallId`: the LangGraph store of the run (`compile({ store })`). A run
   * that paused or crashed before the result then follows the same task when it resumes,
   * instead of calling the tool again.
   */
  readonly taskStore?: ToolTaskStore;
}

/** What a call may use while it runs, beside its context: a layer that gates one passes a new set. */
export interface ToolCallCapabilities {
  /** Progress from the server, when it sends any. */
  readonly onProgress?: (progress: { progress: number; total?: number; message?: string }) => void;
  /**
   * The call is being sent again: its server died under a read-only call and came back
   * (`server-restarted`), or forgot the session before processing it (`session-lost`).
   */
  readonly onRetry?: (retry: {
    reason: 'server-restarted' | 'session-lost';
    message: string;
  }) => void;
  /**
   * Where an upstream MCP server's `sampling/createMessage`, `elicitation/create` and log
   * messages go while this call runs: the MCP client that made it (`agents serve`). Absent in a
   * graph run: the upstream server is then not offered sampling or elicitation at all.
   */
  readonly clientRequests?: ClientRequestForwarder;
  /**
   * Who answers a 2026-07-28 server's `input_required` questions (elicitation, sampling when
   * offered) for this call: in a graph run, LangGraph `interrupt()` (set by `createToolSet`),
   * behind the policy's gate. Used only when `clientRequests` is absent; without either, the SDK
   * answers from its registered handlers.
   */
  readonly inputRequests?: InputRequestHandler;
  /** Told how each of those questions ended, roots and refusals included (the audit log). */
  readonly inputObserver?: InputRequestObserver;
}

/** The part of LangGraph's `BaseStore` a {@link ToolCallContext.taskStore} needs. */
export interface ToolTaskStore {
  get(namespace: string[], key: string): Promise<{ value: Record<string, unknown> } | null>;
  put(namespace: string[], key: string, value: Record<string, unknown>): Promise<void>;
}

/**
 * The result shape of every tool call, whatever its source: MCP's `CallToolResult`.
 * Middleware may add records under `_meta` (see {@link ResultMetaKey}).
 */
export type ToolResult = CallToolResult;

/** An `isError` result the model reads as text, with optional `_meta`. */
export function toolErrorResult(text: string, meta?: Record<string, unknown>): ToolResult {
  return { content: [{ type: 'text', text }], isError: true, ...(meta ? { _meta: meta } : {}) };
}

/** Keys this library uses inside a result's `_meta`. */
export const ResultMetaKey = {
  /** A {@link ChangeRecord} when the call changed files in the sandbox. */
  Change: 'agents/change',
  /** Policy decision for the call. */
  Policy: 'agents/policy',
  /** Output budget record when the result was cut. */
  Budget: 'agents/budget',
} as const;

/** A descriptor plus the one function that runs it. */
export interface ToolEntry {
  descriptor: ToolDescriptor;
  /**
   * Runs the tool. Tool-level failures come back as `isError: true`; transport failures throw.
   * A wrapper passes `capabilities` on (without them: no progress, forwarding or gates).
   */
  execute(
    args: Record<string, unknown>,
    context: ToolCallContext,
    capabilities?: ToolCallCapabilities,
  ): Promise<ToolResult>;
}
