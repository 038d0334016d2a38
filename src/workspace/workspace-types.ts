/** The workspace's record kinds and the shapes the store reads, writes and lists. */
import type { z } from 'zod';
import type { AgentsError } from '../errors.js';
import type { CONFIG_FILE_SCHEMAS, ConfigFileKind } from '../config/json-schema.js';
import type { Actor } from '../config/actor-schema.js';
import type { NamedServerConfig, ServerConfig } from '../config/server-schema.js';
import type { Skill } from '../config/skill-schema.js';
import type { ToolResource } from '../config/tool-schema.js';

/** The kinds of records a workspace holds (one folder each). */
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
  /** Folder holding Agent Skill folders (`<name>/SKILL.md`); a bare name in a skill's `agentSkills` means a folder here. */
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
  /**
   * Finds a tool resource by its stable id (ADR-0027 "AEP tool contributions resolve to MCP")
   * or by its file name.
   */
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
