/**
 * Keeping secrets out of imported server configs: `${...}` variables of other apps rewritten,
 * secret values (env, headers, arguments, URL parameters) replaced by `${VAR}` references.
 */
import { isSecretName, urlCredentials } from '../redact.js';

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

const REFERENCE_ONLY = /^\$\{[A-Za-z_][A-Za-z0-9_]*\}$/;

/** What the import found: the variables records refer to, notes, and the values they replace. */
export interface SecretSink {
  variables: Set<string>;
  notes: string[];
  /**
   * The secret values moved out, by variable: printed as `export` lines on a terminal, never
   * written to a file.
   */
  values: Map<string, string>;
}

/** `NAME`, or `NAME_2`... when NAME already holds a different value. */
function claim(sink: SecretSink, base: string, value: string): string {
  const name = base.toUpperCase().replace(/[^A-Z0-9_]+/g, '_');
  for (let n = 1; ; n++) {
    const variable = n === 1 ? name : `${name}_${n}`;
    const held = sink.values.get(variable);
    if (held === undefined && !sink.variables.has(variable)) {
      sink.variables.add(variable);
      sink.values.set(variable, value);
      return variable;
    }
    if (held === value) return variable;
  }
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
    if (!isSecretName(key) || text.includes('${')) {
      out[key] = secretUrl(text, variableFor(key), sink, `${field}.${key}`);
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

/**
 * Arguments: `--token=VALUE` and `--api-key VALUE` (a secret-looking flag) and URLs with
 * credentials (`postgresql://user:PASSWORD@host/db`, `?key=VALUE`) become `${VAR}` references.
 */
export function secretArguments(args: string[], prefix: string, sink: SecretSink): string[] {
  const flagVariable = (flag: string) => `${prefix}_${flag.replace(/^-+/, '')}`;
  return args.map((arg, index) => {
    const eq = arg.indexOf('=');
    const previous = args[index - 1];
    if (eq > 0 && arg.startsWith('-') && isSecretName(arg.slice(0, eq))) {
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
      /^--?[\w-]+$/.test(previous) &&
      isSecretName(previous) &&
      !arg.startsWith('-') &&
      !REFERENCE_ONLY.test(arg)
    ) {
      const variable = claim(sink, flagVariable(previous), arg);
      sink.notes.push(
        `argument after ${previous}: the secret value was not copied; it is read from \${${variable}}`,
      );
      return `\${${variable}}`;
    }
    if (eq > 0 && arg.startsWith('-'))
      return `${arg.slice(0, eq + 1)}${secretUrl(arg.slice(eq + 1), flagVariable(arg.slice(0, eq)), sink, `argument ${arg.slice(0, eq)}`)}`;
    return secretUrl(arg, prefix, sink, `args[${index}]`);
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
