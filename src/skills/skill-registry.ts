import { AgentsError, AgentsErrorCode, errorMessage } from '../errors.js';
import type { NamedServerConfig } from '../config/server-schema.js';
import type { ToolOverride, ToolResource } from '../config/tool-schema.js';
import { resolveToolNames } from '../mcp/naming.js';
import { createToolRegistry } from '../registry/tool-registry.js';
import type { ToolRegistry } from '../registry/tool-registry.js';
import type { ToolsChangedEvent } from '../servers/server-events.js';
import type { PathMap } from '../sandbox/types.js';
import { createAgentSkillTool, createSkillActivation } from './skill-activation.js';
import { loadAgentSkills } from './agent-skills.js';
import type { AgentSkill, AgentSkillWarning } from './agent-skills.js';
import type { SkillActivation } from './skill-activation.js';
import { createBuiltinTools } from './builtin-tools.js';
import { loadCustomTools } from './custom-tools.js';
import type { SkillInclusion, SkillPlan } from './skill-plan.js';
import type {
  Capabilities,
  CapabilityVerdict,
  ToolDescriptor,
  ToolEntry,
} from '../core/tool-descriptor.js';

/** A running server as the skill registry needs it (a `ManagedServer` fits). */
export interface SkillServer {
  readonly name: string;
  /** The server's current tool entries (swapped atomically on refresh). */
  entries(): readonly ToolEntry[];
  /** Subscribes to tool-set changes; returns an unsubscribe function. */
  on?(event: 'tools-changed', listener: (event: ToolsChangedEvent) => void): () => void;
}

/** Options for {@link createSkillRegistry}. */
export interface SkillRegistryOptions {
  plan: SkillPlan;
  /** Running servers by name; every server of the plan must be present. */
  servers: ReadonlyMap<string, SkillServer>;
  /** Path map for the built-in file tools (the sandbox's, or one over the project). */
  paths?: () => PathMap;
  /** Folder `custom:` module paths resolve against. */
  projectDir: string;
  /** Where the activation tool records the active Agent Skill (default: a new one). */
  activation?: SkillActivation;
  /** Prefix every MCP tool name with its server name. */
  alwaysPrefix?: boolean;
  /** Agent Skill warnings and tools that disappeared on a refresh. */
  onWarning?: (message: string) => void;
  /**
   * The tool registry the skills' tools go into, as one group (default: a new registry). Pass
   * one to keep other groups (another source's tools) beside them under one change event.
   */
  registry?: ToolRegistry;
  /** The group key in {@link registry} (default {@link SKILL_TOOLS_GROUP}). */
  group?: string;
}

/**
 * A registry of one running server's tools, included under a skill of its own as `inclusion`
 * says (`agents tool call` and `tool show`: the tools a skill would see, without an actor).
 */
export function createServerSkillRegistry(
  config: NamedServerConfig,
  server: SkillServer,
  inclusion: SkillInclusion,
  projectDir: string,
): Promise<SkillRegistry> {
  const skill = { description: '', tools: [], mcpServers: [], agentSkills: [], overrides: {} };
  return createSkillRegistry({
    plan: {
      skills: [{ ...skill, name: inclusion.skill }],
      servers: [config],
      inclusions: [inclusion],
    },
    servers: new Map([[config.name, server]]),
    projectDir,
  });
}

/** The registry group an actor's flattened skill tools are kept in, unless told otherwise. */
export const SKILL_TOOLS_GROUP = 'skills';

/**
 * The flattened tools of an actor's skills, kept current as servers change. It IS the tool
 * registry the actor, `agents serve` and the CLI read (get by id, by name, one `change`
 * event), plus what only skills have: the loaded Agent Skills and the activation record.
 */
export interface SkillRegistry extends ToolRegistry, AsyncDisposable {
  /** The loaded Agent Skills. */
  readonly agentSkills: readonly AgentSkill[];
  readonly activation: SkillActivation;
  /**
   * Re-flattens from the servers' current entries. Called on every `tools-changed`; a resource
   * whose tool disappeared is dropped with a warning (not thrown) at that point.
   */
  refresh(): void;
  /** Unsubscribes from the servers. Idempotent; does not stop them (the lease owner does). */
  close(): Promise<void>;
}

/**
 * Flattens every source of a {@link SkillPlan} into one group of the tool registry: built-in
 * tools, custom tools, MCP servers' tools, tool resources and one `activate_skill` tool for the
 * Agent Skills. Skill overrides apply at inclusion (name, description, capabilities with
 * `override` provenance, path arguments, `enabled: false` hides). The same tool included twice
 * is kept once; different tools with the same name are renamed by the collision rule
 * (`resolveToolNames`: server tools become `server__tool`), and two overrides naming the same
 * name throw `TOOL_NAME_COLLISION`.
 *
 * A tool resource resolves to its server tool's descriptor under the resource's id (ADR-0027
 * "AEP tool contributions resolve to MCP": agents keep canonical tool resource ids), so policy
 * rules, pins, known tools and the audit
 * log name `repo.status`, not `mcp:git/git_status`, and keep working when the server record is
 * renamed and the resource's `server` field follows. A server included whole as well does not
 * bring that tool a second time under its `mcp:` id.
 *
 * Throws at creation (the same ADR): `SERVER_UNAVAILABLE` when a needed server is not running,
 * `TOOL_UNAVAILABLE` when a tool resource's tool is absent from its server; plus
 * `CONFIG_INVALID` for a broken custom module.
 */
export async function createSkillRegistry(options: SkillRegistryOptions): Promise<SkillRegistry> {
  const { plan } = options;
  const activation = options.activation ?? createSkillActivation();
  const warn = options.onWarning ?? (() => {});
  for (const config of plan.servers) {
    if (!options.servers.has(config.name)) {
      throw new AgentsError(
        AgentsErrorCode.ServerUnavailable,
        `Server "${config.name}" is needed by the skills (${plan.skills.map((skill) => skill.name).join(', ')}) but is not running; check that it starts with \`agents server test ${config.name}\`.`,
        { details: { serverName: config.name } },
      );
    }
  }

  // Static sources are loaded once; MCP entries are read from the servers on every flatten.
  const staticParts = new Map<SkillInclusion, ToolEntry[]>();
  const builtins = options.paths
    ? new Map(
        createBuiltinTools({ paths: options.paths }).map((entry) => [
          entry.descriptor.originalName,
          entry,
        ]),
      )
    : new Map<string, ToolEntry>();
  const agentSkillFolders: string[] = [];
  for (const inclusion of plan.inclusions) {
    if (inclusion.kind === 'builtin') {
      const entry = builtins.get(inclusion.name);
      if (!entry) {
        throw new AgentsError(
          AgentsErrorCode.ToolUnavailable,
          `Skill "${inclusion.skill}" uses built-in tool "${inclusion.name}", but no folder was given for built-in file tools.`,
          { details: { skill: inclusion.skill, toolId: `builtin:${inclusion.name}` } },
        );
      }
      staticParts.set(inclusion, [entry]);
    } else if (inclusion.kind === 'custom') {
      staticParts.set(inclusion, await loadCustomTools(inclusion.entry, options.projectDir));
    } else if (inclusion.kind === 'agent-skills') {
      agentSkillFolders.push(...inclusion.folders);
    }
  }
  const agentSkillSet = await loadAgentSkills(agentSkillFolders, {
    onSkillWarning: (warning: AgentSkillWarning) => warn(`Agent Skill: ${warning.message}`),
  });
  const agentSkillTool = createAgentSkillTool(agentSkillSet.skills, activation);
  const skillsByName = new Map(plan.skills.map((skill) => [skill.name, skill]));

  // Server tools some tool resource names: included once, under the resource's id.
  const claimed = new Set(
    plan.inclusions.flatMap((inclusion) =>
      inclusion.kind === 'resource'
        ? [toolKey(inclusion.resource.server, inclusion.resource.tool)]
        : [],
    ),
  );
  const flatten = (strict: boolean): ToolEntry[] => {
    const included: Array<{ entry: ToolEntry; override?: ToolOverride }> = [];
    const seen = new Set<string>();
    const add = (entry: ToolEntry, overrides: Array<ToolOverride | undefined>) => {
      if (seen.has(entry.descriptor.id)) return;
      const override = mergeOverrides(overrides);
      if (override?.enabled === false) return;
      seen.add(entry.descriptor.id);
      included.push({ entry, ...(override ? { override } : {}) });
    };
    for (const inclusion of plan.inclusions) {
      const skillOverrides = skillsByName.get(inclusion.skill)?.overrides ?? {};
      const overrideFor = (descriptor: ToolDescriptor) =>
        skillOverrides[descriptor.originalName] ?? skillOverrides[descriptor.id];
      if (inclusion.kind === 'server') {
        for (const entry of options.servers.get(inclusion.serverName)?.entries() ?? []) {
          if (claimed.has(toolKey(inclusion.serverName, entry.descriptor.originalName))) continue;
          add(entry, [overrideFor(entry.descriptor)]);
        }
      } else if (inclusion.kind === 'resource') {
        const { resource } = inclusion;
        const entry = options.servers
          .get(resource.server)
          ?.entries()
          .find((candidate) => candidate.descriptor.originalName === resource.tool);
        if (!entry) {
          const message =
            `Tool resource "${resource.id}" maps to tool "${resource.tool}" on server "${resource.server}", ` +
            `but that server does not offer it (it has: ${
              options.servers
                .get(resource.server)
                ?.entries()
                .map((item) => item.descriptor.originalName)
                .join(', ') || 'no tools'
            }); fix the resource's "tool" field or the server.`;
          if (strict) {
            throw new AgentsError(AgentsErrorCode.ToolUnavailable, message, {
              details: {
                toolId: resource.id,
                serverName: resource.server,
                toolName: resource.tool,
              },
            });
          }
          warn(message);
          continue;
        }
        add(asResource(entry, resource), [resource.overrides, overrideFor(entry.descriptor)]);
      } else if (inclusion.kind !== 'agent-skills') {
        for (const entry of staticParts.get(inclusion) ?? [])
          add(entry, [overrideFor(entry.descriptor)]);
      }
    }
    if (agentSkillTool) add(agentSkillTool, []);
    const names = resolveToolNames(
      included.map(({ entry, override }) => ({
        id: entry.descriptor.id,
        originalName:
          entry.descriptor.source === 'mcp' ? entry.descriptor.originalName : entry.descriptor.name,
        ...(entry.descriptor.serverName === undefined
          ? {}
          : { serverName: entry.descriptor.serverName }),
        ...(override?.name === undefined ? {} : { preferredName: override.name }),
      })),
      { ...(options.alwaysPrefix ? { alwaysPrefix: true } : {}) },
    );
    return included.map(({ entry, override }) =>
      applyOverride(entry, names.get(entry.descriptor.id)!, override),
    );
  };

  const registry = options.registry ?? createToolRegistry();
  const group = options.group ?? SKILL_TOOLS_GROUP;
  registry.replaceGroup(group, flatten(true));
  const unsubscribers: Array<() => void> = [];
  const refresh = (): void => {
    try {
      // The registry emits `change` only when something differs.
      registry.replaceGroup(group, flatten(false));
    } catch (error) {
      // A refresh that cannot resolve names keeps the previous set rather than breaking a run.
      warn(`Tool set not refreshed: ${errorMessage(error)}`);
    }
  };
  for (const config of plan.servers) {
    const server = options.servers.get(config.name);
    if (server?.on) unsubscribers.push(server.on('tools-changed', () => refresh()));
  }
  let closed = false;
  const close = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    for (const unsubscribe of unsubscribers.splice(0)) unsubscribe();
  };
  return {
    replaceGroup: (key, entries) => registry.replaceGroup(key, entries),
    removeGroup: (key) => registry.removeGroup(key),
    get: (id) => registry.get(id),
    getByName: (name) => registry.getByName(name),
    entries: (key) => registry.entries(key),
    groups: () => registry.groups(),
    on: (event, listener) => registry.on(event, listener),
    agentSkills: agentSkillSet.skills,
    activation,
    refresh,
    close,
    [Symbol.asyncDispose]: close,
  };
}

function toolKey(serverName: string, toolName: string): string {
  return `${serverName}\u0000${toolName}`;
}

/** The server tool under the tool resource's stable id; it still calls the server's own tool. */
function asResource(entry: ToolEntry, resource: ToolResource): ToolEntry {
  return {
    descriptor: { ...entry.descriptor, id: resource.id },
    execute: (args, context, capabilities) => entry.execute(args, context, capabilities),
  };
}

function mergeOverrides(overrides: Array<ToolOverride | undefined>): ToolOverride | undefined {
  const present = overrides.filter((override): override is ToolOverride => override !== undefined);
  if (present.length === 0) return undefined;
  return present.reduce<ToolOverride>(
    (merged, next) => ({
      ...merged,
      ...next,
      ...(merged.capabilities || next.capabilities
        ? { capabilities: { ...merged.capabilities, ...next.capabilities } }
        : {}),
    }),
    {},
  );
}

/** A copy of the entry with its resolved name and the inclusion override applied. */
function applyOverride(
  entry: ToolEntry,
  name: string,
  override: ToolOverride | undefined,
): ToolEntry {
  if (name === entry.descriptor.name && override === undefined) return entry;
  const descriptor: ToolDescriptor = { ...entry.descriptor, name };
  if (override?.description !== undefined) descriptor.description = override.description;
  if (override?.pathArguments !== undefined) descriptor.pathArguments = override.pathArguments;
  if (override?.capabilities)
    descriptor.capabilities = overrideCapabilities(
      entry.descriptor.capabilities,
      override.capabilities,
    );
  // Same execute: the server still sees its own tool name.
  return {
    descriptor,
    execute: (args, context, capabilities) => entry.execute(args, context, capabilities),
  };
}

function overrideCapabilities(
  base: Capabilities,
  override: NonNullable<ToolOverride['capabilities']>,
): Capabilities {
  const verdict = (
    key: keyof NonNullable<ToolOverride['capabilities']>,
    fallback: CapabilityVerdict,
  ): CapabilityVerdict => {
    const value = override[key];
    return value === undefined
      ? fallback
      : { value, source: 'override', reason: `skill override ${key}=${value}` };
  };
  const readOnly = verdict('readOnly', base.readOnly);
  // Setting one of readOnly/writes implies the other unless both are given.
  const writes =
    override.writes === undefined && override.readOnly !== undefined
      ? {
          value: !override.readOnly,
          source: 'override' as const,
          reason: `skill override readOnly=${override.readOnly}`,
        }
      : verdict('writes', base.writes);
  return {
    readOnly:
      override.readOnly === undefined && override.writes !== undefined
        ? {
            value: !override.writes,
            source: 'override',
            reason: `skill override writes=${override.writes}`,
          }
        : readOnly,
    writes,
    destructive: verdict('destructive', base.destructive),
    openWorld: verdict('openWorld', base.openWorld),
    disagreements: base.disagreements,
  };
}
