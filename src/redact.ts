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

/** Query parameter names that hold a secret in a URL, beyond {@link isSecretName}: `?key=...`. */
const SECRET_QUERY_NAME = /^(key|access[-_]?key|sig|signature|pass|pw)$/i;

/** True when a URL query parameter of this name holds a secret. */
export function isSecretQueryName(name: string): boolean {
  return isSecretName(name) || SECRET_QUERY_NAME.test(name);
}

/** The credential parts of a URL written in some text, with where they are. */
export interface UrlCredentials {
  /** The password of `scheme://user:password@host` (absent without one). */
  password?: { value: string; start: number; end: number };
  /** Secret-looking query parameters, in order. */
  query: Array<{ name: string; value: string; start: number; end: number }>;
}

const URL_TEXT = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#\s]*)/i;

/**
 * Finds the credentials of a URL written as `text` (an argument, an env value): the userinfo
 * password and secret-looking query values. String offsets, so the text can be rewritten without
 * the URL parser's normalisation. Undefined when `text` is not a URL.
 */
export function urlCredentials(text: string): UrlCredentials | undefined {
  const head = URL_TEXT.exec(text);
  if (head === null) return undefined;
  const found: UrlCredentials = { query: [] };
  const authority = head[2]!;
  const at = authority.lastIndexOf('@');
  if (at !== -1) {
    const colon = authority.slice(0, at).indexOf(':');
    if (colon !== -1 && colon + 1 < at) {
      const start = head[1]!.length + colon + 1;
      found.password = { value: authority.slice(colon + 1, at), start, end: head[1]!.length + at };
    }
  }
  const question = text.indexOf('?', head[0].length);
  if (question !== -1) {
    const hash = text.indexOf('#', question);
    const queryEnd = hash === -1 ? text.length : hash;
    let offset = question + 1;
    for (const pair of text.slice(question + 1, queryEnd).split('&')) {
      const eq = pair.indexOf('=');
      if (eq > 0 && eq < pair.length - 1 && isSecretQueryName(pair.slice(0, eq))) {
        found.query.push({
          name: pair.slice(0, eq),
          value: pair.slice(eq + 1),
          start: offset + eq + 1,
          end: offset + pair.length,
        });
      }
      offset += pair.length + 1;
    }
  }
  return found;
}

/** `text` with its URL credentials (password, secret query values) replaced by `***`. */
export function maskUrlText(text: string): string {
  const found = urlCredentials(text);
  if (found === undefined) return text;
  const spans = [...(found.password ? [found.password] : []), ...found.query].sort(
    (a, b) => b.start - a.start,
  );
  let out = text;
  for (const span of spans) out = `${out.slice(0, span.start)}${REDACTED}${out.slice(span.end)}`;
  return out;
}

/**
 * Redacts one argv item: `--token=abc` → `--token=***`, `API_KEY=abc` → `API_KEY=***`, a URL's
 * password and secret query values (`postgresql://admin:***@db/prod`, `?key=***`).
 */
function redactArgument(argument: string, previous: string | undefined): string {
  if (URL_TEXT.test(argument)) return maskUrlText(argument);
  const eq = argument.indexOf('=');
  if (eq > 0 && isSecretName(argument.slice(0, eq)))
    return `${argument.slice(0, eq + 1)}${REDACTED}`;
  if (eq > 0 && URL_TEXT.test(argument.slice(eq + 1)))
    return `${argument.slice(0, eq + 1)}${maskUrlText(argument.slice(eq + 1))}`;
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
