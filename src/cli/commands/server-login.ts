import { rm } from 'node:fs/promises';
import type { NamedServerConfig } from '../../config/server-schema.js';
import { AgentsError, AgentsErrorCode } from '../../errors.js';
import type { AuthorizeMode } from '../../servers/oauth/authorizers.js';
import {
  parseCommandLine,
  parsePositiveInteger,
  requirePositional,
  storeOf,
  usageError,
} from '../args.js';
import type { Command } from '../command.js';
import { printJson, println } from '../output.js';

const LOGIN_USAGE = `Usage: agents server login NAME [--authorize browser|print|follow] [--force] [--scope S] [--timeout SECONDS]
       agents server login NAME --client-metadata

Logs in to a remote MCP server with OAuth 2.1 (discovery, client registration or the configured
client, PKCE, refresh) and checks that it now answers. A redirect listener runs on 127.0.0.1 for
the login's redirect; tokens are kept in the per-user state folder
($AGENTS_STATE_DIR, else $XDG_STATE_HOME/agents, else ~/.local/state/agents) with mode 0600,
never in .agents/. Actor runs and \`agents serve\` use (and refresh) them without asking.

Options:
  --authorize MODE  browser (default: open it when there is a display, and print the URL),
                    print (only print the URL; on a headless or SSH machine, paste the address
                    the browser ended on into this terminal), follow (fetch the URL and follow its redirects,
                    for authorization servers that approve without a person, e.g. in tests)
  --force           log in again even when the stored tokens still work
  --scope S         scopes the login must grant beyond what the server asks for at connect
                    (an unattended run names them when a tool needs more)
  --timeout S       how long to wait for the login to come back (default 300)
  --client-metadata print the client ID metadata document to serve at the server's
                    oauth.clientMetadataUrl (used instead of dynamic registration where the
                    authorization server supports it), and do nothing else
  --json            print the result as JSON`;

/** How long a login waits for the browser, in seconds (`--timeout`). */
const DEFAULT_TIMEOUT_SECONDS = 300;

function parseAuthorizeMode(value: string | undefined, usage: string): AuthorizeMode {
  if (value === undefined) return 'browser';
  if (value === 'browser' || value === 'print' || value === 'follow') return value;
  throw usageError(`--authorize takes browser, print or follow, got "${value}".`, usage);
}

/** The config of a remote server by name; a stdio server gets a clear "nothing to log in to". */
async function remoteServer(
  context: Parameters<Command['run']>[0],
  name: string,
): Promise<NamedServerConfig & { transport: 'streamable-http' | 'sse' | 'auto' }> {
  const config = await storeOf(context).get('server', name);
  if (config.transport === 'stdio') {
    throw new AgentsError(
      AgentsErrorCode.ConfigInvalid,
      `Server "${name}" is a local (stdio) server; OAuth login is for remote servers (--url).`,
      { details: { serverName: name, problems: [] } },
    );
  }
  return config;
}

const serverLogin: Command = {
  path: ['server', 'login'],
  usage: LOGIN_USAGE,
  async run(context) {
    const { values, positionals } = parseCommandLine(
      context.argv,
      {
        authorize: { type: 'string' },
        force: { type: 'boolean' },
        scope: { type: 'string' },
        timeout: { type: 'string' },
        'client-metadata': { type: 'boolean' },
      },
      LOGIN_USAGE,
    );
    const name = requirePositional(positionals, 'server NAME', LOGIN_USAGE);
    const mode = parseAuthorizeMode(values.authorize, LOGIN_USAGE);
    const timeoutSeconds = parsePositiveInteger(values.timeout, 'timeout', LOGIN_USAGE);
    const config = await remoteServer(context, name);
    if (values['client-metadata'] === true) {
      const oauth = config.oauth === false ? undefined : config.oauth;
      if (oauth?.clientMetadataUrl === undefined) {
        throw new AgentsError(
          AgentsErrorCode.ConfigInvalid,
          `Server "${name}" has no oauth.clientMetadataUrl; set it to the https URL where you will serve the document, then run this again.`,
          {
            details: {
              serverName: name,
              problems: [{ path: 'oauth.clientMetadataUrl', message: 'missing' }],
            },
          },
        );
      }
      const { clientMetadataDocument } = await import('../../servers/oauth/oauth-provider.js');
      printJson(
        context.stdout,
        clientMetadataDocument(oauth.clientMetadataUrl, oauth.redirectPort),
      );
      return 0;
    }
    const { createBrowserAuthorizer, createFollowRedirectsAuthorizer } =
      await import('../../servers/oauth/authorizers.js');
    const { loginToServer } = await import('../../servers/oauth/login.js');
    const authorize =
      mode === 'follow'
        ? createFollowRedirectsAuthorizer(fetch, { signal: context.signal })
        : createBrowserAuthorizer({
            mode,
            print: (line) => println(context.stderr, line),
            waitMs: (timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS) * 1000,
            pasteFallback: true,
          });
    const result = await loginToServer(config, {
      authorize,
      ...(mode === 'follow'
        ? {}
        : {
            pastedRedirects: context.stdin,
            onPasteProblem: (problem: string) =>
              println(context.stderr, `Not taken: ${problem}. Still waiting...`),
          }),
      force: values.force === true,
      ...(values.scope === undefined ? {} : { scope: values.scope }),
      signal: context.signal,
      timeoutMs: (timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS) * 1000,
    });
    if (context.json) {
      printJson(context.stdout, result);
      return 0;
    }
    const what =
      result.how === 'login'
        ? 'Logged in to'
        : result.how === 'stored'
          ? 'Already logged in to'
          : 'Authenticated (client credentials) with';
    println(
      context.stdout,
      `${what} server "${name}"${result.scope ? ` (scope: ${result.scope})` : ''}; it answered with ${result.tools.length} tools: ${result.tools.join(', ')}`,
    );
    if (result.stateFile) println(context.stdout, `Tokens: ${result.stateFile}`);
    return 0;
  },
};

const LOGOUT_USAGE = `Usage: agents server logout NAME

Forgets the OAuth tokens and client registration stored for a remote server on this machine.`;

const serverLogout: Command = {
  path: ['server', 'logout'],
  usage: LOGOUT_USAGE,
  async run(context) {
    const { positionals } = parseCommandLine(context.argv, {}, LOGOUT_USAGE);
    const name = requirePositional(positionals, 'server NAME', LOGOUT_USAGE);
    const config = await remoteServer(context, name);
    const { oauthStateFile } = await import('../../servers/oauth/oauth-store.js');
    const file = oauthStateFile({ serverName: name, serverUrl: config.url });
    await rm(file, { force: true });
    if (context.json) printJson(context.stdout, { name, file });
    else println(context.stdout, `Forgot the OAuth login of server "${name}" (${file}).`);
    return 0;
  },
};

/** `agents server login|logout`. */
export const serverLoginCommands: readonly Command[] = [serverLogin, serverLogout];
