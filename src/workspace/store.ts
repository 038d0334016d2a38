/** The workspace store: reading, listing, writing and removing the `.agents/` YAML records. */
import { mkdir, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { writeFileAtomic } from '../core/atomic-write.js';
import { AgentsError, AgentsErrorCode, isErrno } from '../errors.js';
import type { ServerConfig } from '../config/server-schema.js';
import type { Skill } from '../config/skill-schema.js';
import { resolveServerPaths } from './server-paths.js';
import {
  FOLDERS,
  NOT_FOUND_CODES,
  WORKSPACE_GITIGNORE,
  assertName,
  configParsers,
  exists,
  firstLine,
  schemaLine,
} from './workspace-files.js';
import type {
  WorkspaceKind,
  WorkspaceListing,
  WorkspaceProblem,
  WorkspaceRecord,
  WorkspaceStore,
  WorkspaceStoreOptions,
  WorkspaceValues,
} from './workspace-types.js';

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
        mcpServers: skill.mcpServers.map((server) =>
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
      // An actor's scripted-model turns (`NAME.script.yaml`, the documented default) sit beside it.
      if (kind === 'actor' && /\.script\.ya?ml$/.test(entry)) continue;
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
      const { parseYaml, stringify, CONFIG_FILE_SCHEMAS, canonicalKeys } = await configParsers();
      const text =
        schemaLine(kind, target) + stringify(canonicalKeys(kind, value), { lineWidth: 0 });
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
