/**
 * Redaction of secrets in the strings we show in errors and logs (security note T18): values of
 * secret-looking flags and `KEY=value` pairs, URL passwords and query values. One place, so the
 * server lifecycle and the checkpointer hide the same things.
 */

const SECRET_NAME =
  /(token|secret|password|passwd|pwd|api[-_]?key|apikey|auth|credential|session|cookie|private)/i;
const REDACTED = '***';

/** True when a flag, variable or parameter name looks like it holds a secret. */
export function isSecretName(name: string): boolean {
  return SECRET_NAME.test(name);
}

/** Redacts one argv item: `--token=abc` → `--token=***`, `API_KEY=abc` → `API_KEY=***`. */
function redactArgument(argument: string, previous: string | undefined): string {
  const eq = argument.indexOf('=');
  if (eq > 0 && isSecretName(argument.slice(0, eq)))
    return `${argument.slice(0, eq + 1)}${REDACTED}`;
  // `--token abc`: the value after a secret-looking flag.
  if (previous !== undefined && /^--?[\w-]+$/.test(previous) && isSecretName(previous))
    return REDACTED;
  return argument;
}

function quote(argument: string): string {
  return /^[\w@%+=:,./*-]+$/.test(argument) ? argument : JSON.stringify(argument);
}

/**
 * Formats a command line for messages, with secret-looking values redacted. Display only:
 * spawning always uses the argv array.
 */
export function formatCommandLine(command: string, args: readonly string[]): string {
  const parts = [quote(command)];
  args.forEach((argument, index) => parts.push(quote(redactArgument(argument, args[index - 1]))));
  return parts.join(' ');
}

/** Options of {@link redactUrl}. */
export interface RedactUrlOptions {
  /** Keep the user name (the password is always masked). Default false: userinfo is dropped. */
  keepUsername?: boolean;
  /** `all` (default) masks every query value; `secret` only those whose name looks secret. */
  query?: 'all' | 'secret';
}

/**
 * A URL fit for messages: password masked (or all userinfo dropped), query values masked, fragment
 * dropped. An unparseable URL becomes `<invalid url>` rather than being echoed.
 */
export function redactUrl(url: string | URL, options: RedactUrlOptions = {}): string {
  let parsed: URL;
  try {
    parsed = new URL(String(url));
  } catch {
    return '<invalid url>';
  }
  if (options.keepUsername === true) {
    if (parsed.password !== '') parsed.password = REDACTED;
  } else {
    parsed.username = '';
    parsed.password = '';
  }
  parsed.hash = '';
  for (const key of [...parsed.searchParams.keys()]) {
    if (options.query === 'secret' && !isSecretName(key)) continue;
    parsed.searchParams.set(key, REDACTED);
  }
  return parsed.toString();
}

/** Formats a server URL for messages: no userinfo, query values redacted, fragment dropped. */
export function formatUrl(url: string | URL): string {
  return redactUrl(url);
}
