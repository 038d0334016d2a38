/**
 * An actor's skills resolved from the workspace files (the servers to start, what each skill
 * includes) before anything runs; `skill-registry.ts` flattens a plan into tools.
 */
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { AgentsError, AgentsErrorCode } from '../errors.js';
import type { NamedServerConfig } from '../config/server-schema.js';
import type { Skill } from '../config/skill-schema.js';
import type { ToolResource } from '../config/tool-schema.js';
import type { WorkspaceStore } from '../workspace/workspace-types.js';
import { isBuiltinToolName } from './builtin-tools.js';
import { isCustomToolReference } from './custom-tools.js';

/** A skill as the registry uses it: the file's content with its name. */
export type NamedSkill = Skill & { name: string };

/** One thing a skill includes, resolved from files (no server contacted yet). */
export type SkillInclusion =
  | { kind: 'builtin'; skill: string; name: string }
  | { kind: 'custom'; skill: string; entry: string }
  | { kind: 'server'; skill: string; serverName: string }
  | { kind: 'resource'; skill: string; resource: ToolResource }
  | { kind: 'agent-skills'; skill: string; folders: string[] };

/**
 * What an actor's skills need, resolved from the workspace files: the servers to start and
 * what each skill includes. Made by {@link planSkills}; no process is started.
 */
export interface SkillPlan {
  skills: NamedSkill[];
  /** Every server the skills need (by reference, inline, or through tool resources), once each. */
  servers: NamedServerConfig[];
  inclusions: SkillInclusion[];
}

/**
 * Resolves skills by name from the workspace into a {@link SkillPlan}. Throws, each with its
 * own code and a message naming the skill and what to do (ADR-0027 "AEP tool contributions
 * resolve to MCP": missing resources and disabled mappings fail explicitly):
 * - `SKILL_NOT_FOUND`: no `skills/NAME.yaml`;
 * - `TOOL_NOT_FOUND` (missing resource): a `tools` entry is neither a built-in, a `custom:`
 *   module nor a tool resource id in `tools/`;
 * - `TOOL_DISABLED` (disabled mapping): the tool resource has `enabled: false`;
 * - `SERVER_NOT_FOUND`: a server reference (from `mcpServers` or a tool resource) has no
 *   `servers/NAME.yaml`;
 * - `CONFIG_INVALID`: a file is broken (file, line, column).
 */
export async function planSkills(
  store: WorkspaceStore,
  skillNames: readonly string[],
): Promise<SkillPlan> {
  const skills: NamedSkill[] = [];
  for (const skillName of skillNames) skills.push(await store.get('skill', skillName));
  return planSkillConfigs(store, skills);
}

/**
 * Like {@link planSkills}, for skills given as values (e.g. one not stored yet, to validate it
 * before `agents skill add` writes it). Same errors.
 */
export async function planSkillConfigs(
  store: WorkspaceStore,
  skills: readonly NamedSkill[],
): Promise<SkillPlan> {
  const servers = new Map<string, NamedServerConfig>();
  const inclusions: SkillInclusion[] = [];
  const needServer = async (serverName: string, why: string): Promise<void> => {
    if (servers.has(serverName)) return;
    try {
      servers.set(serverName, await store.get('server', serverName));
    } catch (error) {
      if (AgentsError.hasCode(error, AgentsErrorCode.ServerNotFound)) {
        throw new AgentsError(
          AgentsErrorCode.ServerNotFound,
          `${why} names server "${serverName}", which has no record (${store.file('server', serverName)}); add it with \`agents server add ${serverName} ...\`.`,
          { cause: error, details: { serverName } },
        );
      }
      throw error;
    }
  };
  for (const skill of skills) {
    for (const entry of skill.tools) {
      if (isBuiltinToolName(entry)) {
        inclusions.push({ kind: 'builtin', skill: skill.name, name: entry });
      } else if (isCustomToolReference(entry)) {
        inclusions.push({ kind: 'custom', skill: skill.name, entry });
      } else {
        const record = await store.findTool(entry);
        if (!record) {
          throw new AgentsError(
            AgentsErrorCode.ToolNotFound,
            `Skill "${skill.name}" lists tool "${entry}", which is not a built-in tool, not a custom:... module, and not a tool resource id in ${store.dir('tool')}; add it with \`agents tool add\` or fix the skill.`,
            { details: { skill: skill.name, toolId: entry } },
          );
        }
        if (!record.value.enabled) {
          throw new AgentsError(
            AgentsErrorCode.ToolDisabled,
            `Skill "${skill.name}" uses tool resource "${record.value.id}" (${record.file}), which is disabled; enable it with \`agents tool enable ${record.name}\` or remove it from the skill.`,
            { details: { skill: skill.name, toolId: record.value.id, file: record.file } },
          );
        }
        await needServer(
          record.value.server,
          `Tool resource "${record.value.id}" (${record.file})`,
        );
        inclusions.push({ kind: 'resource', skill: skill.name, resource: record.value });
      }
    }
    for (const reference of skill.mcpServers) {
      if (typeof reference === 'string') {
        await needServer(reference, `Skill "${skill.name}"`);
        inclusions.push({ kind: 'server', skill: skill.name, serverName: reference });
      } else {
        const existing = servers.get(reference.name);
        if (existing && JSON.stringify(existing) !== JSON.stringify(reference)) {
          throw new AgentsError(
            AgentsErrorCode.ConfigInvalid,
            `Skill "${skill.name}" defines an inline server "${reference.name}" that differs from another server of that name; rename one.`,
            { details: { skill: skill.name, serverName: reference.name, problems: [] } },
          );
        }
        servers.set(reference.name, reference as NamedServerConfig);
        inclusions.push({ kind: 'server', skill: skill.name, serverName: reference.name });
      }
    }
    if (skill.agentSkills.length > 0) {
      const folders = skill.agentSkills.map((folder) => resolveAgentSkillFolder(store, folder));
      await assertAgentSkillFoldersExist(store, skill.name, skill.agentSkills, folders);
      inclusions.push({ kind: 'agent-skills', skill: skill.name, folders });
    }
  }
  return { skills: [...skills], servers: [...servers.values()], inclusions };
}

/**
 * A named Agent Skill that is not there is a broken skill, like a missing tool resource: the
 * run must not start without the instructions the skill promised. Throws `SKILL_NOT_FOUND`.
 */
async function assertAgentSkillFoldersExist(
  store: WorkspaceStore,
  skillName: string,
  names: readonly string[],
  folders: readonly string[],
): Promise<void> {
  for (const [index, folder] of folders.entries()) {
    const found = await stat(folder).then(
      (stats) => stats.isDirectory(),
      () => false,
    );
    if (found) continue;
    const name = names[index] ?? folder;
    const bare = /^[a-zA-Z0-9_-]+$/.test(name);
    throw new AgentsError(
      AgentsErrorCode.SkillNotFound,
      `Skill "${skillName}" lists Agent Skill "${name}" in agentSkills, but the folder ${folder} does not exist; ` +
        (bare
          ? `create it with a SKILL.md (bare names are folders in ${store.agentSkillsDir}) or remove it from the skill.`
          : 'fix the path (relative to the project) or remove it from the skill.'),
      { details: { skill: skillName, agentSkill: name, folder } },
    );
  }
}

/** A bare name means a folder in the workspace's Agent Skills folder; anything else is a path. */
function resolveAgentSkillFolder(store: WorkspaceStore, folder: string): string {
  return /^[a-zA-Z0-9_-]+$/.test(folder)
    ? join(store.agentSkillsDir, folder)
    : store.resolvePath(folder);
}
