import type { Client, OAuthClientProvider } from '@modelcontextprotocol/client';
import type { OAuthSettings } from '../../config/server-schema.js';
import { AgentsErrorCode } from '../../errors.js';
import { withTaskHandles } from '../../mcp/task-handles.js';
import {
  createRemoteTransport,
  type RemoteTransport,
  type RemoteTransportKind,
} from '../remote-transport.js';
import type { Authorizer } from './authorizers.js';
import { retryAfterAuthorization } from './login.js';
import { oauthFlowError } from './oauth-errors.js';
import { startLoopbackReceiver, type LoopbackReceiver } from './loopback-receiver.js';
import {
  createClientCredentialsProvider,
  createStoredOAuthProvider,
  type StoredOAuthProvider,
} from './oauth-provider.js';
import { createMemoryOAuthStore } from './oauth-store.js';

/** Options of {@link openOAuthClientSession}. */
export interface OAuthClientSessionOptions {
  url: URL;
  transport?: RemoteTransportKind;
  headers?: Record<string, string>;
  /** OAuth settings (resolved); undefined turns OAuth off (e.g. a static bearer token). */
  oauth?: Partial<OAuthSettings>;
  /** How the person is sent to the authorization URL. */
  authorize: Authorizer;
  /** The command named when a login cannot happen. */
  loginCommand: string;
  signal?: AbortSignal;
  timeoutMs?: number;
}

/**
 * A one-off interactive client session (`agents mcp-client`): tokens in memory only, a loopback
 * listener while the session lasts, and every operation retried once the person has authorized
 * (first login, and scope step-up on a 403 `insufficient_scope`). Close it when done.
 */
export interface OAuthClientSession extends AsyncDisposable {
  /** Connects a client made by `makeClient`, logging in when the server asks. */
  connect(makeClient: () => Client): Promise<{ client: Client; transport: RemoteTransport }>;
  /** Runs an operation on the connected session, re-authorizing when the server asks for it. */
  run<T>(operation: () => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** Opens an {@link OAuthClientSession}; with `oauth` undefined it is a plain connection. */
export async function openOAuthClientSession(
  options: OAuthClientSessionOptions,
): Promise<OAuthClientSession> {
  let receiver: LoopbackReceiver | undefined;
  let provider: OAuthClientProvider | undefined;
  let stored: StoredOAuthProvider | undefined;
  if (options.oauth?.grant === 'client_credentials') {
    provider = createClientCredentialsProvider(options.url.host, options.oauth);
  } else if (options.oauth !== undefined) {
    receiver = await startLoopbackReceiver(
      options.oauth.redirectPort === undefined ? {} : { port: options.oauth.redirectPort },
    );
    stored = createStoredOAuthProvider({
      serverName: options.url.host,
      settings: options.oauth,
      store: createMemoryOAuthStore(),
      interactive: { redirectUrl: receiver.redirectUrl, authorize: options.authorize },
      loginCommand: options.loginCommand,
    });
    provider = stored;
  }
  let transport: RemoteTransport | undefined;
  let client: Client | undefined;
  const finishAuth = (code: string, iss?: string) =>
    (transport as RemoteTransport).finishAuth(code, iss);
  const retryOnce = <T>(operation: () => Promise<T>): Promise<T> =>
    stored === undefined || receiver === undefined
      ? operation()
      : retryAfterAuthorization(operation, finishAuth, {
          provider: stored,
          receiver,
          ...(options.signal === undefined ? {} : { signal: options.signal }),
          ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
        });
  // An issuer mix-up or a registration the server cannot do becomes a typed error naming it.
  const retry = <T>(operation: () => Promise<T>): Promise<T> =>
    retryOnce(operation).catch((error: unknown) => {
      const typed = oauthFlowError(error, {
        serverName: options.url.host,
        loginCommand: options.loginCommand,
      });
      throw typed !== undefined &&
        (typed.code === AgentsErrorCode.AuthRequired ||
          typed.code === AgentsErrorCode.ConfigInvalid)
        ? typed
        : error;
    });
  const close = async () => {
    await client?.close().catch(() => undefined);
    await receiver?.close();
  };
  return {
    async connect(makeClient) {
      const connected = await retry(async () => {
        // A failed initialize closes its client and transport: each attempt starts afresh.
        await client?.close().catch(() => undefined);
        transport = createRemoteTransport(options.transport ?? 'streamable-http', options.url, {
          ...(options.headers === undefined ? {} : { headers: options.headers }),
          ...(provider === undefined ? {} : { authProvider: provider }),
          ...(stored === undefined
            ? {}
            : { onInsufficientScope: (scope: string) => stored.prepareStepUp(scope) }),
        });
        client = makeClient();
        // Task answers come through (the adapter follows them; see mcp/task-handles.ts).
        await client.connect(
          withTaskHandles(transport),
          options.signal === undefined ? {} : { signal: options.signal },
        );
        return client;
      });
      return { client: connected, transport: transport as RemoteTransport };
    },
    run: retry,
    close,
    [Symbol.asyncDispose]: close,
  };
}
