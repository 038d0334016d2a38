import {
  SdkError,
  SdkErrorCode,
  SUPPORTED_PROTOCOL_VERSIONS,
  UnsupportedProtocolVersionError,
  type Client,
  type PriorDiscovery,
  type VersionNegotiationOptions,
} from '@modelcontextprotocol/client';
import type { McpProtocolChoice, NamedServerConfig } from '../config/server-schema.js';
import { AgentsErrorCode, ServerError, errorMessage, type ServerErrorDetails } from '../errors.js';
import { jsonRpcErrorCode, jsonRpcErrorData, jsonRpcErrorInHttpBody } from '../mcp/mcp-client.js';

/** The stateless revision; the SDK v2 client speaks it beside the 2025-era ones. */
export const MODERN_REVISION = '2026-07-28';
/** The newest 2025-era revision (`initialize` handshake, sessions). */
export const LEGACY_REVISION = '2025-11-25';
/** Every revision our client offers, newest first (what a mismatch error names). */
export const CLIENT_REVISIONS: readonly string[] = [
  MODERN_REVISION,
  ...SUPPORTED_PROTOCOL_VERSIONS,
];

/** The JSON-RPC code of "unsupported protocol version" (2026-07-28, also sent by 2026-only servers to `initialize`). */
const UNSUPPORTED_PROTOCOL_VERSION = -32022;

/**
 * The SDK v2 negotiation for a config's `protocol`: `auto` probes `server/discover` and falls
 * back to `initialize`; `2026-07-28` is pinned (no fallback); `2025-11-25` runs the plain 2025
 * handshake, byte-identical to a 2025 client. The probe gets a share of the startup budget: a
 * stdio server that stays silent to it is a 2025-era one (the SDK falls back), an HTTP server
 * that stays silent is down.
 */
export function versionNegotiationFor(
  choice: McpProtocolChoice,
  startupMs: number,
): VersionNegotiationOptions {
  if (choice === LEGACY_REVISION) return { mode: 'legacy' };
  const probe = { timeoutMs: Math.max(1_000, Math.min(10_000, Math.floor(startupMs / 3))) };
  // Pinned, silence is never a verdict: the probe may take the whole startup budget.
  if (choice === MODERN_REVISION)
    return { mode: { pin: MODERN_REVISION }, probe: { timeoutMs: startupMs } };
  return { mode: 'auto', probe };
}

/** The revision a config asks for; `auto` when it names none. */
export function protocolChoiceOf(config: NamedServerConfig): McpProtocolChoice {
  return config.protocol ?? 'auto';
}

/**
 * What a connected client learned about its server's era, to skip the probe on the next
 * connection (a restart). A stale verdict is dropped when that connection fails.
 */
export function verdictOf(client: Client): PriorDiscovery | undefined {
  const era = client.getProtocolEra();
  if (era === 'legacy') return { kind: 'legacy' };
  const discover = client.getDiscoverResult();
  return era === 'modern' && discover !== undefined ? { kind: 'modern', discover } : undefined;
}

/**
 * True when an `auto` probe on a stdio server failed because the process ended or closed its
 * pipe on the unknown `server/discover` (some 2025-era servers exit on any request before
 * `initialize`): such a server is a 2025-era one, to be started again and initialized.
 */
export function isProbeClosedOnStdio(error: unknown): boolean {
  return (
    SdkError.isInstance(error) &&
    error.code === SdkErrorCode.EraNegotiationFailed &&
    /closed|probed in place/i.test(error.message)
  );
}

/** The revisions a server said it supports in a -32022 answer (v1 or v2 error), if it did. */
export function serverRevisionsOf(error: unknown): string[] | undefined {
  for (let current: unknown = error, depth = 0; current && depth < 5; depth++) {
    if (UnsupportedProtocolVersionError.isInstance(current)) return current.supported;
    const inBody = jsonRpcErrorInHttpBody(current);
    if (inBody?.code === UNSUPPORTED_PROTOCOL_VERSION) return supportedIn(inBody.data);
    if (jsonRpcErrorCode(current) === UNSUPPORTED_PROTOCOL_VERSION) {
      return supportedIn(jsonRpcErrorData(current));
    }
    if (/-32022|Unsupported protocol version/i.test(errorMessage(current))) {
      const listed = /supported[^[]*(\[[^\]]*\])/i.exec(errorMessage(current))?.[1];
      try {
        const parsed: unknown = listed === undefined ? [] : JSON.parse(listed);
        return Array.isArray(parsed) ? parsed.map(String) : [];
      } catch {
        return [];
      }
    }
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

function supportedIn(data: unknown): string[] {
  const supported = (data as { supported?: unknown } | undefined)?.supported;
  return Array.isArray(supported) && supported.every((v) => typeof v === 'string')
    ? (supported as string[])
    : [];
}

/**
 * The error for a server and a client that share no revision: it names what each side offers
 * and what to change. `undefined` when `error` is not about revisions.
 */
export function revisionMismatchError(
  error: unknown,
  serverName: string,
  choice: McpProtocolChoice,
  details: ServerErrorDetails,
  /** Where the pin was set and how to change it (a CLI flag rather than the config). */
  pin: { where: string; fix: string } = {
    where: `its config pins protocol: ${choice}`,
    fix: 'Set `protocol: auto` in its config (or the revision it speaks) and retry.',
  },
): ServerError | undefined {
  const serverRevisions = serverRevisionsOf(error);
  const pinnedModernFailed =
    choice === MODERN_REVISION &&
    SdkError.isInstance(error) &&
    error.code === SdkErrorCode.EraNegotiationFailed;
  if (serverRevisions === undefined && !pinnedModernFailed) return undefined;
  const offered = choice === 'auto' ? CLIENT_REVISIONS : [choice];
  const theirs =
    serverRevisions === undefined || serverRevisions.length === 0
      ? pinnedModernFailed
        ? `does not speak MCP ${MODERN_REVISION} (it did not answer server/discover with it)`
        : 'refused our protocol version without listing its own'
      : `speaks MCP ${serverRevisions.join(', ')}`;
  const fix =
    choice === 'auto'
      ? 'Upgrade the server or this library; nothing in the config can bridge them.'
      : pin.fix;
  return new ServerError(
    AgentsErrorCode.ServerStartFailed,
    `Server "${serverName}" ${theirs}; this client offered ${offered.join(', ')}` +
      `${choice === 'auto' ? '' : ` (${pin.where})`}. ${fix}`,
    {
      ...details,
      ...(serverRevisions === undefined ? {} : { serverRevisions }),
      clientRevisions: [...offered],
    } as ServerErrorDetails,
    { cause: error },
  );
}
