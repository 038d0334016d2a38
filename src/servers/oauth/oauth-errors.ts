import {
  AuthorizationServerMismatchError,
  IssuerMismatchError,
} from '@modelcontextprotocol/client';
import { AgentsError, AgentsErrorCode } from '../../errors.js';
import { quoteIssuer } from './oauth-provider.js';

/** Where an OAuth flow failure happened, for the message. */
export interface OAuthFailureContext {
  serverName: string;
  loginCommand: string;
}

/**
 * The typed error for an OAuth flow failure the SDK reports with its own classes (found on the
 * error or one of its causes), or undefined for any other failure:
 *
 * - `IssuerMismatchError` (RFC 9207 `iss` of the authorization response, or RFC 8414 `issuer`
 *   of the metadata): `AUTH_REQUIRED` naming the expected and the received issuer. The code was
 *   not exchanged. The received value is attacker-controlled in a mix-up: quoted and cut short.
 * - `AuthorizationServerMismatchError`: the callback came back for another authorization server.
 * - an authorization server with no registration endpoint and no usable client ID metadata
 *   document: `CONFIG_INVALID` naming the settings that fix it.
 */
export function oauthFlowError(
  error: unknown,
  context: OAuthFailureContext,
): AgentsError | undefined {
  const { serverName, loginCommand } = context;
  for (let current: unknown = error, depth = 0; current && depth < 6; depth++) {
    if (AgentsError.isInstance(current)) return current;
    if (current instanceof IssuerMismatchError) {
      const what =
        current.kind === 'authorization_response'
          ? `the authorization response names issuer ${quoteIssuer(current.received)}, but the login was sent to ${quoteIssuer(current.expected)} (RFC 9207); the code was not exchanged`
          : `the authorization server metadata names issuer ${quoteIssuer(current.received)}, but was fetched for ${quoteIssuer(current.expected)} (RFC 8414); its endpoints were not used`;
      return new AgentsError(
        AgentsErrorCode.AuthRequired,
        `Login to server "${serverName}" refused: ${what}. Another authorization server answered (a mix-up attack or a misconfigured server); check the server's OAuth setup, then run \`${loginCommand}\` again.`,
        {
          cause: current,
          details: {
            serverName,
            check: current.kind,
            expectedIssuer: current.expected,
            receivedIssuer: current.received,
          },
        },
      );
    }
    if (current instanceof AuthorizationServerMismatchError) {
      const mismatch = current;
      return new AgentsError(
        AgentsErrorCode.AuthRequired,
        `Login to server "${serverName}" refused: it was started at authorization server ${quoteIssuer(mismatch.recordedIssuer)} but the server now names ${quoteIssuer(mismatch.currentIssuer)}; run \`${loginCommand}\` again.`,
        {
          cause: current,
          details: {
            serverName,
            expectedIssuer: mismatch.recordedIssuer,
            receivedIssuer: mismatch.currentIssuer,
          },
        },
      );
    }
    if (
      current instanceof Error &&
      current.message.includes('does not support dynamic client registration')
    ) {
      return new AgentsError(
        AgentsErrorCode.ConfigInvalid,
        `Server "${serverName}": its authorization server offers no dynamic client registration; set oauth.clientMetadataUrl (an https URL serving this client's metadata document, when the server supports those) or oauth.clientId of a client registered there.`,
        {
          cause: current,
          details: {
            serverName,
            problems: [
              { path: 'oauth.clientMetadataUrl', message: 'needed: no registration endpoint' },
            ],
          },
        },
      );
    }
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}
