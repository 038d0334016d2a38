import { existsSync, statSync } from 'node:fs';
import { mkdir, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { z } from 'zod';
import { writeFileAtomic } from '../core/atomic-write.js';
import { AgentsError, AgentsErrorCode } from '../errors.js';
import type { stringify as stringifyType } from 'yaml';
import type { CONFIG_FILE_SCHEMAS, ConfigFileKind } from '../config/json-schema.js';
import type { parseYaml as parseYamlType } from '../config/load.js';
import type {
  Actor,
  NamedServerConfig,
  ServerConfig,
  Skill,
  ToolResource,
} from '../config/schemas.js';

/** The kinds of records a workspace holds (one folder each). */

let parsers:
  | Promise<{
      parseYaml: typeof parseYamlType;
      stringify: typeof stringifyType;
      CONFIG_FILE_SCHEMAS: typeof CONFIG_FILE_SCHEMAS;
    }>
  | undefined;

/**
 * The YAML parser and the zod schemas, loaded on first read or write: `agents --help` and other
 * commands that never read a config file start without them.
 */
function configParsers() {
  parsers ??= Promise.all([
    import('../config/load.js'),
    import('yaml'),
    import('../config/json-schema.js'),
  ]).then(([load, yaml, schemas]) => ({
    parseYaml: load.parseYaml,
    stringify: yaml.stringify,
    CONFIG_FILE_SCHEMAS: schemas.CONFIG_FILE_SCHEMAS,
  }));
  return parsers;
}

export type WorkspaceKind = ConfigFileKind;

/** The parsed value of each kind. Servers carry their resolved name. */
export interface WorkspaceValues {
  server: NamedServerConfig;
  tool: ToolResource;
  skill: Skill & { name: string };
  actor: Actor & { name: string };
}

/** The value accepted by `put` for each kind (the schema's input; defaults may be left out). */
export interface WorkspaceInputs {
  server: z.input<(typeof CONFIG_FILE_SCHEMAS)['server']>;
  tool: z.input<(typeof CONFIG_FILE_SCHEMAS)['tool']>;
  skill: z.input<(typeof CONFIG_FILE_SCHEMAS)['skill']>;
  actor: z.input<(typeof CONFIG_FILE_SCHEMAS)['actor']>;
}

/** One record read from the workspace. */
export interface WorkspaceRecord<K extends WorkspaceKind> {
  kind: K;
  /** The file's stem: `servers/git.yaml` → `git`. */
  name: string;
  file: string;
  value: WorkspaceValues[K];
}

/** A file that could not be read or validated; it is reported, never overwritten. */
export interface WorkspaceProblem {
  kind: WorkspaceKind;
  name: string;
  file: string;
  error: AgentsError;
}

/** The result of listing one kind: good records and broken files side by side. */
export interface WorkspaceListing<K extends WorkspaceKind> {
  records: WorkspaceRecord<K>[];
  problems: WorkspaceProblem[];
}

/** Options for {@link createWorkspaceStore}. */
export interface WorkspaceStoreOptions {
  /**
   * The folder relative paths inside files resolve against (sandbox source, checkpointer path,
   * agent skill folders, custom tool modules). Defaults to the workspace's parent folder.
   */
  projectDir?: string;
  /** Folder of Agent Skill folders (`<name>/SKILL.md`); default the workspace's `skills/`. */
  agentSkillsDir?: string;
}

/**
 * The `.agents/` folder: `servers/`, `tools/`, `skills/`, `actors/` YAML files plus Agent Skill
 * folders (`skills/<name>/SKILL.md`). Plain files a person can read, review and commit.
 */
export interface WorkspaceStore {
  /** Absolute workspace folder. */
  readonly root: string;
  /** Absolute folder that relative paths inside files resolve against. */
  readonly projectDir: string;
  /** Folder holding Agent Skill folders (`<name>/SKILL.md`); a bare name in a skill's `agent_skills` means a folder here. */
  readonly agentSkillsDir: string;
  /** The folder holding one kind's files. */
  dir(kind: WorkspaceKind): string;
  /** The file a record of this kind and name lives in. */
  file(kind: WorkspaceKind, name: string): string;
  /** Lists every record of a kind; broken files come back in `problems`, not thrown. */
  list<K extends WorkspaceKind>(kind: K): Promise<WorkspaceListing<K>>;
  /**
   * Reads one record. Throws the kind's not-found code (`SERVER_NOT_FOUND`, `TOOL_NOT_FOUND`,
   * `SKILL_NOT_FOUND`, `ACTOR_NOT_FOUND`) or `CONFIG_INVALID` naming file, line and column.
   */
  get<K extends WorkspaceKind>(kind: K, name: string): Promise<WorkspaceValues[K]>;
  /** True when a file for this record exists (valid or not). */
  has(kind: WorkspaceKind, name: string): Promise<boolean>;
  /**
   * Validates and writes one record atomically (temp file + rename). Refuses to replace an
   * existing file unless `overwrite`, and never replaces a broken file (fix or remove it
   * first). Returns the file path.
   */
  put<K extends WorkspaceKind>(
    kind: K,
    name: string,
    value: WorkspaceInputs[K],
    options?: { overwrite?: boolean },
  ): Promise<string>;
  /** Deletes one record's file; false when there was none. */
  remove(kind: WorkspaceKind, name: string): Promise<boolean>;
  /** Finds a tool resource by its stable id (ADR-0027) or by its file name. */
  findTool(idOrName: string): Promise<WorkspaceRecord<'tool'> | undefined>;
  /** Resolves a path from a file against {@link projectDir}. */
  resolvePath(path: string): string;
  /**
   * A server config as it is launched: see {@link resolveServerPaths}. Records read with `get`
   * and `list` (servers, and inline servers of skills) are already resolved; files keep what
   * the user wrote.
   */
  resolveServer<T extends ServerConfig>(config: T): T;
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

/** True for a `command`/`args` entry that names a file of the project: `./x` or `../x`. */
function isProjectRelative(entry: string): boolean {
  return entry.startsWith('./') || entry.startsWith('../');
}

/**
 * Resolves the parts of a stdio server config that name files of the project, so the YAML stays
 * portable and the server starts the same from any folder, the sandbox included:
 * - `command` and each `args` entry that starts with `./` or `../` are resolved against
 *   `projectDir` (the folder holding `.agents/`), e.g. `./node_modules/pkg/dist/index.js`;
 * - a relative `cwd` is resolved against `projectDir`.
 *
 * Everything else is passed as written: bare names (`node`, `npx`) are looked up on `PATH`, and
 * other relative arguments (`.`, `src`) stay relative to the server's working folder, which is
 * the sandbox root unless `cwd` is set. HTTP configs are returned unchanged.
 */
export function resolveServerPaths<T extends ServerConfig>(config: T, projectDir: string): T {
  if (config.transport !== 'stdio') return config;
  const resolveEntry = (entry: string) =>
    isProjectRelative(entry) ? resolve(projectDir, entry) : entry;
  return {
    ...config,
    command: resolveEntry(config.command),
    args: config.args.map(resolveEntry),
    ...(config.cwd === undefined ? {} : { cwd: resolve(projectDir, config.cwd) }),
  };
}

const FOLDERS: Record<WorkspaceKind, string> = {
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

/** The default workspace folder: `.agents` under `cwd`. */
export function defaultWorkspaceDir(cwd: string = process.cwd()): string {
  return join(cwd, '.agents');
}

/**
 * Finds the workspace for a command run in `cwd`, as git finds `.git`: the nearest `.agents`
 * folder in `cwd` or a folder above it. The search stops at the top of the git repository `cwd`
 * is in (the folder holding `.git`, included) and never climbs into the home folder itself from
 * below it (`~/.agents` is used by other tools for other things). Returns undefined when none is
 * found; callers then use {@link defaultWorkspaceDir}.
 */
export function locateWorkspace(
  cwd: string,
  home: string | undefined = process.env['HOME'],
): string | undefined {
  const start = resolve(cwd);
  const homeDir = home === undefined || home === '' ? undefined : resolve(home);
  for (let dir = start; ; dir = dirname(dir)) {
    if (dir === homeDir && dir !== start) return undefined;
    const candidate = join(dir, '.agents');
    if (isDirectorySync(candidate)) return candidate;
    if (existsSync(join(dir, '.git')) || dirname(dir) === dir) return undefined;
  }
}

function isDirectorySync(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/**
 * Opens a workspace folder. Nothing is read or created until a method is called; `put`
 * creates the kind's folder on demand, and when it creates the workspace folder itself, a
 * `.gitignore` for the files runs write there ({@link WORKSPACE_GITIGNORE}).
 */
export function createWorkspaceStore(
  root: string,
  options: WorkspaceStoreOptions = {},
): WorkspaceStore {
  const absoluteRoot = resolve(root);
  const projectDir = resolve(options.projectDir ?? dirname(absoluteRoot));

  const dir = (kind: WorkspaceKind): string => join(absoluteRoot, FOLDERS[kind]);
  const file = (kind: WorkspaceKind, name: string): string => {
    assertName(kind, name);
    return join(dir(kind), `${name}.yaml`);
  };

  async function read<K extends WorkspaceKind>(
    kind: K,
    name: string,
    path: string,
  ): Promise<WorkspaceValues[K]> {
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (error) {
      if (isErrno(error, 'ENOENT')) {
        throw new AgentsError(
          NOT_FOUND_CODES[kind],
          `No ${kind} named "${name}" in workspace ${absoluteRoot} (looked for ${path}); ` +
            `add it with \`agents ${kind} add\` or check the name.`,
          { cause: error, details: { kind, name, file: path } },
        );
      }
      throw new AgentsError(AgentsErrorCode.ConfigInvalid, `Cannot read ${path}.`, {
        cause: error,
        details: { file: path, problems: [] },
      });
    }
    const { parseYaml, CONFIG_FILE_SCHEMAS } = await configParsers();
    const parsed = parseYaml(text, CONFIG_FILE_SCHEMAS[kind], { file: path }) as Record<
      string,
      unknown
    >;
    const declared = parsed['name'];
    if (kind !== 'tool' && typeof declared === 'string' && declared !== name) {
      throw new AgentsError(
        AgentsErrorCode.ConfigInvalid,
        `${path}: name: "${declared}" does not match the file name "${name}"; rename the file or remove the field.`,
        {
          details: {
            file: path,
            problems: [{ path: 'name', message: 'does not match the file name' }],
          },
        },
      );
    }
    if (kind === 'tool') return parsed as WorkspaceValues[K];
    if (kind === 'server')
      return resolveServerPaths(
        { ...(parsed as ServerConfig), name },
        projectDir,
      ) as WorkspaceValues[K];
    if (kind === 'skill') {
      const skill = parsed as Skill;
      return {
        ...skill,
        name,
        mcp_servers: skill.mcp_servers.map((server) =>
          typeof server === 'string' ? server : resolveServerPaths(server, projectDir),
        ),
      } as WorkspaceValues[K];
    }
    return { ...parsed, name } as WorkspaceValues[K];
  }

  async function list<K extends WorkspaceKind>(kind: K): Promise<WorkspaceListing<K>> {
    let names: string[];
    try {
      names = await readdir(dir(kind));
    } catch (error) {
      if (isErrno(error, 'ENOENT')) return { records: [], problems: [] };
      throw error;
    }
    const records: WorkspaceRecord<K>[] = [];
    const problems: WorkspaceProblem[] = [];
    for (const entry of names.sort()) {
      if (!entry.endsWith('.yaml') && !entry.endsWith('.yml')) continue;
      if (entry.startsWith('.')) continue; // temp files of an interrupted write
      const name = entry.replace(/\.ya?ml$/, '');
      const path = join(dir(kind), entry);
      try {
        records.push({ kind, name, file: path, value: await read(kind, name, path) });
      } catch (error) {
        if (!AgentsError.isInstance(error)) throw error;
        problems.push({ kind, name, file: path, error });
      }
    }
    return { records, problems };
  }

  async function locate(kind: WorkspaceKind, name: string): Promise<string | undefined> {
    const primary = file(kind, name);
    if (await exists(primary)) return primary;
    const alternate = join(dir(kind), `${name}.yml`);
    return (await exists(alternate)) ? alternate : undefined;
  }

  /** Makes the workspace folder; when this call made it, adds {@link WORKSPACE_GITIGNORE}. */
  async function ensureRoot(): Promise<void> {
    const made = await mkdir(absoluteRoot, { recursive: true });
    if (made === undefined) return;
    await writeFile(join(absoluteRoot, '.gitignore'), WORKSPACE_GITIGNORE, { flag: 'wx' }).catch(
      (error: unknown) => {
        // Someone wrote one in between: theirs wins.
        if (!isErrno(error, 'EEXIST')) throw error;
      },
    );
  }

  return {
    root: absoluteRoot,
    projectDir,
    agentSkillsDir: options.agentSkillsDir
      ? resolve(projectDir, options.agentSkillsDir)
      : join(absoluteRoot, FOLDERS.skill),
    dir,
    file,
    list,
    async get(kind, name) {
      const path = (await locate(kind, name)) ?? file(kind, name);
      return read(kind, name, path);
    },
    async has(kind, name) {
      return (await locate(kind, name)) !== undefined;
    },
    async put(kind, name, value, options = {}) {
      const target = file(kind, name);
      // Validate before touching the disk: the same parser that reads it back.
      const { parseYaml, stringify, CONFIG_FILE_SCHEMAS } = await configParsers();
      const text = schemaLine(kind, target) + stringify(value, { lineWidth: 0 });
      parseYaml(text, CONFIG_FILE_SCHEMAS[kind], { file: target });
      const existing = await locate(kind, name);
      if (existing !== undefined) {
        try {
          await read(kind, name, existing);
        } catch (error) {
          if (!AgentsError.isInstance(error)) throw error;
          throw new AgentsError(
            AgentsErrorCode.ConfigInvalid,
            `Refusing to overwrite ${existing}: it is broken (${firstLine(error.message)}); ` +
              'fix or remove it by hand first, so nothing you wrote is lost.',
            {
              cause: error,
              details: { file: existing, problems: error.details['problems'] ?? [] },
            },
          );
        }
        if (!options.overwrite) {
          throw new AgentsError(
            AgentsErrorCode.ConfigInvalid,
            `${existing} already exists; remove it first or pass --force to replace it.`,
            { details: { file: existing, problems: [] } },
          );
        }
      }
      await ensureRoot();
      await writeFileAtomic(target, text);
      if (existing !== undefined && existing !== target) await rm(existing, { force: true });
      return target;
    },
    async remove(kind, name) {
      const path = await locate(kind, name);
      if (path === undefined) return false;
      await rm(path);
      return true;
    },
    async findTool(idOrName) {
      const { records } = await list('tool');
      return (
        records.find((record) => record.value.id === idOrName) ??
        records.find((record) => record.name === idOrName)
      );
    },
    resolvePath(path) {
      return isAbsolute(path) ? path : resolve(projectDir, path);
    },
    resolveServer(config) {
      return resolveServerPaths(config, projectDir);
    },
  };
}

/**
 * The `yaml-language-server` modeline that points editors at the kind's JSON Schema shipped in
 * `schemas/` (completion and checks while editing), as a path relative to the file; empty when
 * the schema file is not there (e.g. a bundled copy).
 */
function schemaLine(kind: WorkspaceKind, file: string): string {
  const schema = fileURLToPath(new URL(`../../schemas/${kind}.schema.json`, import.meta.url));
  if (!existsSync(schema)) return '';
  const path = relative(dirname(file), schema).split(sep).join('/');
  return `# yaml-language-server: $schema=${path}\n`;
}

function assertName(kind: WorkspaceKind, name: string): void {
  // Names become file names: no separators, no `..`.
  if (!NAME_PATTERN.test(name) || name.startsWith('.')) {
    throw new AgentsError(
      AgentsErrorCode.ConfigInvalid,
      `"${name}" is not a valid ${kind} name; use 1-64 letters, digits, "_", "-" or "." (not leading).`,
      { details: { kind, name, problems: [] } },
    );
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}

function isErrno(error: unknown, code: string): boolean {
  return typeof error === 'object' && error !== null && 'code' in error && error.code === code;
}

function firstLine(text: string): string {
  const lines = text.split('\n');
  return lines.length > 1 ? (lines[1] ?? lines[0] ?? text) : text;
}
