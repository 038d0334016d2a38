import type { Client, jsonSchemaValidator } from '@modelcontextprotocol/client';
import { ProtocolError, SdkError, SdkErrorCode, SdkHttpError } from '@modelcontextprotocol/client';
import type { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';

/**
 * The MCP clients this library talks through. Our own connections use the SDK v2 `Client`
 * (`@modelcontextprotocol/client`, both revisions: 2026-07-28 stateless and 2025-11-25). A caller
 * may still hand `createMcpToolAdapter` a v1 `Client` (`@modelcontextprotocol/sdk`), which speaks
 * 2025-era revisions only; the few calls that differ go through the helpers below.
 */
export type McpClient = Client | V1Client;

/** True for the SDK v2 client (it knows protocol eras; v1 does not). */
export function isV2Client(client: McpClient): client is Client {
  return typeof (client as Partial<Client>).getProtocolEra === 'function';
}

/**
 * A JSON Schema "validator" that accepts everything, for the SDK v2 client. Output schemas are
 * compiled once, at activation, by `mcp/json-schema.ts` and checked by `assertToolOutput` with
 * our messages; the SDK would otherwise compile each a second time and refuse a mismatch first,
 * with its own wording.
 */
export const CHECKED_ELSEWHERE: jsonSchemaValidator = {
  // The SDK's result type is declared twice in its bundles; the shape is the one it reads.
  getValidator: () =>
    ((input: unknown) => ({ valid: true, data: input, errorMessage: undefined })) as never,
};

/**
 * The schema issues of a result the SDK refused (v1 throws the zod error itself, v2 an
 * `INVALID_RESULT` SdkError carrying the issues as JSON), or undefined for any other error.
 */
export function resultSchemaIssues(
  error: unknown,
): Array<{ path?: unknown[]; message?: string }> | undefined {
  if (
    error instanceof Error &&
    /^\$?ZodError$/.test(error.name) &&
    Array.isArray((error as { issues?: unknown }).issues)
  ) {
    return (error as unknown as { issues: Array<{ path?: unknown[]; message?: string }> }).issues;
  }
  if (SdkError.isInstance(error) && error.code === SdkErrorCode.InvalidResult) {
    const json = error.message.slice(error.message.indexOf('['));
    try {
      const issues: unknown = JSON.parse(json);
      if (Array.isArray(issues)) return issues as Array<{ path?: unknown[]; message?: string }>;
    } catch {
      // Not the SDK's usual wording: fall back to the message.
    }
    return [{ message: error.message }];
  }
  return undefined;
}

/** What went wrong in an SDK call, whichever SDK major raised it. */
export type SdkFailureKind = 'timeout' | 'closed';

/** The v1 codes of the two local failures (McpError -32001 / -32000) and their v2 names. */
const V1_CODES: Record<SdkFailureKind, number> = { timeout: -32001, closed: -32000 };
const V2_CODES: Record<SdkFailureKind, SdkErrorCode> = {
  timeout: SdkErrorCode.RequestTimeout,
  closed: SdkErrorCode.ConnectionClosed,
};

/** True when `error` is the SDK's own "request timed out" or "connection closed" (v1 or v2). */
export function isSdkFailure(error: unknown, kind: SdkFailureKind): boolean {
  if (error instanceof McpError) return error.code === V1_CODES[kind];
  if (SdkError.isInstance(error)) return error.code === V2_CODES[kind];
  return false;
}

/** The JSON-RPC error code the server answered with (v1 `McpError`, v2 `ProtocolError`), if any. */
export function jsonRpcErrorCode(error: unknown): number | undefined {
  if (error instanceof McpError) {
    return error.code === V1_CODES.closed || error.code === V1_CODES.timeout
      ? undefined
      : error.code;
  }
  if (ProtocolError.isInstance(error)) return error.code;
  return undefined;
}

/** The JSON-RPC error data the server sent along, if any. */
export function jsonRpcErrorData(error: unknown): unknown {
  if (error instanceof McpError || ProtocolError.isInstance(error)) return error.data;
  return undefined;
}

/** The JSON-RPC error an HTTP error response carried in its body, if it was one. */
export function jsonRpcErrorInHttpBody(
  error: unknown,
): { code: number; message?: string; data?: unknown } | undefined {
  if (!SdkHttpError.isInstance(error)) return undefined;
  const text = (error.data as { text?: unknown }).text;
  if (typeof text !== 'string') return undefined;
  try {
    const parsed = JSON.parse(text) as { error?: { code?: unknown } };
    return typeof parsed.error?.code === 'number'
      ? (parsed.error as { code: number; message?: string; data?: unknown })
      : undefined;
  } catch {
    return undefined;
  }
}

/** The HTTP status an SDK transport error carries (v1 `StreamableHTTPError.code`, v2 `SdkHttpError.status`). */
export function httpStatusOf(error: unknown): number | undefined {
  if (SdkHttpError.isInstance(error)) return error.status;
  if (error instanceof Error && error.name === 'StreamableHTTPError') {
    const code = (error as { code?: unknown }).code;
    return typeof code === 'number' ? code : undefined;
  }
  return undefined;
}
