import {
  AgentsErrorCode,
  ServerError,
  errorMessage,
  withoutMcpErrorPrefix,
  type ServerErrorDetails,
} from '../errors.js';
import {
  isSdkFailure,
  jsonRpcErrorCode,
  resultSchemaIssues,
  type SdkFailureKind,
} from './mcp-client.js';

/**
 * The one mapping of a failed `tools/call` to a {@link ServerError} (phase `call`); the codes are
 * listed at the top of `mcp/tool-call.ts`. Kept apart so the call path itself stays small.
 */

/** What the mapping needs of the call's options. */
export interface CallErrorOptions {
  serverName: string;
  callMs: number;
  maxCallMs: number;
  resetOnProgress?: boolean;
  idleDeadline?: { readonly expired: boolean };
  details?: () => Partial<ServerErrorDetails>;
}

/** The one mapping of a failed `tools/call` to a {@link ServerError} (see the module comment). */
export function toolCallError(
  error: unknown,
  toolName: string,
  signal: AbortSignal | undefined,
  options: CallErrorOptions,
  capReached = false,
): ServerError {
  if (error instanceof ServerError) return error;
  const { serverName } = options;
  const where = `Tool "${toolName}" on server "${serverName}"`;
  const details = (extra: Record<string, unknown> = {}): ServerErrorDetails => ({
    serverName,
    phase: 'call',
    ...options.details?.(),
    toolName,
    ...extra,
  });
  if (signal?.aborted === true) {
    return new ServerError(
      AgentsErrorCode.Aborted,
      `${where} was cancelled; notifications/cancelled was sent.`,
      details(),
      { cause: signal.reason ?? error },
    );
  }
  const idle = options.idleDeadline;
  if (capReached || idle?.expired === true || isMcpErrorCode(error, 'timeout')) {
    // With an idle deadline the SDK's own timeout is the overall cap.
    const capped = capReached || (idle !== undefined && !idle.expired) || overMaxTotal(error);
    return new ServerError(
      AgentsErrorCode.Timeout,
      capped
        ? `${where} ran longer than its maximum of ${options.maxCallMs} ms even though progress ` +
            'kept arriving; it was cancelled (notifications/cancelled sent). Raise timeouts.maxCallMs if the tool needs longer.'
        : `${where} got no answer within ${options.callMs} ms; it was cancelled ` +
            '(notifications/cancelled sent). Raise timeouts.callMs if the tool is slow' +
            (options.resetOnProgress === true
              ? '.'
              : ', or set timeouts.resetOnProgress: true if it reports progress while it works.'),
      details(),
      { cause: error },
    );
  }
  if (isMcpErrorCode(error, 'closed')) {
    return new ServerError(
      AgentsErrorCode.ServerUnavailable,
      `${where} failed: the connection closed (${errorMessage(error)}). The server may have exited; see its stderr.`,
      details(),
      { cause: error },
    );
  }
  const rpcCode = jsonRpcErrorCode(error);
  if (rpcCode !== undefined) {
    return new ServerError(
      AgentsErrorCode.ToolCallFailed,
      `${where} failed with MCP error ${rpcCode}: ${withoutMcpErrorPrefix(errorMessage(error))}`,
      details({ mcpErrorCode: rpcCode }),
      { cause: error },
    );
  }
  if (isSchemaMismatch(error)) {
    return new ServerError(
      AgentsErrorCode.ProtocolError,
      `${where} answered with a result that is not a valid MCP CallToolResult (${schemaIssues(error)}). Report it to the server's authors.`,
      details(),
      { cause: error },
    );
  }
  return new ServerError(
    AgentsErrorCode.ToolCallFailed,
    `${where} failed: ${errorMessage(error)}`,
    details(),
    { cause: error },
  );
}

/** The SDK's `maxTotalTimeout` refusal (a backstop behind our own cap, see `call-request.ts`). */
function overMaxTotal(error: unknown): boolean {
  const data = (error as { data?: unknown } | null)?.data;
  return typeof data === 'object' && data !== null && 'maxTotalTimeout' in data;
}

/** True for the SDK's own timeout or connection-closed error (v1 `McpError` or v2 `SdkError`). */
export function isMcpErrorCode(error: unknown, kind: SdkFailureKind): boolean {
  return isSdkFailure(error, kind);
}

/** The SDK rejects a result that fails its schema (v1: the zod error; v2: `INVALID_RESULT`). */
function isSchemaMismatch(error: unknown): boolean {
  return resultSchemaIssues(error) !== undefined;
}

function schemaIssues(error: unknown): string {
  const issues = resultSchemaIssues(error) ?? [];
  return issues
    .slice(0, 5)
    .map((issue) => `${(issue.path ?? []).join('.') || '(result)'}: ${issue.message ?? 'invalid'}`)
    .join('; ');
}
