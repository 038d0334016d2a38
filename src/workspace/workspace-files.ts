/** The pieces of the workspace's file layout: folders, names, parsers and small file helpers. */
import { existsSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { dirname, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AgentsError, AgentsErrorCode } from '../errors.js';
import type { stringify as stringifyType } from 'yaml';
import type { CONFIG_FILE_SCHEMAS, ConfigFileKind } from '../config/json-schema.js';
import type { parseYaml as parseYamlType } from '../config/load.js';
import type { WorkspaceKind } from './workspace-types.js';

let parsers:
  | Promise<{
      parseYaml: typeof parseYamlType;
      stringify: typeof stringifyType;
      CONFIG_FILE_SCHEMAS: typeof CONFIG_FILE_SCHEMAS;
      canonicalKeys: (kind: ConfigFileKind, value: unknown) => unknown;
    }>
  | undefined;

/**
 * The YAML parser and the zod schemas, loaded on first read or write: `agents --help` and other
 * commands that never read a config file start without them.
 */
export function configParsers() {
  parsers ??= Promise.all([
    import('../config/load.js'),
    import('yaml'),
    import('../config/json-schema.js'),
    import('../config/key-aliases.js'),
  ]).then(([load, yaml, schemas, aliases]) => ({
    parseYaml: load.parseYaml,
    stringify: yaml.stringify,
    CONFIG_FILE_SCHEMAS: schemas.CONFIG_FILE_SCHEMAS,
    /** A value with deprecated key spellings renamed: files are always written the new way. */
    canonicalKeys: (kind: ConfigFileKind, value: unknown): unknown => {
      const keyAliases = aliases.keyAliasesOf(schemas.CONFIG_FILE_SCHEMAS[kind]);
      return keyAliases === undefined ? value : aliases.renameAliasedKeys(value, keyAliases).value;
    },
  }));
  return parsers;
}

/**
 * What `put` writes to `.gitignore` in a workspace folder it creates: the files `agents` writes
 * while actors run, which are local state, not configuration to commit. A `.gitignore` that
 * exists is never touched.
 */
export const WORKSPACE_GITIGNORE = `# Written by \`agents\` while actors run: local state, not configuration.
# Commit the YAML files (servers/ tools/ skills/ actors/) and Agent Skill folders.
/checkpoints.sqlite*
/audit.jsonl
/sandboxes/
/output/
# Fingerprints of the tools you approved; delete this line to share them with your team.
/pins.json
/known-tools/
# Temp files of an interrupted write.
.*.tmp
`;

export const FOLDERS: Record<WorkspaceKind, string> = {
  server: 'servers',
  tool: 'tools',
  skill: 'skills',
  actor: 'actors',
};

/** The error code for a missing record of each kind (`SERVER_NOT_FOUND`, ...). */
export const NOT_FOUND_CODES: Readonly<Record<WorkspaceKind, AgentsErrorCode>> = {
  server: AgentsErrorCode.ServerNotFound,
  tool: AgentsErrorCode.ToolNotFound,
  skill: AgentsErrorCode.SkillNotFound,
  actor: AgentsErrorCode.ActorNotFound,
};

const NAME_PATTERN = /^[a-zA-Z0-9_.-]{1,64}$/;

/**
 * The `yaml-language-server` modeline that points editors at the kind's JSON Schema shipped in
 * `schemas/` (completion and checks while editing), as a path relative to the file; empty when
 * the schema file is not there (e.g. a bundled copy).
 */
export function schemaLine(kind: WorkspaceKind, file: string): string {
  const schema = fileURLToPath(new URL(`../../schemas/${kind}.schema.json`, import.meta.url));
  if (!existsSync(schema)) return '';
  const path = relative(dirname(file), schema).split(sep).join('/');
  return `# yaml-language-server: $schema=${path}\n`;
}

export function assertName(kind: WorkspaceKind, name: string): void {
  // Names become file names: no separators, no `..`.
  if (!NAME_PATTERN.test(name) || name.startsWith('.')) {
    throw new AgentsError(
      AgentsErrorCode.ConfigInvalid,
      `"${name}" is not a valid ${kind} name; use 1-64 letters, digits, "_", "-" or "." (not leading).`,
      { details: { kind, name, problems: [] } },
    );
  }
}

export async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}

export function firstLine(text: string): string {
  const lines = text.split('\n');
  return lines.length > 1 ? (lines[1] ?? lines[0] ?? text) : text;
}
