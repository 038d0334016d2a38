import { createHash } from 'node:crypto';
import { AgentsError, AgentsErrorCode } from '../errors.js';

/** The names LLM providers accept for tools. */
export const PROVIDER_SAFE_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const MAX_NAME_LENGTH = 64;
const HASH_LENGTH = 8;

// Latin look-alikes from Cyrillic and Greek; anything else non-ASCII is decomposed (NFKD),
// stripped of combining marks, and replaced by `_` if still not ASCII.
const CONFUSABLES: Record<string, string> = {
  а: 'a',
  е: 'e',
  о: 'o',
  р: 'p',
  с: 'c',
  у: 'y',
  х: 'x',
  і: 'i',
  ј: 'j',
  ѕ: 's',
  һ: 'h',
  ԁ: 'd',
  ԛ: 'q',
  ԝ: 'w',
  к: 'k',
  м: 'm',
  н: 'h',
  т: 't',
  в: 'b',
  А: 'A',
  В: 'B',
  Е: 'E',
  К: 'K',
  М: 'M',
  Н: 'H',
  О: 'O',
  Р: 'P',
  С: 'C',
  Т: 'T',
  Х: 'X',
  І: 'I',
  Ј: 'J',
  Ѕ: 'S',
  α: 'a',
  ο: 'o',
  ι: 'i',
  κ: 'k',
  ν: 'v',
  ρ: 'p',
  τ: 't',
  υ: 'u',
  χ: 'x',
  ε: 'e',
  Α: 'A',
  Β: 'B',
  Ε: 'E',
  Ζ: 'Z',
  Η: 'H',
  Ι: 'I',
  Κ: 'K',
  Μ: 'M',
  Ν: 'N',
  Ο: 'O',
  Ρ: 'P',
  Τ: 'T',
  Υ: 'Y',
  Χ: 'X',
};

function shortHash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, HASH_LENGTH);
}

function withHashSuffix(name: string, hashSource: string): string {
  const suffix = `_${shortHash(hashSource)}`;
  return `${name.slice(0, MAX_NAME_LENGTH - suffix.length)}${suffix}`;
}

/**
 * Maps any tool name to a provider-safe one (`^[a-zA-Z0-9_-]{1,64}$`). Characters outside the
 * set become `_`; confusable and other non-ASCII letters are mapped to ASCII and the name then
 * gets a hash suffix of the original, so `reаd_file` (Cyrillic а) can never pose as `read_file`.
 * Names past 64 characters are cut to 55 and get an 8-hex sha256 suffix of the whole original,
 * so two long names never shorten into each other. Deterministic.
 */
export function toProviderSafeName(name: string): string {
  // Most names are already safe: skip the per-character walk (it runs for every tool).
  if (PROVIDER_SAFE_NAME.test(name)) return name;
  let mapped = '';
  let hadNonAscii = false;
  for (const char of name) {
    if (/[a-zA-Z0-9_-]/.test(char)) {
      mapped += char;
      continue;
    }
    const code = char.codePointAt(0) ?? 0;
    if (code < 0x80) {
      mapped += '_';
      continue;
    }
    hadNonAscii = true;
    const confusable = CONFUSABLES[char];
    if (confusable !== undefined) {
      mapped += confusable;
      continue;
    }
    const decomposed = char.normalize('NFKD').replace(/[\u0300-\u036f]/g, '');
    mapped += /^[a-zA-Z0-9_-]+$/.test(decomposed) ? decomposed : '_';
  }
  if (mapped.length === 0) mapped = 'tool';
  if (hadNonAscii || mapped.length > MAX_NAME_LENGTH) return withHashSuffix(mapped, name);
  return mapped;
}

/** One tool whose model-facing name must be chosen. */
export interface ToolNameCandidate {
  /** Stable id (`mcp:SERVER/TOOL`, `builtin:NAME`, ...); unique. */
  id: string;
  /** The name at the source. */
  originalName: string;
  /** The MCP server (or other group) it comes from; tools without one are never prefixed. */
  serverName?: string;
  /** A name fixed by config override; used as is (it must already be provider-safe). */
  preferredName?: string;
}

/** Options for {@link resolveToolNames}. */
export interface ResolveToolNamesOptions {
  /** Prefix every tool that has a server with `server__` even without a collision. */
  alwaysPrefix?: boolean;
}

function prefixed(serverName: string, base: string, hashSource: string): string {
  const name = `${toProviderSafeName(serverName)}__${base}`;
  return name.length > MAX_NAME_LENGTH ? withHashSuffix(name, hashSource) : name;
}

function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const value = key(item);
    const group = groups.get(value);
    if (group === undefined) groups.set(value, [item]);
    else group.push(item);
  }
  return groups;
}

/**
 * Chooses a unique provider-safe name for every candidate and returns them by id.
 *
 * Rules: a config override name wins; otherwise the sanitized original name. When tools from
 * different servers (or a server and a built-in) share a name, the server tools become
 * `server__tool` (built-ins keep theirs, so nothing can shadow them); `alwaysPrefix` prefixes
 * every server tool. Remaining clashes (e.g. `a.b` and `a_b` on one server) keep the exact
 * match and give the others a deterministic hash suffix of their id. Never silently drops or
 * overwrites a tool.
 *
 * @throws AgentsError `TOOL_NAME_COLLISION` for duplicate ids or two overrides naming the same.
 */
export function resolveToolNames(
  candidates: readonly ToolNameCandidate[],
  options: ResolveToolNamesOptions = {},
): Map<string, string> {
  const names = new Map<string, string>();
  for (const candidate of candidates) {
    if (names.has(candidate.id)) {
      throw new AgentsError(
        AgentsErrorCode.ToolNameCollision,
        `Tool id "${candidate.id}" appears twice; each tool must be listed once.`,
        { details: { toolId: candidate.id } },
      );
    }
    const base = candidate.preferredName ?? toProviderSafeName(candidate.originalName);
    const name =
      options.alwaysPrefix &&
      candidate.serverName !== undefined &&
      candidate.preferredName === undefined
        ? prefixed(candidate.serverName, base, candidate.id)
        : base;
    names.set(candidate.id, name);
  }

  // Cross-owner clashes: qualify the server tools with their server name.
  for (const group of groupBy(candidates, (candidate) => names.get(candidate.id)!).values()) {
    if (group.length < 2) continue;
    const owners = new Set(group.map((candidate) => candidate.serverName ?? '\u0000'));
    if (owners.size < 2) continue;
    for (const candidate of group) {
      if (candidate.serverName === undefined || candidate.preferredName !== undefined) continue;
      const current = names.get(candidate.id)!;
      if (current.startsWith(`${toProviderSafeName(candidate.serverName)}__`)) continue;
      names.set(candidate.id, prefixed(candidate.serverName, current, candidate.id));
    }
  }

  // Whatever still clashes: one keeper, the rest get a hash suffix of their id.
  for (const [name, group] of groupBy(candidates, (candidate) => names.get(candidate.id)!)) {
    if (group.length < 2) continue;
    const overrides = group.filter((candidate) => candidate.preferredName !== undefined);
    if (overrides.length > 1) {
      throw new AgentsError(
        AgentsErrorCode.ToolNameCollision,
        `Tools ${overrides.map((candidate) => `"${candidate.id}"`).join(', ')} are all renamed to "${name}" by overrides; give each a different name.`,
        { details: { name, toolIds: overrides.map((candidate) => candidate.id) } },
      );
    }
    const exact = group.filter(
      (candidate) => candidate.originalName === name && candidate.serverName === undefined,
    );
    const keeper =
      overrides[0] ??
      (exact.length === 1 ? exact[0] : undefined) ??
      group.find(
        (candidate) =>
          candidate.originalName === name || name.endsWith(`__${candidate.originalName}`),
      );
    for (const candidate of group) {
      if (candidate === keeper) continue;
      names.set(candidate.id, withHashSuffix(name, candidate.id));
    }
  }

  const seen = new Map<string, string>();
  for (const [id, name] of names) {
    const other = seen.get(name);
    if (other !== undefined) {
      throw new AgentsError(
        AgentsErrorCode.ToolNameCollision,
        `Tools "${other}" and "${id}" both resolve to the name "${name}"; rename one with an override.`,
        { details: { name, toolIds: [other, id] } },
      );
    }
    seen.set(name, id);
  }
  return names;
}
