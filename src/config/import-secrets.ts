/**
 * Keeping secrets out of imported server configs: `${...}` variables of other apps rewritten,
 * secret values (env, headers, arguments, URL parameters) replaced by `${VAR}` references.
 */
import { urlCredentials } from '../redact.js';
import {
  claim,
  isCredentialName,
  isSecretFlag,
  isShell,
  REFERENCE_ONLY,
  scrubJson,
  scrubText,
  type SecretSink,
} from './import-credentials.js';

export type { SecretSink } from './import-credentials.js';

/** `${env:X}` → `${X}`, `${input:x-y}` → `${X_Y}`, `${workspaceFolder}` → `.` (the sandbox root). */
export function rewriteVariables(text: string, variables: Set<string>, notes: string[]): string {
  return text.replace(/\$\{([^}]+)\}/g, (match, inner: string) => {
    if (inner === 'workspaceFolder') {
      notes.push(
        '${workspaceFolder} became "." (stdio servers run in the sandbox copy of the project)',
      );
      return '.';
    }
    if (inner === 'userHome') {
      variables.add('HOME');
      return '${HOME}';
    }
    const [kind, rest] = inner.includes(':')
      ? [inner.slice(0, inner.indexOf(':')), inner.slice(inner.indexOf(':') + 1)]
      : ['', inner];
    if (
      kind === 'env' ||
      kind === 'input' ||
      (kind === '' && /^[A-Za-z_][A-Za-z0-9_]*$/.test(rest))
    ) {
      const variable = rest.toUpperCase().replace(/[^A-Z0-9_]+/g, '_');
      variables.add(variable);
      if (kind === 'input')
        notes.push(`\${input:${rest}} (a VS Code prompt) became \${${variable}}`);
      return `\${${variable}}`;
    }
    notes.push(`${match} is not understood here; it was kept as written`);
    return match;
  });
}

/**
 * The credentials of a URL in `text` (userinfo password, secret query values) replaced by
 * `${VAR}` references named after `base`; other text unchanged.
 */
export function secretUrl(text: string, base: string, sink: SecretSink, field: string): string {
  const found = urlCredentials(text);
  if (found === undefined) return text;
  const spans: Array<{ start: number; end: number; variable: string }> = [];
  if (found.password !== undefined && !REFERENCE_ONLY.test(found.password.value)) {
    const variable = claim(sink, `${base}_PASSWORD`, decodeURIComponentSafe(found.password.value));
    sink.notes.push(
      `${field}: the password in the URL was not copied; it is read from \${${variable}}`,
    );
    spans.push({ ...found.password, variable });
  }
  for (const parameter of found.query) {
    if (REFERENCE_ONLY.test(parameter.value)) continue;
    const variable = claim(
      sink,
      `${base}_${parameter.name}`,
      decodeURIComponentSafe(parameter.value),
    );
    sink.notes.push(
      `${field}: url parameter ${parameter.name} was not copied; it is read from \${${variable}}`,
    );
    spans.push({ ...parameter, variable });
  }
  let out = text;
  for (const span of spans.sort((a, b) => b.start - a.start))
    out = `${out.slice(0, span.start)}\${${span.variable}}${out.slice(span.end)}`;
  return out;
}

function decodeURIComponentSafe(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/**
 * `env` / `headers` maps: a literal value under a secret-looking key becomes `${VAR}` (a scheme
 * word such as "Bearer" kept); a URL with credentials in any value has them moved out.
 */
export function secretValues(
  value: unknown,
  variableFor: (key: string) => string,
  sink: SecretSink,
  field: string,
  rewrite: (text: string) => string,
): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  const out: Record<string, string> = {};
  for (const [key, raw] of Object.entries(value as Record<string, unknown>)) {
    const text = rewrite(String(raw));
    if (text === '' || REFERENCE_ONLY.test(text)) {
      out[key] = text;
      continue;
    }
    if (!isCredentialName(key) || text.includes('${')) {
      out[key] = scrubFreeText(text, variableFor(key), sink, `${field}.${key}`);
      continue;
    }
    // Keep a scheme word such as "Bearer" so only the secret itself moves to the environment.
    const scheme = /^(Bearer|Basic|Token)\s+/i.exec(text)?.[0] ?? '';
    const variable = claim(sink, variableFor(key), text.slice(scheme.length));
    out[key] = `${scheme}\${${variable}}`;
    sink.notes.push(
      `${field}.${key}: the secret value was not copied; it is read from \${${variable}}`,
    );
  }
  return out;
}

/** Package runners whose `-p` names a package or a version, not a password. */
const PACKAGE_RUNNER = /(?:^|\/)(?:npx|npm|pnpm|pnpx|yarn|bunx|uvx|pipx)$/;

/** A JSON value, a URL with credentials, or other free text: each with its own scrubber. */
function scrubFreeText(text: string, base: string, sink: SecretSink, field: string): string {
  const json = scrubJson(text, base, sink, field);
  if (json !== undefined) return json;
  if (urlCredentials(text) !== undefined) return secretUrl(text, base, sink, field);
  return scrubText(text, base, sink, field);
}

/**
 * Arguments: `--token=VALUE` and `--api-key VALUE`, `-p VALUE`, `--pw VALUE` (a credential
 * flag), `-H "Authorization: Bearer …"`, key-like `NAME=value` / `NAME: value`, token-shaped
 * values, JSON arguments, an `sh -c` string, and URLs with credentials
 * (`postgresql://user:PASSWORD@host/db`, `?key=VALUE`) become `${VAR}` references.
 */
export function secretArguments(
  args: string[],
  prefix: string,
  sink: SecretSink,
  command = '',
): string[] {
  const flagVariable = (flag: string) => `${prefix}_${flag.replace(/^-+/, '')}`;
  return args.map((arg, index) => {
    const eq = arg.indexOf('=');
    const previous = args[index - 1];
    if (eq > 0 && arg.startsWith('-') && isSecretFlag(arg.slice(0, eq))) {
      const value = arg.slice(eq + 1);
      if (value === '' || REFERENCE_ONLY.test(value)) return arg;
      const variable = claim(sink, flagVariable(arg.slice(0, eq)), value);
      sink.notes.push(
        `argument ${arg.slice(0, eq)}: the secret value was not copied; it is read from \${${variable}}`,
      );
      return `${arg.slice(0, eq + 1)}\${${variable}}`;
    }
    if (
      previous !== undefined &&
      isSecretFlag(previous) &&
      !arg.startsWith('-') &&
      !REFERENCE_ONLY.test(arg) &&
      // `-p 8080` is a port, `npx -p PKG` a package; `-u name` a user name unless it carries
      // `name:password`.
      !(/^-p$/i.test(previous) && (/^\d+$/.test(arg) || PACKAGE_RUNNER.test(command))) &&
      !(previous === '-u' && !arg.includes(':'))
    ) {
      const variable = claim(sink, flagVariable(previous), arg);
      sink.notes.push(
        `argument after ${previous}: the secret value was not copied; it is read from \${${variable}}` +
          (/^-p$/i.test(previous) ? ' (taken for a password; if it is not one, put it back)' : ''),
      );
      return `\${${variable}}`;
    }
    if (previous === '-c' && isShell(command))
      return scrubText(arg, prefix, sink, `args[${index}] (shell command)`);
    const json =
      eq > 0 && arg.startsWith('-')
        ? scrubJson(
            arg.slice(eq + 1),
            flagVariable(arg.slice(0, eq)),
            sink,
            `argument ${arg.slice(0, eq)}`,
          )
        : undefined;
    if (json !== undefined) return `${arg.slice(0, eq + 1)}${json}`;
    if (eq > 0 && arg.startsWith('-') && urlCredentials(arg.slice(eq + 1)) !== undefined)
      return `${arg.slice(0, eq + 1)}${secretUrl(arg.slice(eq + 1), flagVariable(arg.slice(0, eq)), sink, `argument ${arg.slice(0, eq)}`)}`;
    return scrubFreeText(arg, prefix, sink, `args[${index}]`);
  });
}

/** A server `url`: its credentials (password, secret query values) become `${VAR}` references. */
export function secretQuery(url: string, prefix: string, sink: SecretSink): string {
  return secretUrl(url, prefix, sink, 'url');
}

/** A value quoted for a POSIX shell (`export NAME='value'`). */
export function shellQuote(value: string): string {
  return /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}
