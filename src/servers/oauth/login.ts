import { createInterface } from 'node:readline';
import {
  auth,
  Client,
  computeScopeUnion,
  isStrictScopeSuperset,
  type Implementation,
} from '@modelcontextprotocol/client';
import { expandEnvReferenceMap, expandEnvReferences } from '../../config/env-references.js';
import { AgentsError, AgentsErrorCode, errorMessage } from '../../errors.js';
import { createRemoteTransport, type RemoteTransport } from '../remote-transport.js';
import type { Authorizer } from './authorizers.js';
import { startLoopbackReceiver, type LoopbackReceiver } from './loopback-receiver.js';
import { oauthFlowError } from './oauth-errors.js';
import type { StoredOAuthProvider } from './oauth-provider.js';
import { createFileOAuthStore, type OAuthStateStore } from './oauth-store.js';
import {
  createServerOAuthProvider,
  isStoredOAuthProvider,
  isUnauthorized,
  loginCommandFor,
  resolveOAuthSettings,
  type NamedHttpServerConfig,
} from './server-auth.js';

/** Options of {@link retryAfterAuthorization}. */
export interface AuthorizationRetryOptions {
  provider: StoredOAuthProvider;
  receiver: LoopbackReceiver;
  /** Logins one operation may need (first login + one scope step-up); default 2. */
  maxAuthorizations?: number;
  signal?: AbortSignal;
  /** How long to wait for the person at each login; default 5 minutes. */
  timeoutMs?: number;
}

/**
 * Runs an operation; when it fails because the SDK started an authorization (a 401, or a 403
 * asking for more scope), waits for the code at the loopback listener, exchanges it
 * (`finishAuth`, the SDK's `auth()` with the code and PKCE verifier) and runs it again. Bounded,
 * so a server that never accepts the new token cannot loop (conformance `auth/scope-retry-limit`).
 */
export async function retryAfterAuthorization<T>(
  operation: () => Promise<T>,
  finishAuth: (authorizationCode: string, iss?: string) => Promise<void>,
  options: AuthorizationRetryOptions,
): Promise<T> {
  const max = options.maxAuthorizations ?? 2;
  for (let round = 0; ; round++) {
    try {
      return await operation();
    } catch (error) {
      if (!isUnauthorized(error) || !options.provider.authorizationStarted || round >= max) {
        throw error;
      }
      const code = await options.receiver.waitForCode(options.provider.expectedState, {
        ...(options.signal === undefined ? {} : { signal: options.signal }),
        ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
      });
      await finishAuth(code, options.receiver.issuerOf(code));
      options.provider.resetAuthorization();
    }
  }
}

/** Options of {@link loginToServer}. */
export interface LoginOptions {
  /** Takes the person to the authorization URL (browser, printed URL, or a test's fetch). */
  authorize: Authorizer;
  /** Per-user state folder; default `defaultStateDir()`. */
  stateDir?: string;
  /** Drop stored tokens first, so a new login happens even while the old one still works. */
  force?: boolean;
  /**
   * Scopes the login must grant beyond what the server asks for at connect (a tool that answered
   * `403 insufficient_scope` in an unattended run names them); authorized after connecting.
   */
  scope?: string;
  signal?: AbortSignal;
  timeoutMs?: number;
  clientInfo?: Implementation;
  env?: NodeJS.ProcessEnv;
  /**
   * Where a person can paste the address the browser ended on, one per line, when that browser
   * cannot reach this machine's loopback listener (a terminal's stdin). Each line goes to
   * {@link LoopbackReceiver.acceptPasted}; `onPasteProblem` hears why a line was not taken.
   */
  pastedRedirects?: NodeJS.ReadableStream;
  onPasteProblem?: (problem: string) => void;
}

/** What a login did. */
export interface LoginResult {
  serverName: string;
  /** `login`: a person authorized; `stored`: stored tokens worked; `client-credentials`: unattended. */
  how: 'login' | 'stored' | 'client-credentials';
  /** Where the tokens are kept (not for client credentials). */
  stateFile?: string;
  scope?: string;
  serverInfo?: Implementation;
  tools: string[];
}

const CLIENT_INFO: Implementation = { name: 'agents-langgraph-mcp', version: '0.1.0' };

/**
 * Logs in to a remote server interactively: a loopback redirect listener on 127.0.0.1, the SDK's
 * `auth()` for discovery, registration, PKCE and the token exchange, then a check that the
 * server now answers (initialize + tools/list). Tokens and the registration go to the per-user
 * state folder (mode 0600). Throws `AUTH_REQUIRED` when the person or the server refuses,
 * `TIMEOUT` when no login comes back.
 */
export async function loginToServer(
  config: NamedHttpServerConfig,
  options: LoginOptions,
): Promise<LoginResult> {
  const settings = resolveOAuthSettings(config, options.env);
  if (settings === undefined) {
    throw new AgentsError(
      AgentsErrorCode.ConfigInvalid,
      `Server "${config.name}" does not use OAuth (${config.oauth === false ? 'oauth: false' : 'it sends its own Authorization header'}); nothing to log in to.`,
      { details: { serverName: config.name, problems: [] } },
    );
  }
  const url = new URL(expandEnvReferences(config.url, `Server "${config.name}" url`));
  const headers = expandEnvReferenceMap(config.headers, `Server "${config.name}" headers`);
  const store = createFileOAuthStore({
    serverName: config.name,
    serverUrl: config.url,
    ...(options.stateDir === undefined ? {} : { stateDir: options.stateDir }),
  });
  if (options.force) await store.clear('tokens');
  await using receiver = await startReceiver(settings.redirectPort, store);
  using _pasted = readPastedRedirects(receiver, options);
  const provider = createServerOAuthProvider(config, {
    store,
    interactive: { redirectUrl: receiver.redirectUrl, authorize: options.authorize },
    ...(options.env === undefined ? {} : { env: options.env }),
  });
  let transport: RemoteTransport | undefined;
  let client: Client | undefined;
  let authorized = false;
  const connect = async () => {
    await client?.close().catch(() => undefined);
    transport = createRemoteTransport(config.transport, url, {
      ...(headers === undefined ? {} : { headers }),
      ...(provider === undefined ? {} : { authProvider: provider }),
      ...(isStoredOAuthProvider(provider)
        ? { onInsufficientScope: (scope: string) => provider.prepareStepUp(scope) }
        : {}),
    });
    client = new Client(options.clientInfo ?? CLIENT_INFO, { capabilities: {} });
    await client.connect(transport, options.signal === undefined ? {} : { signal: options.signal });
    return client;
  };
  const finishAuth = async (code: string, iss?: string) => {
    authorized = true;
    await (transport as RemoteTransport).finishAuth(code, iss);
  };
  try {
    const retry = isStoredOAuthProvider(provider)
      ? <T>(operation: () => Promise<T>) =>
          retryAfterAuthorization(operation, finishAuth, {
            provider,
            receiver,
            ...(options.signal === undefined ? {} : { signal: options.signal }),
            ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
          })
      : <T>(operation: () => Promise<T>) => operation();
    const connected = await retry(connect);
    const listed = await retry(() => connected.listTools());
    if (options.scope !== undefined && isStoredOAuthProvider(provider)) {
      // Step up now, with the SDK's own auth(): ask for the union of the scopes held and the
      // ones asked for (never drop a held one), and authorize again when the union is wider
      // (a refresh cannot widen a token's scope).
      const held = (await store.load()).tokens?.scope;
      const scope = computeScopeUnion(held, options.scope);
      if (scope !== undefined && isStrictScopeSuperset(scope, held)) {
        const result = await auth(provider, {
          serverUrl: url,
          scope,
          forceReauthorization: true,
        });
        if (result === 'REDIRECT') {
          const code = await receiver.waitForCode(provider.expectedState, {
            ...(options.signal === undefined ? {} : { signal: options.signal }),
            ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
          });
          authorized = true;
          const iss = receiver.issuerOf(code);
          await auth(provider, {
            serverUrl: url,
            scope,
            authorizationCode: code,
            ...(iss === undefined ? {} : { iss }),
          });
          provider.resetAuthorization();
        }
      }
    }
    const stored = await store.load();
    const serverInfo = connected.getServerVersion();
    return {
      serverName: config.name,
      how: isStoredOAuthProvider(provider)
        ? authorized
          ? 'login'
          : 'stored'
        : 'client-credentials',
      ...(isStoredOAuthProvider(provider) ? { stateFile: store.location } : {}),
      ...(stored.tokens?.scope === undefined ? {} : { scope: stored.tokens.scope }),
      ...(serverInfo === undefined ? {} : { serverInfo }),
      tools: listed.tools.map((tool) => tool.name),
    };
  } catch (error) {
    const typed = oauthFlowError(error, {
      serverName: config.name,
      loginCommand: loginCommandFor(config.name),
    });
    if (typed !== undefined) throw typed;
    throw new AgentsError(
      AgentsErrorCode.AuthRequired,
      `Logging in to server "${config.name}" (${url.origin}) failed: ${errorMessage(error)}`,
      { cause: error, details: { serverName: config.name } },
    );
  } finally {
    await transport?.terminateSession().catch(() => undefined);
    await client?.close().catch(() => undefined);
  }
}

/**
 * The redirect listener: on `oauth.redirectPort` when set; else on the port of the last
 * registration (so it is reused), falling back to any free port when that one is taken.
 */
async function startReceiver(
  redirectPort: number | undefined,
  store: OAuthStateStore,
): Promise<LoopbackReceiver> {
  if (redirectPort !== undefined) return startLoopbackReceiver({ port: redirectPort });
  const previous = (await store.load()).redirectUri;
  const previousPort = previous === undefined ? undefined : Number(new URL(previous).port);
  if (previousPort !== undefined && previousPort > 0) {
    try {
      return await startLoopbackReceiver({ port: previousPort });
    } catch {
      // Taken: a new port means a new registration, which the provider makes.
    }
  }
  return startLoopbackReceiver();
}

/** Feeds pasted lines to the receiver until disposed (the login is over either way). */
function readPastedRedirects(receiver: LoopbackReceiver, options: LoginOptions): Disposable {
  const input = options.pastedRedirects;
  if (input === undefined) return { [Symbol.dispose]: () => undefined };
  const lines = createInterface({ input, terminal: false });
  lines.on('line', (line) => {
    if (line.trim() === '') return;
    const problem = receiver.acceptPasted(line);
    if (problem !== undefined) options.onPasteProblem?.(problem);
  });
  return { [Symbol.dispose]: () => lines.close() };
}
