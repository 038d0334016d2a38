/**
 * Credentials in free text of an imported server config: an argument that is a header
 * (`Authorization: Bearer …`, `X-Api-Key: …`), a flag followed by its value (`-p`, `--pw`),
 * a JSON argument, an `sh -c` string, a value shaped like a known token (`sk-…`, `ghp_…`).
 * Each found value moves to a `${VAR}` reference, with a note; where the shape is a guess
 * (`-p` is a port for some programs) the note says so, and the value moves anyway: copying a
 * credential into `.agents/` is the worse mistake.
 */
import { isSecretName } from '../redact.js';

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

/** A value that is already a reference and nothing else. */
export const REFERENCE_ONLY = /^\$\{[A-Za-z_][A-Za-z0-9_]*\}$/;

/** `NAME`, or `NAME_2`... when NAME already holds a different value. */
export function claim(sink: SecretSink, base: string, value: string): string {
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

/** A key-like name: `OPENAI_KEY`, `KEY`, `x-api-keys` (a whole word `key`), or {@link isSecretName}. */
export function isCredentialName(name: string): boolean {
  return isSecretName(name) || /(?:^|[^a-z])keys?(?:$|[^a-z])/i.test(name);
}

/**
 * Flags whose next argument is a credential, beyond secret-looking names: `-p` and `--pw`
 * (mysql, redis-cli, many CLIs), `--pass`, `--key`. A number after `-p` is taken for a port.
 */
const SHORT_SECRET_FLAGS = /^(?:-p|-P|--pw|--pass|--passphrase|--key|--bearer|-u)$/;

/** True when `flag` (with its dashes) takes a credential as its value. */
export function isSecretFlag(flag: string): boolean {
  return SHORT_SECRET_FLAGS.test(flag) || (/^--?[\w-]+$/.test(flag) && isCredentialName(flag));
}

/** Known token shapes, wherever they appear (value-based: the name around them may say nothing). */
const TOKEN_SHAPES = new RegExp(
  [
    'sk-(?:proj-|ant-[a-z0-9]+-)?[A-Za-z0-9_-]{16,}', // OpenAI, Anthropic
    'gh[pousr]_[A-Za-z0-9]{20,}', // GitHub
    'github_pat_[A-Za-z0-9_]{20,}',
    'glpat-[A-Za-z0-9_-]{16,}', // GitLab
    'xox[abprs]-[A-Za-z0-9-]{10,}', // Slack
    'AKIA[0-9A-Z]{16}', // AWS access key id
    'AIza[0-9A-Za-z_-]{30,}', // Google
    '(?:sk|rk|pk)_live_[A-Za-z0-9]{16,}', // Stripe
    'npm_[A-Za-z0-9]{30,}',
    'hf_[A-Za-z0-9]{30,}', // Hugging Face
    'eyJ[A-Za-z0-9_-]{8,}\\.[A-Za-z0-9_-]{8,}\\.[A-Za-z0-9_-]{8,}', // JWT
  ]
    .map((shape) => `(?<![A-Za-z0-9_-])${shape}`)
    .join('|'),
  'g',
);

/** A shell value: quoted, or a run of non-space characters. */
const VALUE = String.raw`("[^"]*"|'[^']*'|[^\s'"]+)`;

/** Patterns of free text, each with the group that holds the credential and how to name it. */
const TEXT_RULES: Array<{
  pattern: RegExp;
  name: (match: RegExpExecArray) => string;
  why: string;
}> = [
  {
    // Authorization: Bearer X / Proxy-Authorization: Basic X / Authorization=X
    pattern: new RegExp(
      String.raw`((?:proxy-)?authorization\s*[:=]\s*(?:(?:bearer|basic|token|digest)\s+)?)${VALUE}`,
      'gi',
    ),
    name: () => 'AUTHORIZATION',
    why: 'an Authorization value',
  },
  {
    // Bearer X anywhere else (a header written without its name, a curl -H value).
    pattern: new RegExp(String.raw`(\b(?:bearer|basic)\s+)([A-Za-z0-9._~+/=-]{8,})`, 'gi'),
    name: () => 'BEARER',
    why: 'a Bearer/Basic credential',
  },
  {
    // NAME: value (a header) or NAME=value (a shell assignment) with a key-like NAME.
    pattern: new RegExp(String.raw`((?<![\w-])([A-Za-z_][\w-]*)\s*(?::\s*|=))${VALUE}`, 'g'),
    name: (match) => (isCredentialName(match[2]!) ? match[2]! : ''),
    why: 'the value of a key-like name',
  },
  {
    // --flag value or --flag=value inside a shell string (a value never starts with a dash).
    pattern: new RegExp(String.raw`((?<![\w-])(--?[A-Za-z][\w-]*)(?:\s+|=))(?!-)${VALUE}`, 'g'),
    name: (match) => (isSecretFlag(match[2]!) ? match[2]!.replace(/^-+/, '') : ''),
    why: 'the value after a credential flag',
  },
];

function unquote(value: string): { quote: string; inner: string } {
  const quote =
    value.length >= 2 && /^["']/.test(value) && value.endsWith(value[0]!) ? value[0]! : '';
  return { quote, inner: quote === '' ? value : value.slice(1, -1) };
}

/**
 * Credentials in free text (an argument, a shell string, a header line) replaced by `${VAR}`
 * references named `PREFIX_NAME`; other text unchanged. `field` names where, for the notes.
 */
export function scrubText(text: string, prefix: string, sink: SecretSink, field: string): string {
  let out = text;
  for (const rule of TEXT_RULES) {
    out = out.replace(rule.pattern, (...groups: unknown[]) => {
      const match = groups.slice(0, -2) as string[] & RegExpExecArray;
      const whole = match[0]!;
      const lead = match[1]!;
      const raw = match[match.length - 1]!;
      const base = rule.name(match as RegExpExecArray);
      if (base === '') return whole;
      const { quote, inner } = unquote(raw);
      if (inner === '' || inner.includes('${') || /^(?:bearer|basic|token|digest)$/i.test(inner))
        return whole;
      // `-p 8080` is a port; `-u name` alone is a user name unless it carries `user:password`.
      if ((base === 'p' || base === 'P') && /^\d+$/.test(inner)) return whole;
      if (base === 'u' && !inner.includes(':')) return whole;
      const variable = claim(sink, `${prefix}_${base}`, inner);
      sink.notes.push(
        `${field}: ${rule.why} was not copied; it is read from \${${variable}}` +
          (base === 'p' || base === 'P'
            ? ' (taken for a password; if it is not one, put it back)'
            : ''),
      );
      return `${lead}${quote}\${${variable}}${quote}`;
    });
  }
  return out.replace(TOKEN_SHAPES, (token) => {
    const variable = claim(sink, `${prefix}_TOKEN`, token);
    sink.notes.push(
      `${field}: a value shaped like an API token was not copied; it is read from \${${variable}}`,
    );
    return `\${${variable}}`;
  });
}

/**
 * A JSON argument (`{"apiKey": "…"}`): string values under key-like names, and token-shaped or
 * Authorization strings anywhere, become `${VAR}`. Undefined when `text` is not a JSON object or
 * array (it is then free text).
 */
export function scrubJson(
  text: string,
  prefix: string,
  sink: SecretSink,
  field: string,
): string | undefined {
  if (!/^\s*[[{]/.test(text)) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  const before = sink.values.size + sink.variables.size;
  const walk = (node: unknown, key: string): unknown => {
    if (typeof node === 'string') {
      if (node !== '' && !REFERENCE_ONLY.test(node) && key !== '' && isCredentialName(key)) {
        const variable = claim(sink, `${prefix}_${key}`, node);
        sink.notes.push(
          `${field}: JSON value "${key}" was not copied; it is read from \${${variable}}`,
        );
        return `\${${variable}}`;
      }
      return scrubText(node, prefix, sink, `${field} (JSON "${key}")`);
    }
    if (Array.isArray(node)) return node.map((item) => walk(item, key));
    if (typeof node === 'object' && node !== null)
      return Object.fromEntries(
        Object.entries(node).map(([name, item]) => [name, walk(item, name)]),
      );
    return node;
  };
  const scrubbed = walk(value, '');
  return sink.values.size + sink.variables.size === before ? text : JSON.stringify(scrubbed);
}

/** Shells whose `-c` argument is a command line (scrubbed as free text). */
export function isShell(command: string): boolean {
  return /(?:^|\/)(?:sh|bash|zsh|dash|ksh|fish|ash)$/.test(command);
}
