import { randomBytes } from 'node:crypto';
import {
  ClientCredentialsProvider,
  PrivateKeyJwtProvider,
  type OAuthClientInformationMixed,
  type OAuthClientMetadata,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
  type OAuthTokens,
} from '@modelcontextprotocol/client';
import type { OAuthSettings } from '../../config/schemas.js';
import { AgentsError, AgentsErrorCode, ServerError } from '../../errors.js';
import type { Authorizer } from './authorizers.js';
import type { OAuthState, OAuthStateStore } from './oauth-store.js';

/** The client name this library registers under. */
export const OAUTH_CLIENT_NAME = 'agents (@agents/langgraph-mcp)';

/** Where the redirect goes when no login is running: never contacted, only named in metadata. */
const PLACEHOLDER_REDIRECT = 'http://127.0.0.1/callback';

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
   * some of it: in a login, drops the refresh token so the SDK's `auth()` authorizes again with
   * the wider scope (a refresh cannot widen it); unattended, throws `AUTH_REQUIRED` naming the
   * scope and the login command.
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
  const preRegistered: OAuthClientInformationMixed | undefined =
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
      const { refresh_token: _refresh, ...withoutRefresh } = state.tokens;
      await store.update({ tokens: withoutRefresh });
    },
    state() {
      // Single-use and unguessable: the redirect listener drops any response without it.
      expectedState = randomBytes(24).toString('base64url');
      return expectedState;
    },
    async clientInformation() {
      if (preRegistered !== undefined) return preRegistered;
      const state = await store.load();
      const stored = state.clientInformation;
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
      // Configured credentials stay in the config's environment, never on disk.
      if (preRegistered !== undefined) return;
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
      return (await store.load()).discovery;
    },
  };
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
