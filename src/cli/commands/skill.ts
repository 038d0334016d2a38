import { AgentsError, AgentsErrorCode } from '../../errors.js';
import type { NamedSkill } from '../../skills/skill-plan.js';
import { parseCommandLine, requirePositional, storeOf } from '../args.js';
import { createRemoveCommand, usersOfSkill } from '../remove-command.js';
import type { Command } from '../command.js';
import { createListCommand } from '../list-command.js';
import { formatTable, printJson, println } from '../output.js';

const ADD_USAGE = `Usage: agents skill add NAME [options]

Creates skills/NAME.yaml: a named bundle of tools. Before storing, every reference is resolved
(tool resources, servers, Agent Skill folders) and the servers are started to check that the
tools exist.

Options:
  --description TEXT    what the skill is for
  --tool T              built-in tool (read_file), tool resource id, or custom:./mod.js#export (repeatable)
  --server NAME         include every tool of a registered server (repeatable)
  --agent-skill DIR     a folder holding SKILL.md, or a folder of them (repeatable): a bare
                        name is a folder in <workspace>/skills/ (release-notes →
                        .agents/skills/release-notes/), a path is relative to the project
  --no-validate         store without starting servers
  --force               replace an existing skill`;

const skillAdd: Command = {
  path: ['skill', 'add'],
  usage: ADD_USAGE,
  async run(context) {
    const { values, positionals } = parseCommandLine(
      context.argv,
      {
        description: { type: 'string' },
        tool: { type: 'string', multiple: true },
        server: { type: 'string', multiple: true },
        'agent-skill': { type: 'string', multiple: true },
        'no-validate': { type: 'boolean' },
        force: { type: 'boolean' },
      },
      ADD_USAGE,
    );
    const name = requirePositional(positionals, 'skill NAME', ADD_USAGE);
    const input = {
      ...(values.description ? { description: values.description } : {}),
      ...(values.tool ? { tools: values.tool } : {}),
      ...(values.server ? { mcpServers: values.server } : {}),
      ...(values['agent-skill'] ? { agentSkills: values['agent-skill'] } : {}),
    };
    const store = storeOf(context);
    if (!values.force && (await store.has('skill', name))) {
      throw new AgentsError(
        AgentsErrorCode.ConfigInvalid,
        `Skill "${name}" already exists (${store.file('skill', name)}); pass --force to replace it.`,
        {
          details: { problems: [] },
        },
      );
    }
    const { SkillSchema } = await import('../../config/skill-schema.js');
    const skill: NamedSkill = { ...SkillSchema.parse(input), name };
    const warnings: string[] = [];
    let toolNames: string[] | undefined;
    const { activateSkills } = await import('../../actors/activate-skills.js');
    const { planSkillConfigs } = await import('../../skills/skill-plan.js');
    if (values['no-validate']) {
      await planSkillConfigs(store, [skill]);
    } else {
      await using active = await activateSkills({
        store,
        skills: [skill],
        cwd: context.projectDir,
        signal: context.signal,
        onWarning: (message) => warnings.push(message),
      });
      toolNames = active.registry.entries().map((entry) => entry.descriptor.name);
    }
    const file = await store.put('skill', name, input, { overwrite: values.force === true });
    if (context.json)
      printJson(context.stdout, { name, file, skill: input, tools: toolNames ?? null, warnings });
    else {
      for (const warning of warnings) println(context.stderr, `warning: ${warning}`);
      println(
        context.stdout,
        `Added skill "${name}" (${file})${toolNames ? ` with tools: ${toolNames.join(', ')}` : ''}.`,
      );
    }
    return 0;
  },
};

const LIST_USAGE = `Usage: agents skill list [--json]

Lists the skills of the workspace.`;

const skillList = createListCommand({
  kind: 'skill',
  usage: LIST_USAGE,
  headers: ['NAME', 'TOOLS', 'SERVERS', 'AGENT SKILLS', 'DESCRIPTION'],
  rows: (records) =>
    records.map((record) => [
      record.name,
      record.value.tools.join(',') || '-',
      record.value.mcpServers
        .map((server) => (typeof server === 'string' ? server : server.name))
        .join(',') || '-',
      record.value.agentSkills.join(',') || '-',
      record.value.description,
    ]),
  async after(context) {
    const { loadAgentSkills } = await import('../../skills/agent-skills.js');
    const store = storeOf(context);
    const { skills: agentSkills } = await loadAgentSkills([store.agentSkillsDir]);
    if (agentSkills.length === 0) return;
    println(context.stdout);
    println(
      context.stdout,
      `Agent Skills in ${store.agentSkillsDir} (name them in a skill's agentSkills):`,
    );
    for (const item of agentSkills) println(context.stdout, `  ${item.name}: ${item.description}`);
  },
});

const SHOW_USAGE = `Usage: agents skill show NAME [--json]

Starts the skill's servers and prints its flattened tool set: every tool with its source,
name, and capabilities, and the Agent Skills it offers.`;

const skillShow: Command = {
  path: ['skill', 'show'],
  usage: SHOW_USAGE,
  async run(context) {
    const { positionals } = parseCommandLine(context.argv, {}, SHOW_USAGE);
    const name = requirePositional(positionals, 'skill NAME', SHOW_USAGE);
    const store = storeOf(context);
    const skill = await store.get('skill', name);
    const warnings: string[] = [];
    const { activateSkills } = await import('../../actors/activate-skills.js');
    await using active = await activateSkills({
      store,
      skills: [skill],
      cwd: context.projectDir,
      signal: context.signal,
      onWarning: (message) => warnings.push(message),
    });
    const tools = active.registry.entries().map((entry) => entry.descriptor);
    if (context.json) {
      printJson(context.stdout, {
        skill,
        tools: tools.map((tool) => ({
          id: tool.id,
          name: tool.name,
          source: tool.source,
          capabilities: tool.capabilities,
        })),
        agentSkills: active.registry.agentSkills.map((item) => ({
          name: item.name,
          description: item.description,
          allowedTools: item.allowedTools ?? null,
          dir: item.dir,
        })),
        warnings,
      });
      return 0;
    }
    println(context.stdout, `Skill "${name}"${skill.description ? `: ${skill.description}` : ''}`);
    println(
      context.stdout,
      formatTable(
        ['NAME', 'ID', 'SOURCE', 'READ-ONLY', 'WHY'],
        tools.map((tool) => [
          tool.name,
          tool.id,
          tool.source,
          String(tool.capabilities.readOnly.value),
          `${tool.capabilities.readOnly.source}: ${tool.capabilities.readOnly.reason}`,
        ]),
      ),
    );
    if (active.registry.agentSkills.length > 0) {
      println(context.stdout);
      println(context.stdout, 'Agent Skills:');
      for (const item of active.registry.agentSkills) {
        println(
          context.stdout,
          `  ${item.name}: ${item.description}${item.allowedTools ? ` (allowed-tools: ${item.allowedTools.join(' ')})` : ''}`,
        );
      }
    }
    for (const warning of warnings) println(context.stderr, `warning: ${warning}`);
    return 0;
  },
};

/** `agents skill add|list|show`. */
export const skillCommands: readonly Command[] = [
  skillAdd,
  skillList,
  skillShow,
  createRemoveCommand('skill', usersOfSkill),
];
