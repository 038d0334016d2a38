import type { Transport } from '@modelcontextprotocol/client';
import { httpStatusOf } from '../mcp/mcp-client.js';
import { expandEnvReferenceMap, expandEnvReferences } from '../config/env-references.js';
import { resolveServerTimeouts } from '../config/server-schema.js';
import type { NamedServerConfig } from '../config/server-schema.js';
import { formatCommandLine, formatUrl } from '../redact.js';
import type { ServerLogger } from './server-logger.js';
import type { Confinement } from '../confinement/confinement.js';
import { createStdioTransport } from './stdio-transport.js';
import type { StdioTransport } from './stdio-transport-types.js';
import { assertSafeLaunch } from './launch-guard.js';
import { waitAtMost } from './wait-at-most.js';
import { createServerOAuthProvider, isStoredOAuthProvider } from './oauth/server-auth.js';
import { createRemoteTransport } from './remote-transport.js';
import { serverNetworkHookOf } from './network/server-network.js';

/** Options of {@link createServerTransport}. */
export interface ServerTransportOptions {
  /** Working directory for stdio servers without their own `cwd` (the sandbox root). */
  cwd?: string;
  logger?: ServerLogger;
  /** Max stdout line bytes for stdio servers. */
  maxLineBytes?: number;
  /** Where stdio server groups are recorded for reaping after a host crash; `null` disables. */
  runDir?: string | null;
  /** OS confinement of stdio servers (bubblewrap); default none. */
  confinement?: Confinement;
  /** Per-user state folder holding OAuth tokens; default `defaultStateDir()`. */
  stateDir?: string;
}

/** A transport for one server plus what messages need to say about it. */
export interface ServerTransport {
  transport: Transport;
  /** The command line or URL, secrets redacted. */
  target: string;
  /** Set for stdio servers: pid, exit status and stderr of the process. */
  stdio?: StdioTransport;
  /** Ends the connection: DELETE for a streamable-HTTP session, then close. Idempotent, never throws. */
  close(): Promise<void>;
  /** Called once the server answered `initialize` (clears an npx server's start marker). */
  started?(): void;
}

/** The target (command line or URL) of a server config, for messages; secrets redacted. */
export function describeServerTarget(config: NamedServerConfig): string {
  return config.transport === 'stdio'
    ? formatCommandLine(config.command, config.args ?? [])
    : formatUrl(config.url);
}

/**
 * Builds the (unstarted) transport for a server config: our own stdio transport (own process
 * group, env allow-list, bounded framing), or the SDK's streamable-HTTP / SSE client transports
 * with the configured headers and OAuth (non-interactive: a server that wants a login fails with
 * `AUTH_REQUIRED` naming `agents server login NAME`). `${VAR}` references in `args`, `env`,
 * `url` and `headers` are resolved here, at start. The SDK `Client.connect()` starts it.
 */
export function createServerTransport(
  config: NamedServerConfig,
  options: ServerTransportOptions = {},
): ServerTransport {
  const target = describeServerTarget(config);
  if (config.transport === 'stdio') {
    assertSafeLaunch(config);
    const cwd = config.cwd ?? options.cwd;
    const args = (config.args ?? []).map((arg, index) =>
      expandEnvReferences(arg, `Server "${config.name}" args[${index}]`),
    );
    // The guard above judged the server's own command line; the wrapper only adds mounts.
    const launch = options.confinement?.wrap(config.command, args, cwd, {
      name: config.name,
      exceptions: config.sandbox,
    }) ?? {
      command: config.command,
      args,
    };
    const stdio = createStdioTransport({
      serverName: config.name,
      command: launch.command,
      args: launch.args,
      // Messages name the server's own command line, not the wrapper's.
      displayTarget: target,
      signalExitCodes: launch.command !== config.command,
      env: expandEnvReferenceMap(config.env, `Server "${config.name}" env`),
      cwd,
      shutdownMs: resolveServerTimeouts(config.timeouts).shutdownMs,
      maxLineBytes: options.maxLineBytes,
      logger: options.logger,
      ...(options.runDir === undefined ? {} : { runDir: options.runDir }),
    });
    const settle = 'settle' in launch ? launch.settle : undefined;
    return {
      transport: stdio,
      target,
      stdio,
      close: () => {
        settle?.(false); // a start closed before it answered: a no-op after `started()`
        return stdio.close().catch(() => undefined);
      },
      ...(settle === undefined ? {} : { started: () => settle(true) }),
    };
  }
  const headers = expandEnvReferenceMap(config.headers, `Server "${config.name}" headers`);
  // The actor's host lists apply to the library's own connection too (redirects included).
  const guarded = serverNetworkHookOf(options.confinement?.networkHook)?.remoteFetch(config.name);
  const authProvider = createServerOAuthProvider(
    config,
    options.stateDir === undefined ? {} : { stateDir: options.stateDir },
  );
  const http = createRemoteTransport(
    config.transport,
    new URL(expandEnvReferences(config.url, `Server "${config.name}" url`)),
    {
      ...(headers === undefined ? {} : { headers }),
      ...(guarded === undefined ? {} : { fetch: guarded }),
      ...(authProvider === undefined ? {} : { authProvider }),
      ...(isStoredOAuthProvider(authProvider)
        ? { onInsufficientScope: (scope: string) => authProvider.prepareStepUp(scope) }
        : {}),
    },
  );
  const { shutdownMs } = resolveServerTimeouts(config.timeouts);
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      // The spec asks clients to end sessions with DELETE; bounded, and a failure is not fatal.
      if (http.sessionId !== undefined) {
        await waitAtMost(
          http.terminateSession().catch((error: unknown) => {
            options.logger?.debug(`Server "${config.name}": session DELETE failed`, {
              error: String(error),
            });
          }),
          shutdownMs,
        );
      }
      await http.close().catch(() => undefined);
    })();
    return closing;
  };
  return { transport: http, target, close };
}

/** True when an error says the HTTP session is unknown to the server (404): re-initialize. */
export function isSessionNotFound(error: unknown): boolean {
  for (let current: unknown = error, depth = 0; current && depth < 5; depth++) {
    if (httpStatusOf(current) === 404) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}
