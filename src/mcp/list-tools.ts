import type { Tool } from '@modelcontextprotocol/client';
import { AgentsErrorCode, ServerError, errorMessage, withoutMcpErrorPrefix } from '../errors.js';
import { isV2Client, jsonRpcErrorCode, type McpClient } from './mcp-client.js';
import { isMcpErrorCode } from './tool-call.js';

/** Options for {@link listAllTools}. */
export interface ListAllToolsOptions {
  signal?: AbortSignal;
  /** Stop with an error past this many pages (default 100). */
  maxPages?: number;
  /** Named in errors. */
  serverName?: string;
  /** Per-page request timeout in ms (SDK default 60 s). */
  timeoutMs?: number;
  /**
   * SDK v2 response cache: `'refresh'` (default) always asks the server and stores the answer
   * with its `ttlMs`/`cacheScope`; `'use'` serves a still-fresh cached list.
   */
  cacheMode?: 'use' | 'refresh';
}

/** Longest `ttlMs` honoured (as the SDK v2 client's own cache): a server cannot pin a list. */
export const MAX_TOOLS_TTL_MS = 24 * 60 * 60_000;

/** A whole tool list and the caching hints (2026-07-28, SEP-2549) its first page carried. */
export interface ToolListing {
  tools: Tool[];
  /** How long the list may be reused (ms, clamped to {@link MAX_TOOLS_TTL_MS}); absent: no hint. */
  ttlMs?: number;
  /** Who may share the cached list; absent when the server said nothing. */
  cacheScope?: 'public' | 'private';
}

/**
 * Reads every page of `tools/list`. Refuses a server that repeats a cursor or pages past
 * `maxPages` (it would loop forever), rather than returning a partial list.
 * @throws ServerError phase `list`: `PROTOCOL_ERROR` for cursor loops, otherwise the wrapped failure.
 */
export async function listAllTools(
  client: McpClient,
  options: ListAllToolsOptions = {},
): Promise<Tool[]> {
  return (await listToolsWithHints(client, options)).tools;
}

/** {@link listAllTools} with the list's `ttlMs`/`cacheScope` (untrusted: checked, clamped). */
export async function listToolsWithHints(
  client: McpClient,
  options: ListAllToolsOptions = {},
): Promise<ToolListing> {
  const serverName = options.serverName ?? client.getServerVersion()?.name ?? 'unknown';
  const maxPages = options.maxPages ?? 100;
  const tools: Tool[] = [];
  const listing: ToolListing = { tools };
  const cursors = new Set<string>();
  let cursor: string | undefined;
  for (let page = 0; ; page++) {
    if (page >= maxPages) {
      throw new ServerError(
        AgentsErrorCode.ProtocolError,
        `Server "${serverName}" returned more than ${maxPages} pages of tools/list; refusing to read on.`,
        { serverName, phase: 'list' },
      );
    }
    options.signal?.throwIfAborted();
    let result: { tools: Tool[]; nextCursor?: string | undefined };
    const requestOptions = {
      ...(options.signal === undefined ? {} : { signal: options.signal }),
      ...(options.timeoutMs === undefined ? {} : { timeout: options.timeoutMs }),
    };
    try {
      // v2 walks every page itself when called without a cursor (and writes its cache, which
      // backs `Mcp-Param-*` mirroring); our loop then sees one page with no cursor.
      result = isV2Client(client)
        ? ((await client.listTools(cursor === undefined ? undefined : { cursor }, {
            ...requestOptions,
            cacheMode: options.cacheMode ?? 'refresh',
          })) as { tools: Tool[]; nextCursor?: string })
        : ((await client.listTools(cursor === undefined ? {} : { cursor }, requestOptions)) as {
            tools: Tool[];
            nextCursor?: string;
          });
    } catch (error) {
      throw listError(error, serverName, options.signal);
    }
    if (page === 0) readHints(result as Record<string, unknown>, listing);
    tools.push(...result.tools);
    const next = result.nextCursor;
    if (next === undefined || next === '') return listing;
    if (cursors.has(next)) {
      throw new ServerError(
        AgentsErrorCode.ProtocolError,
        `Server "${serverName}" repeated the tools/list cursor ${JSON.stringify(next)}; its pagination loops. Report it to the server's authors.`,
        { serverName, phase: 'list' },
      );
    }
    cursors.add(next);
    cursor = next;
  }
}

/** Copies well-formed caching hints of a first page; anything else is ignored. */
function readHints(result: Record<string, unknown>, listing: ToolListing): void {
  const { ttlMs, cacheScope } = result;
  if (typeof ttlMs === 'number' && Number.isFinite(ttlMs) && ttlMs >= 0) {
    listing.ttlMs = Math.min(Math.floor(ttlMs), MAX_TOOLS_TTL_MS);
  }
  if (cacheScope === 'public' || cacheScope === 'private') listing.cacheScope = cacheScope;
}

/**
 * A failed `tools/list`. A JSON-RPC error here is `PROTOCOL_ERROR`: listing tools is what an MCP
 * server with tools must do, so refusing it is the server's fault, unlike a refused `tools/call`.
 */
function listError(
  error: unknown,
  serverName: string,
  signal: AbortSignal | undefined,
): ServerError {
  if (error instanceof ServerError) return error;
  const where = `tools/list on server "${serverName}"`;
  const details = { serverName, phase: 'list' as const };
  if (signal?.aborted === true) {
    return new ServerError(AgentsErrorCode.Aborted, `${where} was cancelled.`, details, {
      cause: error,
    });
  }
  if (isMcpErrorCode(error, 'timeout')) {
    return new ServerError(
      AgentsErrorCode.Timeout,
      `${where} timed out (${errorMessage(error)}); raise the server's timeouts or check the server.`,
      details,
      { cause: error },
    );
  }
  if (isMcpErrorCode(error, 'closed')) {
    return new ServerError(
      AgentsErrorCode.ServerUnavailable,
      `${where} failed: the connection closed (${errorMessage(error)}). The server may have exited; see its stderr.`,
      details,
      { cause: error },
    );
  }
  const rpcCode = jsonRpcErrorCode(error);
  if (rpcCode !== undefined) {
    return new ServerError(
      AgentsErrorCode.ProtocolError,
      `${where} failed with MCP error ${rpcCode}: ${withoutMcpErrorPrefix(errorMessage(error))}`,
      details,
      { cause: error },
    );
  }
  return new ServerError(
    AgentsErrorCode.ProtocolError,
    `${where} failed: ${errorMessage(error)}`,
    details,
    {
      cause: error,
    },
  );
}
