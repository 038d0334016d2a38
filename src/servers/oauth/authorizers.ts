import { spawn } from 'node:child_process';
import { AgentsError, AgentsErrorCode, errorMessage } from '../../errors.js';

/**
 * Takes a person (or a stand-in) to the authorization URL. It returns once the page is on its
 * way; the code comes back to the loopback redirect listener, not through this function.
 */
export type Authorizer = (authorizationUrl: URL) => Promise<void>;

/** How `agents server login` and `agents mcp-client` visit the authorization URL. */
export type AuthorizeMode = 'browser' | 'print' | 'follow';

/**
 * Refuses anything but an http(s) URL without credentials: the URL comes from the server's
 * metadata (untrusted), and an `authorization_endpoint` with shell syntax reaching an opener is
 * how mcp-remote was exploited (CVE-2025-6514). We also never go through a shell.
 */
export function assertSafeAuthorizationUrl(url: URL): void {
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.username || url.password) {
    throw new AgentsError(
      AgentsErrorCode.AuthRequired,
      `Refusing to open the authorization URL ${JSON.stringify(url.href.slice(0, 200))}: only http(s) URLs without credentials are opened. The server's OAuth metadata is wrong or hostile.`,
      { details: { url: url.href.slice(0, 200) } },
    );
  }
}

/** True when a browser can be opened: macOS, or a Linux/BSD session with a display. */
export function canOpenBrowser(
  env: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
): boolean {
  if (platform === 'darwin') return true;
  if (platform === 'win32') return false;
  return Boolean(env['DISPLAY'] || env['WAYLAND_DISPLAY']);
}

/** Options of {@link createBrowserAuthorizer}. */
export interface BrowserAuthorizerOptions {
  /** Where the URL is printed (always, so a person can copy it when no browser opens). */
  print: (line: string) => void;
  /** `browser` opens it when there is a display; `print` only prints. */
  mode: 'browser' | 'print';
  env?: NodeJS.ProcessEnv;
  platform?: NodeJS.Platform;
  /** Printed after the URL: how long the login waits for the browser (ms; said in seconds). */
  waitMs?: number;
  /** Tell the person they can paste the address the browser ended on (the CLI reads stdin). */
  pasteFallback?: boolean;
}

/**
 * The authorizer for people: prints the URL and, in `browser` mode with a display, opens it with
 * `xdg-open` (Linux) or `open` (macOS), spawned with an argv array, detached, output ignored.
 */
export function createBrowserAuthorizer(options: BrowserAuthorizerOptions): Authorizer {
  return async (authorizationUrl) => {
    assertSafeAuthorizationUrl(authorizationUrl);
    const platform = options.platform ?? process.platform;
    const open = options.mode === 'browser' && canOpenBrowser(options.env, platform);
    options.print(
      open
        ? `Opening your browser to log in. If it does not open, visit:\n  ${authorizationUrl.href}`
        : `Open this URL in a browser to log in:\n  ${authorizationUrl.href}`,
    );
    const waiting = waitingLines(authorizationUrl, options);
    if (waiting !== undefined) options.print(waiting);
    if (!open) return;
    const opener = platform === 'darwin' ? 'open' : 'xdg-open';
    try {
      const child = spawn(opener, [authorizationUrl.href], {
        detached: true,
        stdio: 'ignore',
        shell: false,
      });
      // A missing opener is not fatal: the URL is printed above.
      child.on('error', () => undefined);
      child.unref();
    } catch (error) {
      options.print(`(could not start ${opener}: ${errorMessage(error)})`);
    }
  };
}

/** "Waiting … (Ctrl-C to stop)" and the paste hint, naming the redirect the URL asks for. */
function waitingLines(
  authorizationUrl: URL,
  options: BrowserAuthorizerOptions,
): string | undefined {
  if (options.waitMs === undefined && options.pasteFallback !== true) return undefined;
  const redirect = authorizationUrl.searchParams.get('redirect_uri') ?? 'this machine';
  const lines = [
    `Waiting${options.waitMs === undefined ? '' : ` up to ${Math.round(options.waitMs / 1000)} s`} for the browser to come back to ${redirect} (Ctrl-C to stop)...`,
  ];
  if (options.pasteFallback === true) {
    lines.push(
      `Browser on another machine (SSH, headless)? It ends on an address starting with ${redirect} that fails to load: paste that whole address here and press Enter.`,
    );
  }
  return lines.join('\n');
}

/**
 * An authorizer for automation against an authorization server that approves without a person
 * (test servers, the conformance suite): it GETs the authorization URL and follows its
 * redirects, which end at the loopback listener with the code. Never use it against a real
 * login page: it would approve whatever that server offers.
 */
export function createFollowRedirectsAuthorizer(
  fetchFn: typeof fetch = fetch,
  options: { signal?: AbortSignal } = {},
): Authorizer {
  return async (authorizationUrl) => {
    assertSafeAuthorizationUrl(authorizationUrl);
    const response = await fetchFn(authorizationUrl, {
      redirect: 'follow',
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
    await response.body?.cancel();
    // A redirect that reached the listener has delivered its code or error there.
    if (!response.ok && !response.redirected) {
      throw new AgentsError(
        AgentsErrorCode.AuthRequired,
        `The authorization request to ${authorizationUrl.origin} ended with HTTP ${response.status} instead of a redirect to this client.`,
        { details: { status: response.status } },
      );
    }
  };
}
