/**
 * What a cassette must not hold: secrets and machine paths. Secrets are found with the rules the
 * audit and the server lifecycle use (src/redact.ts: secret-looking names, URL passwords and
 * secret query values); machine paths are replaced by the logical names the recorder was given.
 * A replay applies the same function to what the live run sends before comparing, so a redacted
 * value still matches.
 */
import { homedir } from 'node:os';
import { isSecretName, maskUrlText } from '../redact.js';

const REDACTED = '***';

/** A machine path prefix and the logical name written instead (`/tmp/sbx-1a2b` → `.`). */
export interface PathAlias {
  path: string;
  as: string;
}

/** Options of {@link createCassetteRedactor}. */
export interface CassetteRedactOptions {
  /**
   * Machine paths to write as logical ones, longest first wins. The home folder is always
   * written as `~`. A function is asked again on every use (a replay learns its sandbox's
   * path only once the actor has made it).
   */
  pathAliases?: readonly PathAlias[] | (() => readonly PathAlias[]);
}

/** Returns `value` as a cassette may hold it: a deep copy, secrets masked, machine paths mapped. */
export type CassetteRedactor = (value: unknown) => unknown;

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Builds the redactor of one recording (or one replay, which must use the same options). */
export function createCassetteRedactor(options: CassetteRedactOptions = {}): CassetteRedactor {
  const source = options.pathAliases;
  if (typeof source !== 'function') return redactorFor(source ?? []);
  let built: { count: number; redact: CassetteRedactor } | undefined;
  return (value) => {
    const aliases = source();
    if (built?.count !== aliases.length)
      built = { count: aliases.length, redact: redactorFor(aliases) };
    return built.redact(value);
  };
}

function redactorFor(pathAliases: readonly PathAlias[]): CassetteRedactor {
  const home = homedir();
  const aliases = [...pathAliases, ...(home.length > 1 ? [{ path: home, as: '~' }] : [])]
    .filter((alias) => alias.path.length > 1)
    .sort((a, b) => b.path.length - a.path.length);
  // One pass over all prefixes, each only where a path component ends (so /tmp/a spares /tmp/ab).
  const pattern =
    aliases.length === 0
      ? undefined
      : new RegExp(
          `(?:${aliases.map((alias) => escapeRegExp(alias.path)).join('|')})(?=$|[/\\\\\\s"'\`:;,)\\]}])`,
          'g',
        );
  const byPath = new Map(aliases.map((alias) => [alias.path, alias.as]));
  const mapString = (text: string): string => {
    const masked = maskUrlText(text);
    return pattern === undefined
      ? masked
      : masked.replace(pattern, (hit) => byPath.get(hit) ?? hit);
  };
  const walk = (value: unknown, key: string | undefined): unknown => {
    if (typeof value === 'string') {
      return key !== undefined && isSecretName(key) ? REDACTED : mapString(value);
    }
    // A number under a secret name (a PIN) is masked too; objects under one are walked, since a
    // schema's `properties.token` is a definition, not a secret.
    if (typeof value === 'number' && key !== undefined && isSecretName(key)) return REDACTED;
    if (Array.isArray(value)) return value.map((item) => walk(item, undefined));
    if (typeof value === 'object' && value !== null) {
      const out: Record<string, unknown> = {};
      for (const [name, item] of Object.entries(value)) {
        if (item !== undefined) out[name] = walk(item, name);
      }
      return out;
    }
    return value;
  };
  return (value) => walk(value, undefined);
}
