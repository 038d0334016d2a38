/**
 * Redaction of secrets in the strings we show in errors and logs (T18): values of flags and
 * `KEY=value` pairs whose name looks secret, URL userinfo and query values.
 */

const SECRET_NAME = /(token|secret|password|passwd|pwd|api[-_]?key|apikey|auth|credential|session|cookie|private)/i;
const REDACTED = '***';

/** Redacts one argv item: `--token=abc` → `--token=***`, `API_KEY=abc` → `API_KEY=***`. */
function redactArgument(argument: string, previous: string | undefined): string {
  const eq = argument.indexOf('=');
  if (eq > 0 && SECRET_NAME.test(argument.slice(0, eq))) return `${argument.slice(0, eq + 1)}${REDACTED}`;
  // `--token abc`: the value after a secret-looking flag.
  if (previous !== undefined && /^--?[\w-]+$/.test(previous) && SECRET_NAME.test(previous)) return REDACTED;
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

/** Formats a URL for messages: no userinfo, query values redacted, fragment dropped. */
export function formatUrl(url: string | URL): string {
  let parsed: URL;
  try {
    parsed = new URL(String(url));
  } catch {
    return '<invalid url>';
  }
  parsed.username = '';
  parsed.password = '';
  parsed.hash = '';
  for (const key of [...parsed.searchParams.keys()]) parsed.searchParams.set(key, REDACTED);
  return parsed.toString();
}
