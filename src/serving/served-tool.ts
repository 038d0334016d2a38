import type { Tool, ToolAnnotations } from '@modelcontextprotocol/server';
import { AgentsError, AgentsErrorCode, errorMessage } from '../errors.js';
import { toolErrorResult, type ToolDescriptor, type ToolResult } from '../core/tool-descriptor.js';

// How served tools and their failures look on the wire, the same on both protocol revisions.

/** Key under a served tool's `_meta` holding its id and capability provenance. */
export const SERVED_TOOL_META_KEY = 'agents/tool';
/** Key under an error result's `_meta` holding the error code (and server, when known). */
export const SERVED_ERROR_META_KEY = 'agents/error';

/**
 * The default `instructions` of a served server: the one thing a client cannot infer from the
 * schemas is how results are shaped (ADR-006 "Serve MCP as a second transport over the same
 * tools, not a second implementation" spends the field on the same thing).
 */
export const DEFAULT_SERVE_INSTRUCTIONS = [
  'Tools are served by an agents plugin over the same execution path its LangGraph agents use.',
  'File paths in arguments and results are logical paths relative to the sandbox root; the',
  'server maps them into its sandbox, so never pass host paths.',
  "A call that changed files carries `_meta['agents/change']` in its result: { toolId, snapshot,",
  'parent, changed: [{ status, path }] }, listing every file it added (A), modified (M) or',
  'deleted (D).',
  'Tool failures (including an upstream server being down) come back as results with',
  "isError: true and the reason in the text content (and `_meta['agents/error'].code`); they",
  'are not protocol errors. Tool annotations state capabilities inferred by the plugin',
  '(readOnlyHint is never true for a tool that may write).',
  "A call the server's safety policy wants approved is put to the client with elicitation/create",
  '(decision: approve | reject); a client without elicitation gets an isError refusal.',
  'Upstream servers behind the tools may ask the client, during a call, for sampling/createMessage',
  'or elicitation/create, and send log messages (notifications/message, logger "<server>/..."):',
  'they are forwarded on the call when the client declared the capability.',
  'On protocol 2026-07-28 these questions come as an input_required result to answer by retrying',
  'the call, and log messages only when the request set a logLevel.',
].join(' ');

/** Annotations stating OUR inferred capabilities; upstream hints are untrusted and not copied. */
export function toServedAnnotations(descriptor: ToolDescriptor): ToolAnnotations {
  const { capabilities } = descriptor;
  // Never claim read-only for a tool any evidence marks as writing.
  const readOnly = capabilities.readOnly.value && !capabilities.writes.value;
  const annotations: ToolAnnotations = {
    readOnlyHint: readOnly,
    destructiveHint: readOnly ? false : capabilities.destructive.value,
    openWorldHint: capabilities.openWorld.value,
  };
  if (descriptor.title !== undefined) annotations.title = descriptor.title;
  return annotations;
}

/** The `tools/list` entry of one descriptor: name, description and schemas verbatim. */
export function toServedTool(descriptor: ToolDescriptor): Tool {
  const { capabilities } = descriptor;
  const tool: Record<string, unknown> = {
    name: descriptor.name,
    description: descriptor.description,
    inputSchema: descriptor.inputSchema,
  };
  if (descriptor.title !== undefined) tool['title'] = descriptor.title;
  if (descriptor.outputSchema !== undefined) tool['outputSchema'] = descriptor.outputSchema;
  tool['annotations'] = toServedAnnotations(descriptor);
  tool['_meta'] = {
    [SERVED_TOOL_META_KEY]: {
      id: descriptor.id,
      source: descriptor.source,
      ...(descriptor.serverName === undefined ? {} : { serverName: descriptor.serverName }),
      capabilities: {
        readOnly: { value: capabilities.readOnly.value, source: capabilities.readOnly.source },
        writes: { value: capabilities.writes.value, source: capabilities.writes.source },
        destructive: {
          value: capabilities.destructive.value,
          source: capabilities.destructive.source,
        },
        openWorld: { value: capabilities.openWorld.value, source: capabilities.openWorld.source },
      },
    },
  };
  // The schemas are served exactly as the registry holds them; the SDK's Tool type only
  // narrows `inputSchema.type`, which a descriptor from an MCP server already satisfies.
  return tool as Tool;
}

/** Turns a thrown error into the `isError` result the client sees (never a protocol error). */
export function toErrorResult(toolName: string, error: unknown): ToolResult {
  const details: Record<string, unknown> = {
    code: AgentsError.isInstance(error) ? error.code : AgentsErrorCode.ToolCallFailed,
  };
  if (AgentsError.isInstance(error)) {
    // Only the routing facts; stderr tails and commands can hold secrets.
    for (const key of ['serverName', 'phase', 'toolName'] as const) {
      const value = error.details[key];
      if (typeof value === 'string') details[key] = value;
    }
  }
  return toolErrorResult(`Tool "${toolName}" failed: ${errorMessage(error)}`, {
    [SERVED_ERROR_META_KEY]: details,
  });
}

/**
 * How a served call that the policy wants approved is handled. There is no graph to pause over
 * MCP, so the client that made the call is asked with `elicitation/create` (on 2026-07-28 as an
 * `input_required` question); a client without elicitation gets an `isError` refusal.
 */
export interface ServeApprovalOptions {
  /** How long to wait for the client's answer (default 10 minutes); then the call is refused. */
  timeoutMs?: number;
  /** What the refusal to a client without elicitation suggests instead. */
  noElicitationHint?: string;
}
