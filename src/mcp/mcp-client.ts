import type { Client, jsonSchemaValidator } from '@modelcontextprotocol/client';
import type { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';

/**
 * The MCP clients this library talks through. Our own connections use the SDK v2 `Client`
 * (`@modelcontextprotocol/client`, both revisions: 2026-07-28 stateless and 2025-11-25). A caller
 * may still hand `createMcpToolAdapter` a v1 `Client` (`@modelcontextprotocol/sdk`), which speaks
 * 2025-era revisions only; the few calls that differ go through the helpers below.
 */
export type McpClient = Client | V1Client;

/**
 * The SDKs' error classes, told apart without importing them: importing either SDK's errors
 * loads zod and the SDK's schemas (about 100 modules), which a program that only imports the
 * adapter should not pay for (issue 29). A program holding a client has loaded its SDK anyway.
 *
 * v2 errors carry their classes' brands under `Symbol.for('mcp.sdk.errorBrands')`: the SDK's
 * own `isInstance`/`instanceof` read exactly this (it is how they match across bundled copies),
 * and a subclass carries its parents' brands too (`SdkHttpError` is an `SdkError`).
 */
const MCP_ERROR_BRANDS = Symbol.for('mcp.sdk.errorBrands');

type V2ErrorBrand = 'mcp.SdkError' | 'mcp.SdkHttpError' | 'mcp.ProtocolError';

/** `SdkError.isInstance(error)` and the like, by the brand the SDK stamps on its errors. */
function hasV2Brand(error: unknown, brand: V2ErrorBrand): boolean {
  if (typeof error !== 'object' || error === null) return false;
  if (!Object.prototype.hasOwnProperty.call(error, MCP_ERROR_BRANDS)) return false;
  const brands = (error as { [MCP_ERROR_BRANDS]?: unknown })[MCP_ERROR_BRANDS];
  return (
    typeof (brands as { has?: unknown } | undefined)?.has === 'function' &&
    (brands as Set<string>).has(brand)
  );
}

/** An SDK v2 `SdkError` (or subclass): a local failure, with a string `code`. */
interface V2SdkError extends Error {
  code: string;
  data?: unknown;
}

/** An SDK v2 `SdkHttpError`: a transport's HTTP error response. */
interface V2SdkHttpError extends V2SdkError {
  readonly status: number;
}

/** An SDK v2 `ProtocolError` or a v1 `McpError`: the server answered with a JSON-RPC error. */
interface JsonRpcError extends Error {
  code: number;
  data?: unknown;
}

function isV2SdkError(error: unknown): error is V2SdkError {
  return hasV2Brand(error, 'mcp.SdkError');
}

function isV2HttpError(error: unknown): error is V2SdkHttpError {
  return hasV2Brand(error, 'mcp.SdkHttpError');
}

function isV2ProtocolError(error: unknown): error is JsonRpcError {
  return hasV2Brand(error, 'mcp.ProtocolError');
}

/**
 * `error instanceof McpError` of the v1 SDK (`@modelcontextprotocol/sdk/types.js`), which has no
 * brands: an Error whose class or a parent class is named `McpError` (`UrlElicitationRequiredError`
 * extends it), with the numeric JSON-RPC code it always sets.
 */
function isV1McpError(error: unknown): error is JsonRpcError {
  if (!(error instanceof Error) || typeof (error as { code?: unknown }).code !== 'number')
    return false;
  for (
    let proto: unknown = Object.getPrototypeOf(error);
    proto !== null && proto !== Error.prototype;
    proto = Object.getPrototypeOf(proto)
  ) {
    if ((proto as { constructor?: { name?: unknown } }).constructor?.name === 'McpError')
      return true;
  }
  return false;
}

/** The v2 `SdkErrorCode` values read here (string enum members of `@modelcontextprotocol/client`). */
const SdkErrorCode = {
  RequestTimeout: 'REQUEST_TIMEOUT',
  ConnectionClosed: 'CONNECTION_CLOSED',
  InvalidResult: 'INVALID_RESULT',
} as const;

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
  if (isV2SdkError(error) && error.code === SdkErrorCode.InvalidResult) {
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
const V2_CODES: Record<SdkFailureKind, string> = {
  timeout: SdkErrorCode.RequestTimeout,
  closed: SdkErrorCode.ConnectionClosed,
};

/** True when `error` is the SDK's own "request timed out" or "connection closed" (v1 or v2). */
export function isSdkFailure(error: unknown, kind: SdkFailureKind): boolean {
  if (isV1McpError(error)) return error.code === V1_CODES[kind];
  if (isV2SdkError(error)) return error.code === V2_CODES[kind];
  return false;
}

/** The JSON-RPC error code the server answered with (v1 `McpError`, v2 `ProtocolError`), if any. */
export function jsonRpcErrorCode(error: unknown): number | undefined {
  if (isV1McpError(error)) {
    return error.code === V1_CODES.closed || error.code === V1_CODES.timeout
      ? undefined
      : error.code;
  }
  if (isV2ProtocolError(error)) return error.code;
  return undefined;
}

/** The JSON-RPC error data the server sent along, if any. */
export function jsonRpcErrorData(error: unknown): unknown {
  if (isV1McpError(error) || isV2ProtocolError(error)) return error.data;
  return undefined;
}

/** The JSON-RPC error an HTTP error response carried in its body, if it was one. */
export function jsonRpcErrorInHttpBody(
  error: unknown,
): { code: number; message?: string; data?: unknown } | undefined {
  if (!isV2HttpError(error)) return undefined;
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
  if (isV2HttpError(error)) return error.status;
  if (error instanceof Error && error.name === 'StreamableHTTPError') {
    const code = (error as { code?: unknown }).code;
    return typeof code === 'number' ? code : undefined;
  }
  return undefined;
}
