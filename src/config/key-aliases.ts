/**
 * Deprecated spellings of config keys.
 *
 * Every YAML key is camelCase, the same name as the matching TypeScript option (`createActor`,
 * `createSandbox`...), so a file and the code that does the same thing read alike. Two skill keys
 * were first written in snake_case (`mcp_servers`, `agent_skills`, as in ADR-029 "Model Context
 * Protocol (MCP) Adoption"); those
 * spellings stay accepted, with a deprecation warning naming the file, the line and the new key.
 * Writing both spellings of one key in the same map is an error: which one wins would be a guess.
 */

/** Old key → new key, for the top level of one kind of file. */
export type KeyAliases = Readonly<Record<string, string>>;

/** The deprecated keys of a skill file (`skills/NAME.yaml`). */
export const SKILL_KEY_ALIASES: KeyAliases = {
  mcp_servers: 'mcpServers',
  agent_skills: 'agentSkills',
};

const aliasesBySchema = new WeakMap<object, KeyAliases>();

/** Declares the deprecated top-level keys of a schema, for `parseYaml`'s warnings. */
export function registerKeyAliases(schema: object, aliases: KeyAliases): void {
  aliasesBySchema.set(schema, aliases);
}

/** The deprecated top-level keys declared for a schema, if any. */
export function keyAliasesOf(schema: object): KeyAliases | undefined {
  return aliasesBySchema.get(schema);
}

/** A key written in its old spelling, or in both spellings. */
export interface AliasedKey {
  oldKey: string;
  newKey: string;
}

/**
 * Renames the deprecated keys of a map (a copy; the input is not changed). `conflicts` lists keys
 * written in both spellings (left as they are, for the caller to report).
 */
export function renameAliasedKeys(
  value: unknown,
  aliases: KeyAliases,
): { value: unknown; renamed: AliasedKey[]; conflicts: AliasedKey[] } {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return { value, renamed: [], conflicts: [] };
  const record = value as Record<string, unknown>;
  const renamed: AliasedKey[] = [];
  const conflicts: AliasedKey[] = [];
  let copy: Record<string, unknown> | undefined;
  for (const [oldKey, newKey] of Object.entries(aliases)) {
    if (!Object.hasOwn(record, oldKey)) continue;
    if (Object.hasOwn(record, newKey)) {
      conflicts.push({ oldKey, newKey });
      continue;
    }
    copy ??= { ...record };
    // Keep the key's place in the map, so a file written back keeps its order.
    copy = Object.fromEntries(
      Object.entries(copy).map(([key, entry]) => [key === oldKey ? newKey : key, entry]),
    );
    renamed.push({ oldKey, newKey });
  }
  return { value: copy ?? value, renamed, conflicts };
}

/** The message for a key written in both spellings (`where`: a file, or "a skill config"). */
export function bothSpellingsMessage({ oldKey, newKey }: AliasedKey): string {
  return `both "${oldKey}" (the deprecated spelling) and "${newKey}" are set; keep only "${newKey}" (merge the two lists into it)`;
}

const warned = new Set<string>();

/**
 * Warns once per file and key (a CLI run reads a file several times) that an old spelling was
 * used. `warn` defaults to `process.emitWarning` as a `DeprecationWarning` (code
 * `AGENTS_DEPRECATED_KEY`), so Node prints it on stderr and `--no-deprecation` silences it.
 */
export function warnDeprecatedKey(
  file: string,
  line: number | undefined,
  { oldKey, newKey }: AliasedKey,
  warn?: (message: string) => void,
): void {
  const once = `${file}\0${oldKey}`;
  if (warned.has(once)) return;
  warned.add(once);
  const where = line === undefined ? file : `${file}:${line}`;
  const message = `${where}: "${oldKey}" is deprecated; rename it to "${newKey}" (same value). The old spelling still works for now.`;
  if (warn !== undefined) warn(message);
  else process.emitWarning(message, { type: 'DeprecationWarning', code: 'AGENTS_DEPRECATED_KEY' });
}
