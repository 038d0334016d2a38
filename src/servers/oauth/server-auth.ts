import { UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/client';
import { expandEnvReferences } from '../../config/env-references.js';
import type { HttpServerConfig, OAuthSettings } from '../../config/server-schema.js';
import type { Authorizer } from './authorizers.js';
import {
  createClientCredentialsProvider,
  createStoredOAuthProvider,
  type StoredOAuthProvider,
} from './oauth-provider.js';
import { createFileOAuthStore, type OAuthStateStore } from './oauth-store.js';

/** A remote server config with its name. */
export type NamedHttpServerConfig = HttpServerConfig & { name: string };

/** The command that logs in to a server, as errors name it. */
export function loginCommandFor(serverName: string): string {
  return `agents server login ${serverName}`;
}

/**
 * The server's OAuth settings with `${VAR}` references resolved; undefined when OAuth is off for
 * it: `oauth: false`, or a static `Authorization` header and no `oauth` block (the header is
 * the credential then). Throws `CONFIG_INVALID` naming an unset variable.
 */
export function resolveOAuthSettings(
  config: NamedHttpServerConfig,
  env: NodeJS.ProcessEnv = process.env,
): Partial<OAuthSettings> | undefined {
  if (config.oauth === false) return undefined;
  if (config.oauth === undefined) {
    const hasAuthorization = Object.keys(config.headers ?? {}).some(
      (header) => header.toLowerCase() === 'authorization',
    );
    return hasAuthorization ? undefined : {};
  }
  const where = (field: string) => `Server "${config.name}" oauth.${field}`;
  const settings: Partial<OAuthSettings> = { ...config.oauth };
  for (const field of ['clientId', 'clientSecret', 'privateKey'] as const) {
    const value = settings[field];
    if (value !== undefined) settings[field] = expandEnvReferences(value, where(field), env);
  }
  return settings;
}

/** Options of {@link createServerOAuthProvider}. */
export interface ServerOAuthProviderOptions {
  /** Per-user state folder; default `defaultStateDir()`. */
  stateDir?: string;
  /** A store to use instead of the state file (tests, one-off clients). */
  store?: OAuthStateStore;
  /** Present during `agents server login` (and `agents mcp-client`): the login's redirect and authorizer. */
  interactive?: { redirectUrl: string; authorize: Authorizer };
  env?: NodeJS.ProcessEnv;
}

/**
 * The OAuth client of a remote server: `client_credentials` providers for unattended use, the
 * stored authorization-code provider otherwise, or undefined when OAuth is off for it.
 */
export function createServerOAuthProvider(
  config: NamedHttpServerConfig,
  options: ServerOAuthProviderOptions = {},
): OAuthClientProvider | undefined {
  const settings = resolveOAuthSettings(config, options.env);
  if (settings === undefined) return undefined;
  if (settings.grant === 'client_credentials') {
    return createClientCredentialsProvider(config.name, settings);
  }
  return createStoredOAuthProvider({
    serverName: config.name,
    settings,
    store:
      options.store ??
      createFileOAuthStore({
        serverName: config.name,
        serverUrl: config.url,
        ...(options.stateDir === undefined ? {} : { stateDir: options.stateDir }),
      }),
    loginCommand: loginCommandFor(config.name),
    ...(options.interactive === undefined ? {} : { interactive: options.interactive }),
  });
}

/** True for a {@link StoredOAuthProvider} (authorization code), false for client credentials. */
export function isStoredOAuthProvider(
  provider: OAuthClientProvider | undefined,
): provider is StoredOAuthProvider {
  return provider !== undefined && 'resetAuthorization' in provider;
}

/** True when an error (or one of its causes) is the SDK's "authorization needed" signal. */
export function isUnauthorized(error: unknown): boolean {
  for (let current: unknown = error, depth = 0; current && depth < 5; depth++) {
    if (current instanceof UnauthorizedError) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}
