/**
 * Keeping secrets out of imported server configs: `${...}` variables of other apps rewritten,
 * secret values (env, headers, arguments, URL parameters) replaced by `${VAR}` references.
 */
import { isSecretName } from '../redact.js';

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

export function secretValues(
  value: unknown,
  variableFor: (key: string) => string,
  variables: Set<string>,
  notes: string[],
  field: string,
  rewrite: (text: string) => string,
): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  const out: Record<string, string> = {};
  for (const [key, raw] of Object.entries(value as Record<string, unknown>)) {
    const text = rewrite(String(raw));
    if (!isSecretName(key) || text === '' || text.includes('${')) {
      out[key] = text;
      continue;
    }
    const variable = variableFor(key)
      .toUpperCase()
      .replace(/[^A-Z0-9_]+/g, '_');
    variables.add(variable);
    // Keep a scheme word such as "Bearer" so only the secret itself moves to the environment.
    const scheme = /^(Bearer|Basic|Token)\s+/i.exec(text)?.[0] ?? '';
    out[key] = `${scheme}\${${variable}}`;
    notes.push(`${field}.${key}: the secret value was not copied; it is read from \${${variable}}`);
  }
  return out;
}

export function secretArguments(
  args: string[],
  prefix: string,
  variables: Set<string>,
  notes: string[],
): string[] {
  return args.map((arg, index) => {
    const eq = arg.indexOf('=');
    const previous = args[index - 1];
    if (
      eq > 0 &&
      arg.startsWith('-') &&
      isSecretName(arg.slice(0, eq)) &&
      !REFERENCE_ONLY.test(arg.slice(eq + 1))
    ) {
      const variable = `${prefix}_${arg
        .slice(0, eq)
        .replace(/^-+/, '')
        .toUpperCase()
        .replace(/[^A-Z0-9]+/g, '_')}`;
      variables.add(variable);
      notes.push(
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
      const variable = `${prefix}_${previous
        .replace(/^-+/, '')
        .toUpperCase()
        .replace(/[^A-Z0-9]+/g, '_')}`;
      variables.add(variable);
      notes.push(
        `argument after ${previous}: the secret value was not copied; it is read from \${${variable}}`,
      );
      return `\${${variable}}`;
    }
    return arg;
  });
}

export function secretQuery(
  url: string,
  prefix: string,
  variables: Set<string>,
  notes: string[],
): string {
  const at = url.indexOf('?');
  if (at === -1) return url;
  const params = url
    .slice(at + 1)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      const key = eq === -1 ? pair : pair.slice(0, eq);
      const value = eq === -1 ? '' : pair.slice(eq + 1);
      if (!isSecretName(key) || value === '' || REFERENCE_ONLY.test(value)) return pair;
      const variable = `${prefix}_${key.toUpperCase().replace(/[^A-Z0-9]+/g, '_')}`;
      variables.add(variable);
      notes.push(
        `url parameter ${key}: the secret value was not copied; it is read from \${${variable}}`,
      );
      return `${key}=\${${variable}}`;
    });
  return `${url.slice(0, at)}?${params.join('&')}`;
}
