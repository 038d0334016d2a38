import { randomBytes } from 'node:crypto';
import {
  ClientCredentialsProvider,
  PrivateKeyJwtProvider,
  type OAuthClientInformationContext,
  type OAuthClientInformationMixed,
  type OAuthClientMetadata,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
  type OAuthTokens,
} from '@modelcontextprotocol/client';
import type { OAuthSettings } from '../../config/server-schema.js';
import { AgentsError, AgentsErrorCode, ServerError } from '../../errors.js';
import type { Authorizer } from './authorizers.js';
import type { OAuthState, OAuthStateStore } from './oauth-store.js';

/** The client name this library registers under. */
export const OAUTH_CLIENT_NAME = 'agents (@agents/langgraph-mcp)';

/** Where the redirect goes when no login is running: never contacted, only named in metadata. */
const PLACEHOLDER_REDIRECT = 'http://127.0.0.1/callback';

/**
 * The client ID metadata document to serve at `clientMetadataUrl` (an https URL with a path,
 * which becomes the client id) for authorization servers that advertise
 * `client_id_metadata_document_supported`: a public native client whose redirect is the login's
 * loopback listener (`redirectPort` when the server's config fixes one; otherwise no port, which
 * RFC 8252 §7.3 asks authorization servers to match on any port).
 */
export function clientMetadataDocument(
  clientMetadataUrl: string,
  redirectPort?: number,
): OAuthClientMetadata & { client_id: string } {
  return {
    client_id: clientMetadataUrl,
    client_name: OAUTH_CLIENT_NAME,
    application_type: 'native',
    redirect_uris: [
      `http://127.0.0.1${redirectPort === undefined ? '' : `:${redirectPort}`}/callback`,
    ],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  };
}

/** Options of {@link createStoredOAuthProvider}. */
export interface StoredOAuthProviderOptions {
  serverName: string;
  /** The server's `oauth` settings with `${VAR}` references already resolved. */
  settings: Partial<OAuthSettings>;
  store: OAuthStateStore;
  /** Present during a login: the loopback redirect and how to send the person to the URL. */
  interactive?: { redirectUrl: string; authorize: Authorizer };
  /** The command that logs in, named in every "log in first" error. */
  loginCommand: string;
}

/** An {@link OAuthClientProvider} over a {@link OAuthStateStore}, plus what a login needs. */
export interface StoredOAuthProvider extends OAuthClientProvider {
  /** The `state` of the authorization started last, to check the redirect against. */
  readonly expectedState: string | undefined;
  /** True once `redirectToAuthorization` ran: a code is expected at the redirect listener. */
  readonly authorizationStarted: boolean;
  /** Forget that an authorization was started (after its code was exchanged). */
  resetAuthorization(): void;
  /**
   * Reacts to a `403 insufficient_scope` asking for `requiredScope`. When the stored token lacks
   * some of it and no person is there to log in (unattended), throws `AUTH_REQUIRED` naming the
   * scope and the login command; in a login the SDK's own step-up runs (union of scopes).
   */
  prepareStepUp(requiredScope: string): Promise<void>;
}

/**
 * The authorization-code client for one server (the SDK's `auth()` drives every step:
 * discovery, client ID metadata document or dynamic registration, PKCE, scope selection and
 * step-up, refresh). Registrations and tokens go to the store; the PKCE verifier stays in memory.
 *
 * Without `interactive` (actor runs, `agents serve`) it never registers or starts a login: it
 * throws `AUTH_REQUIRED` naming `loginCommand` instead. A stored refresh token is still used.
 */
export function createStoredOAuthProvider(
  options: StoredOAuthProviderOptions,
): StoredOAuthProvider {
  const { settings, store, interactive, serverName, loginCommand } = options;
  let codeVerifier: string | undefined;
  let expectedState: string | undefined;
  let authorizationStarted = false;
  const redirectUrl = interactive?.redirectUrl ?? PLACEHOLDER_REDIRECT;
  let preRegistered: OAuthClientInformationMixed | undefined =
    settings.clientId === undefined
      ? undefined
      : {
          client_id: settings.clientId,
          ...(settings.clientSecret === undefined ? {} : { client_secret: settings.clientSecret }),
          ...(settings.issuer === undefined ? {} : { issuer: settings.issuer }),
        };

  // A ServerError naming this server: the server lifecycle passes it on unchanged, code and all.
  const loginNeeded = (state: OAuthState, why: string): ServerError =>
    new ServerError(
      AgentsErrorCode.AuthRequired,
      `Server "${serverName}" needs an OAuth login (${why}); run \`${loginCommand}\` in a terminal, then retry.`,
      { serverName, phase: 'connect', loginCommand, hadTokens: state.tokens !== undefined },
    );

  const clientMetadata: OAuthClientMetadata = {
    client_name: OAUTH_CLIENT_NAME,
    // The redirect is a loopback listener of a program on the person's machine: a native
    // application (RFC 8252; SEP-837 asks clients to say so at registration).
    application_type: 'native',
    redirect_uris: [redirectUrl],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    ...(settings.scope === undefined ? {} : { scope: settings.scope }),
  };

  return {
    get redirectUrl() {
      return redirectUrl;
    },
    get clientMetadata() {
      return clientMetadata;
    },
    ...(settings.clientMetadataUrl === undefined
      ? {}
      : { clientMetadataUrl: settings.clientMetadataUrl }),
    get expectedState() {
      return expectedState;
    },
    get authorizationStarted() {
      return authorizationStarted;
    },
    resetAuthorization() {
      authorizationStarted = false;
      expectedState = undefined;
      codeVerifier = undefined;
    },
    async prepareStepUp(requiredScope) {
      const state = await store.load();
      const granted = new Set((state.tokens?.scope ?? '').split(' ').filter(Boolean));
      const missing = requiredScope.split(' ').filter((scope) => scope && !granted.has(scope));
      if (missing.length === 0 || state.tokens === undefined) return;
      if (interactive === undefined) {
        throw new ServerError(
          AgentsErrorCode.AuthRequired,
          `Server "${serverName}" asks for scope "${requiredScope}", which its login lacks (${missing.join(', ')}); run \`${loginCommand} --scope "${requiredScope}"\` in a terminal, then retry.`,
          { serverName, phase: 'call', loginCommand, requiredScope },
        );
      }
      // In a login the SDK steps up by itself: it asks for the union of the scopes held and
      // the ones demanded, and authorizes again (a refresh cannot widen a token's scope).
    },
    state() {
      // Single-use and unguessable: the redirect listener drops any response without it.
      expectedState = randomBytes(24).toString('base64url');
      return expectedState;
    },
    async clientInformation(context?: OAuthClientInformationContext) {
      const issuer = context?.issuer;
      if (preRegistered !== undefined) {
        const boundTo = typeof preRegistered.issuer === 'string' ? preRegistered.issuer : undefined;
        if (issuer !== undefined && boundTo !== undefined && !sameIssuer(boundTo, issuer)) {
          // Configured credentials are never sent to another authorization server.
          throw new ServerError(
            AgentsErrorCode.AuthRequired,
            `Server "${serverName}" now sends logins to authorization server ${quoteIssuer(issuer)}, but its configured oauth.clientId belongs to ${quoteIssuer(boundTo)}; register a client there and update oauth.clientId${settings.clientSecret === undefined ? '' : ', oauth.clientSecret'} and oauth.issuer, then run \`${loginCommand}\`.`,
            {
              serverName,
              phase: 'connect',
              loginCommand,
              expectedIssuer: boundTo,
              currentIssuer: issuer,
            },
          );
        }
        return preRegistered;
      }
      const state = await store.load();
      const stored = state.clientInformation;
      const registeredAt = typeof stored?.issuer === 'string' ? stored.issuer : undefined;
      if (issuer !== undefined && registeredAt !== undefined && !sameIssuer(registeredAt, issuer)) {
        // The server moved to another authorization server: the registration (and tokens) of
        // the old one mean nothing there, and must never be presented to it (SEP-2352).
        if (interactive === undefined) {
          throw loginNeeded(
            state,
            `its authorization server changed from ${quoteIssuer(registeredAt)} to ${quoteIssuer(issuer)}`,
          );
        }
        await store.clear('client');
        await store.clear('tokens');
        return undefined;
      }
      // A dynamic registration names its redirect URIs; a login on another port registers again.
      if (
        interactive !== undefined &&
        stored !== undefined &&
        'redirect_uris' in stored &&
        state.redirectUri !== interactive.redirectUrl
      ) {
        return undefined;
      }
      if (stored === undefined && interactive === undefined) {
        throw loginNeeded(state, 'it has never logged in on this machine');
      }
      return stored;
    },
    async saveClientInformation(information) {
      // Configured credentials stay in the config's environment, never on disk; the issuer
      // stamp the SDK adds on first use binds them to that authorization server for this process.
      if (preRegistered !== undefined) {
        if (preRegistered.issuer === undefined && typeof information.issuer === 'string') {
          preRegistered = { ...preRegistered, issuer: information.issuer };
        }
        return;
      }
      await store.update({ clientInformation: information, redirectUri: redirectUrl });
    },
    async tokens() {
      return (await store.load()).tokens;
    },
    async saveTokens(tokens: OAuthTokens) {
      await store.update({ tokens, tokensSavedAt: Date.now() });
    },
    async redirectToAuthorization(authorizationUrl) {
      if (interactive === undefined) {
        const state = await store.load();
        throw loginNeeded(
          state,
          state.tokens === undefined
            ? 'it has no tokens'
            : 'its tokens expired or lack a scope the server now asks for, and could not be refreshed',
        );
      }
      authorizationStarted = true;
      await interactive.authorize(authorizationUrl);
    },
    saveCodeVerifier(verifier) {
      codeVerifier = verifier;
    },
    codeVerifier() {
      if (codeVerifier === undefined) {
        throw new AgentsError(
          AgentsErrorCode.AuthRequired,
          `No login of server "${serverName}" is in progress (no PKCE verifier); run \`${loginCommand}\`.`,
        );
      }
      return codeVerifier;
    },
    async invalidateCredentials(scope) {
      if (scope === 'verifier') {
        codeVerifier = undefined;
        return;
      }
      await store.clear(scope);
    },
    async saveDiscoveryState(discovery: OAuthDiscoveryState) {
      await store.update({ discovery });
    },
    async discoveryState() {
      // Only the callback leg of a login started in this process reuses what was discovered
      // (the code is bound to that authorization server). Every other auth() run reads the
      // server's metadata afresh, so a server that moved to another authorization server is
      // seen at once instead of being refreshed at, or sent back to, the old one.
      if (codeVerifier === undefined) return undefined;
      return (await store.load()).discovery;
    },
  };
}

/**
 * The SDK's issuer identity for stored credentials (SEP-2352): equal, or equal but for one
 * trailing slash. The RFC 9207 `iss` check is stricter (exact) and is the SDK's.
 */
function sameIssuer(a: string, b: string): boolean {
  return a === b || a.replace(/\/$/, '') === b.replace(/\/$/, '');
}

/** An issuer from untrusted metadata, quoted and cut short for a message. */
export function quoteIssuer(issuer: string | undefined): string {
  return issuer === undefined ? '(none)' : JSON.stringify(issuer.slice(0, 200));
}

/**
 * The `client_credentials` client of an unattended actor: the SDK's `ClientCredentialsProvider`
 * (client secret, `client_secret_basic`) or `PrivateKeyJwtProvider` (`private_key_jwt`, when
 * `privateKey` is set). Tokens stay in memory: a new one is fetched per connection and on 401.
 * Throws `CONFIG_INVALID` when the settings lack a client id or a secret/key.
 */
export function createClientCredentialsProvider(
  serverName: string,
  settings: Partial<OAuthSettings>,
): OAuthClientProvider {
  const where = `Server "${serverName}" oauth`;
  if (settings.clientId === undefined) {
    throw new AgentsError(
      AgentsErrorCode.ConfigInvalid,
      `${where}: clientId is missing; client_credentials needs a pre-registered client (clientId plus clientSecret or privateKey).`,
      { details: { serverName, problems: [{ path: 'oauth.clientId', message: 'missing' }] } },
    );
  }
  const common = {
    clientId: settings.clientId,
    clientName: OAUTH_CLIENT_NAME,
    ...(settings.scope === undefined ? {} : { scope: settings.scope }),
    ...(settings.issuer === undefined ? {} : { expectedIssuer: settings.issuer }),
  };
  if (settings.privateKey !== undefined) {
    return new PrivateKeyJwtProvider({
      ...common,
      privateKey: settings.privateKey,
      algorithm: settings.algorithm ?? 'RS256',
    });
  }
  if (settings.clientSecret === undefined) {
    throw new AgentsError(
      AgentsErrorCode.ConfigInvalid,
      `${where}: clientSecret (or privateKey) is missing; write it as \${VAR} and export the variable.`,
      { details: { serverName, problems: [{ path: 'oauth.clientSecret', message: 'missing' }] } },
    );
  }
  return new ClientCredentialsProvider({ ...common, clientSecret: settings.clientSecret });
}
