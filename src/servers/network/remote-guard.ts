/**
 * The host lists applied to the library's own connections to a remote (HTTP/SSE) server: every
 * request URL and every redirect hop is decided like a proxied connection, before it is made,
 * and the connection goes to the address that was checked (no second name resolution that a
 * rebinding name could answer differently).
 */
import type { FetchLike } from '@modelcontextprotocol/client';
import { AgentsError, AgentsErrorCode } from '../../errors.js';
import type { HostRules } from './host-rules.js';
import { fetchPinned } from './pinned-fetch.js';
import { decideTarget, type DecisionOptions, type NetworkDecision } from './proxy-decision.js';

const MAX_REDIRECTS = 5;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** A fetch that refuses URLs (and redirects) the lists do not allow. */
export function guardedFetch(
  serverName: string,
  rules: HostRules,
  options: DecisionOptions & { onDecision?: (decision: NetworkDecision) => void },
): FetchLike {
  return async (input, init) => {
    let url = new URL(input instanceof URL ? input.href : input);
    let request: RequestInit = { ...init, redirect: 'manual' };
    for (let hop = 0; ; hop++) {
      const port = url.port !== '' ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
      const verdict = await decideTarget(rules, url.hostname, port, options);
      options.onDecision?.({
        time: new Date().toISOString(),
        serverName,
        protocol: 'remote',
        host: url.hostname,
        port,
        ...(verdict.address === undefined ? {} : { address: verdict.address }),
        decision: verdict.allowed ? 'allow' : 'deny',
        reason: hop === 0 ? verdict.reason : `redirect ${hop}: ${verdict.reason}`,
        ...(verdict.rule === undefined ? {} : { rule: verdict.rule }),
      });
      if (!verdict.allowed) {
        throw new AgentsError(
          AgentsErrorCode.NetworkRefused,
          `Server "${serverName}": connection to ${url.host} refused by its network lists (${verdict.reason})${hop === 0 ? '' : ` after ${hop} redirect(s)`}. Add the host to network.allow for this server if it is meant to be reached.`,
          { details: { serverName, host: url.hostname, port, hop } },
        );
      }
      const response = await fetchPinned(url, request, verdict.address);
      const location = response.headers.get('location');
      if (!REDIRECTS.has(response.status) || location === null) return response;
      if (hop >= MAX_REDIRECTS) {
        throw new AgentsError(
          AgentsErrorCode.NetworkRefused,
          `Server "${serverName}": more than ${MAX_REDIRECTS} redirects from ${url.host}; not followed.`,
          { details: { serverName } },
        );
      }
      await response.body?.cancel().catch(() => undefined);
      const next = new URL(location, url);
      const method = (request.method ?? 'GET').toUpperCase();
      // As browsers do: 303 (and 301/302 after POST) become a GET without a body.
      if (
        response.status === 303 ||
        ((response.status === 301 || response.status === 302) && method === 'POST')
      ) {
        request = { ...request, method: 'GET', body: null };
      }
      if (next.origin !== url.origin) {
        // Credentials never follow a redirect to another origin.
        const headers = new Headers(request.headers);
        headers.delete('authorization');
        headers.delete('cookie');
        request = { ...request, headers };
      }
      url = next;
    }
  };
}
