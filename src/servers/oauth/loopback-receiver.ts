import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AgentsError, AgentsErrorCode } from '../../errors.js';

/** Options of {@link startLoopbackReceiver}. */
export interface LoopbackReceiverOptions {
  /** Port on 127.0.0.1; 0 (default) picks a free one. */
  port?: number;
  /** Path of the redirect; default `/callback`. */
  path?: string;
}

/**
 * The redirect target of an OAuth login: an HTTP listener on 127.0.0.1 (never another
 * interface) that takes the one authorization response the browser brings back.
 */
export interface LoopbackReceiver extends AsyncDisposable {
  /** `http://127.0.0.1:PORT/callback`. */
  readonly redirectUrl: string;
  /**
   * Resolves with the authorization code of the next redirect whose `state` equals `expectedState`
   * (a redirect with another state is refused with 400 and ignored: it is not ours). Rejects on an
   * `error=` redirect (the person denied, or the server refused), on abort and after `timeoutMs`.
   */
  waitForCode(expectedState: string | undefined, options?: WaitForCodeOptions): Promise<string>;
  /**
   * The `iss` the authorization response carried with `code` (RFC 9207), for the token exchange
   * to check against the authorization server's metadata; undefined when it sent none.
   */
  issuerOf(code: string): string | undefined;
  /**
   * Takes an authorization response a person pasted: the address the browser ended on, when that
   * browser runs on another machine (SSH, headless) and so never reached this listener. Returns
   * undefined when it was taken (the `state` check still applies in `waitForCode`), else why not.
   */
  acceptPasted(text: string): string | undefined;
  close(): Promise<void>;
}

/** Options of {@link LoopbackReceiver.waitForCode}. */
export interface WaitForCodeOptions {
  signal?: AbortSignal;
  /** Default 5 minutes: a person has to read and click. */
  timeoutMs?: number;
}

interface Arrival {
  code?: string;
  iss?: string;
  error?: string;
  errorDescription?: string;
  state?: string;
}

const PAGE = (title: string, text: string) =>
  `<!doctype html><meta charset="utf-8"><title>${title}</title><p>${text}</p>`;

/** The authorization response a redirect URL carries (code or error), or undefined. */
function arrivalOf(url: URL): Arrival | undefined {
  const arrival: Arrival = {};
  for (const key of ['code', 'error', 'state', 'iss'] as const) {
    const value = url.searchParams.get(key);
    if (value !== null) arrival[key] = value;
  }
  const description = url.searchParams.get('error_description');
  if (description !== null) arrival.errorDescription = description;
  return arrival.code === undefined && arrival.error === undefined ? undefined : arrival;
}

/** Starts the loopback redirect listener. Close it (or `await using`) when the login is over. */
export async function startLoopbackReceiver(
  options: LoopbackReceiverOptions = {},
): Promise<LoopbackReceiver> {
  const path = options.path ?? '/callback';
  const arrivals: Arrival[] = [];
  const issuers = new Map<string, string>();
  let notify: (() => void) | undefined;
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (req.method !== 'GET' || url.pathname !== path) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('Not found');
      return;
    }
    const arrival = arrivalOf(url);
    if (arrival === undefined) {
      res.writeHead(400, { 'content-type': 'text/html' });
      res.end(PAGE('Login failed', 'This page expects an OAuth authorization response.'));
      return;
    }
    arrivals.push(arrival);
    notify?.();
    const ok = arrival.code !== undefined;
    res.writeHead(ok ? 200 : 400, {
      'content-type': 'text/html',
      // The page must not be cached or framed: it carried a one-time code.
      'cache-control': 'no-store',
      'x-frame-options': 'DENY',
    });
    res.end(
      ok
        ? PAGE('Logged in', 'Login complete. You can close this window and return to the terminal.')
        : PAGE('Login failed', 'The authorization server refused the login; see the terminal.'),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      reject(
        new AgentsError(
          AgentsErrorCode.ServerStartFailed,
          error.code === 'EADDRINUSE'
            ? `Port ${options.port ?? 0} on 127.0.0.1 is in use, so the login redirect cannot be received; free it or change oauth.redirectPort.`
            : `Cannot listen on 127.0.0.1 for the login redirect: ${error.message}`,
          { cause: error },
        ),
      );
    });
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  let closed: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closed ??= new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
    return closed;
  };

  const redirectUrl = `http://127.0.0.1:${port}${path}`;
  const acceptPasted = (text: string): string | undefined => {
    let url: URL;
    try {
      url = new URL(text.trim());
    } catch {
      return `that is not a URL; paste the whole address the browser ended on (${redirectUrl}?code=...)`;
    }
    const ours =
      url.protocol === 'http:' &&
      (url.hostname === '127.0.0.1' || url.hostname === 'localhost') &&
      Number(url.port) === port &&
      url.pathname === path;
    if (!ours) return `that address is not this login's redirect (${redirectUrl}?code=...)`;
    const arrival = arrivalOf(url);
    if (arrival === undefined) return 'that address carries no authorization response (no code)';
    arrivals.push(arrival);
    notify?.();
    return undefined;
  };
  return {
    redirectUrl,
    acceptPasted,
    async waitForCode(expectedState, waitOptions = {}) {
      const { signal, timeoutMs = 300_000 } = waitOptions;
      signal?.throwIfAborted();
      return new Promise<string>((resolve, reject) => {
        const timer = setTimeout(
          () =>
            finish(
              new AgentsError(
                AgentsErrorCode.Timeout,
                `No login came back to ${redirectUrl} within ${Math.round(timeoutMs / 1000)} s; run the login again.`,
              ),
            ),
          timeoutMs,
        );
        const onAbort = () =>
          finish(
            new AgentsError(AgentsErrorCode.Aborted, 'The login was interrupted.', {
              cause: signal?.reason,
            }),
          );
        signal?.addEventListener('abort', onAbort, { once: true });
        const finish = (error: AgentsError | undefined, code?: string) => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
          notify = undefined;
          if (error) reject(error);
          else resolve(code ?? '');
        };
        const check = () => {
          while (arrivals.length > 0) {
            const arrival = arrivals.shift() as Arrival;
            // The state is single-use and must match: a redirect forged by another page is dropped.
            if (expectedState !== undefined && arrival.state !== expectedState) continue;
            if (arrival.error !== undefined) {
              finish(
                new AgentsError(
                  AgentsErrorCode.AuthRequired,
                  `The authorization server refused the login: ${arrival.error}${arrival.errorDescription ? ` (${arrival.errorDescription})` : ''}.`,
                  { details: { error: arrival.error } },
                ),
              );
              return;
            }
            if (arrival.code !== undefined && arrival.iss !== undefined)
              issuers.set(arrival.code, arrival.iss);
            finish(undefined, arrival.code);
            return;
          }
        };
        notify = check;
        check();
      });
    },
    issuerOf: (code) => issuers.get(code),
    close,
    [Symbol.asyncDispose]: close,
  };
}
