import { AgentsError, AgentsErrorCode } from '../../errors.js';
import type { SkillInclusion } from '../../skills/skill-plan.js';
import type { ToolDescriptor } from '../../core/tool-descriptor.js';
import {
  BUILTIN_TOOL_NAMES,
  createBuiltinTools,
  isBuiltinToolName,
} from '../../skills/builtin-tools.js';
import type { WorkspaceStore } from '../../workspace/workspace-types.js';
import { parseCommandLine, requirePositional, storeOf, usageError } from '../args.js';
import { createRemoveCommand, usersOfTool } from '../remove-command.js';
import type { Command, CommandContext } from '../command.js';
import { createListCommand } from '../list-command.js';
import { formatDescriptor, printJson, println } from '../output.js';
import { toolCallCommand } from './tool-call.js';
import { toolTrust } from './tool-trust.js';

const ADD_USAGE = `Usage: agents tool add NAME --server SERVER --tool TOOL [options]

Registers a tool resource (tools/NAME.yaml): a stable id that skills list, mapped to one tool of
a registered server. The server is started first to check that it offers the tool.

Options:
  --server SERVER   registered server name (servers/SERVER.yaml)
  --tool TOOL       the tool's name on that server
  --id ID           stable id skills use (default: NAME)
  --rename NAME     a different name for the model
  --read-only       override: the tool only reads
  --writes          override: the tool writes
  --disabled        store it disabled
  --no-validate     store without starting the server
  --force           replace an existing record`;

const toolAdd: Command = {
  path: ['tool', 'add'],
  usage: ADD_USAGE,
  async run(context) {
    const { values, positionals } = parseCommandLine(
      context.argv,
      {
        server: { type: 'string' },
        tool: { type: 'string' },
        id: { type: 'string' },
        rename: { type: 'string' },
        'read-only': { type: 'boolean' },
        writes: { type: 'boolean' },
        disabled: { type: 'boolean' },
        'no-validate': { type: 'boolean' },
        force: { type: 'boolean' },
      },
      ADD_USAGE,
    );
    const name = requirePositional(positionals, 'tool NAME', ADD_USAGE);
    if (!values.server || !values.tool)
      throw usageError('--server and --tool are required.', ADD_USAGE);
    if (values['read-only'] && values.writes)
      throw usageError('--read-only and --writes contradict each other.', ADD_USAGE);
    const store = storeOf(context);
    const server = await store.get('server', values.server);
    if (!values['no-validate']) {
      const { probeServer } = await import('./server.js');
      const probe = await probeServer(server, store, context);
      if (!probe.tools.some((tool) => tool.originalName === values.tool)) {
        throw new AgentsError(
          AgentsErrorCode.ToolUnavailable,
          `Server "${values.server}" has no tool "${values.tool}"; it has: ${probe.tools.map((tool) => tool.originalName).join(', ') || 'none'}.`,
          { details: { serverName: values.server, toolName: values.tool } },
        );
      }
    }
    const capabilities = values['read-only']
      ? { readOnly: true }
      : values.writes
        ? { writes: true }
        : undefined;
    const overrides = {
      ...(values.rename ? { name: values.rename } : {}),
      ...(capabilities ? { capabilities } : {}),
    };
    const resource = {
      id: values.id ?? name,
      server: values.server,
      tool: values.tool,
      ...(values.disabled ? { enabled: false } : {}),
      ...(Object.keys(overrides).length > 0 ? { overrides } : {}),
    };
    const existing = await store.findTool(resource.id);
    if (existing && existing.name !== name) {
      throw new AgentsError(
        AgentsErrorCode.ConfigInvalid,
        `Tool id "${resource.id}" is already used by ${existing.file}; choose another --id.`,
        {
          details: { problems: [] },
        },
      );
    }
    const file = await store.put('tool', name, resource, { overwrite: values.force === true });
    if (context.json) printJson(context.stdout, { name, file, resource });
    else
      println(
        context.stdout,
        `Added tool "${resource.id}" → ${values.server}/${values.tool} (${file}).`,
      );
    return 0;
  },
};

const LIST_USAGE = `Usage: agents tool list [--json]

Lists tool resources (and the built-in tools skills can name).`;

const toolList = createListCommand({
  kind: 'tool',
  usage: LIST_USAGE,
  toJson: (record) => ({ name: record.name, file: record.file, ...record.value }),
  extraJson: { builtin: BUILTIN_TOOL_NAMES },
  headers: ['ID', 'SERVER', 'TOOL', 'ENABLED'],
  rows: (records) =>
    records.map((record) => [
      record.value.id,
      record.value.server,
      record.value.tool,
      String(record.value.enabled),
    ]),
  empty: '(no tool resources: tools/*.yaml)',
  async after(context) {
    println(context.stdout, `Built-in tools: ${BUILTIN_TOOL_NAMES.join(', ')}`);
    // Tool resources are optional: a skill's mcpServers includes every tool of a server, so
    // an empty table must not read as "no tools".
    const servers = (await storeOf(context).list('server')).records.map((record) => record.name);
    if (servers.length > 0)
      println(
        context.stdout,
        `Server tools (all usable through a skill's mcpServers): ${servers.join(', ')}; ` +
          'see them with `agents server test NAME`.',
      );
  },
});

/**
 * The descriptor a skill would get for a tool: a built-in tool, a tool resource (id or file
 * name), or any tool of a registered server by its id `mcp:SERVER/TOOL`. The server is started
 * and overrides (the server record's, then the resource's) are applied exactly as the skill
 * registry applies them.
 */
async function describeTool(
  store: WorkspaceStore,
  idOrName: string,
  context: CommandContext,
): Promise<ToolDescriptor> {
  if (isBuiltinToolName(idOrName)) {
    const { createPathMap } = await import('../../sandbox/path-map.js');
    const [entry] = createBuiltinTools({
      paths: () => createPathMap(context.projectDir),
      names: [idOrName],
    });
    return entry!.descriptor;
  }
  const record = await store.findTool(idOrName);
  if (record) {
    const entries = await describeServerTools(store, record.value.server, context, {
      kind: 'resource',
      skill: SHOW_SKILL,
      resource: { ...record.value, enabled: true },
    });
    return entries[0]!;
  }
  const mcpId = MCP_TOOL_ID.exec(idOrName);
  if (mcpId) {
    const [, serverName = '', toolName = ''] = mcpId;
    const entries = await describeServerTools(store, serverName, context, {
      kind: 'server',
      skill: SHOW_SKILL,
      serverName,
    });
    const found = entries.find((descriptor) => descriptor.originalName === toolName);
    if (!found) {
      throw new AgentsError(
        AgentsErrorCode.ToolNotFound,
        `Server "${serverName}" has no tool "${toolName}"; it has: ${entries.map((descriptor) => descriptor.originalName).join(', ') || 'none'}.`,
        { details: { toolId: idOrName, serverName, toolName } },
      );
    }
    return found;
  }
  throw new AgentsError(
    AgentsErrorCode.ToolNotFound,
    `No tool "${idOrName}": it is not a built-in tool (${BUILTIN_TOOL_NAMES.join(', ')}), not a ` +
      `tool resource in ${store.dir('tool')}, and not an id of the form mcp:SERVER/TOOL. ` +
      "Show a server's tool with `agents tool show mcp:SERVER/TOOL` (`agents server test SERVER` " +
      "lists them), register one with `agents tool add`, or list a skill's tools with " +
      '`agents skill show SKILL`.',
    { details: { toolId: idOrName } },
  );
}

/** `mcp:SERVER/TOOL`, the id every tool of a server has (see `mcp/tool-adapter.ts`). */
const MCP_TOOL_ID = /^mcp:([^/]+)\/(.+)$/;
const SHOW_SKILL = 'tool-show';

/** Starts one server, includes its tools as a skill would, and returns their descriptors. */
async function describeServerTools(
  store: WorkspaceStore,
  serverName: string,
  context: CommandContext,
  inclusion: SkillInclusion,
): Promise<ToolDescriptor[]> {
  const config = await store.get('server', serverName);
  const { createServerSkillRegistry } = await import('../../skills/skill-registry.js');
  const { inspectServer } = await import('./server.js');
  return inspectServer(config, store, context, async (server) => {
    const registry = await createServerSkillRegistry(config, server, inclusion, store.projectDir);
    const descriptors = registry.entries().map((entry) => entry.descriptor);
    await registry.close();
    return descriptors;
  });
}

const SHOW_USAGE = `Usage: agents tool show TOOL [--json]

Starts the tool's server and prints its descriptor: capabilities with their provenance
(override, annotation, name-heuristic, default), path arguments, fingerprint and schema.

TOOL is one of:
  mcp:SERVER/TOOL   any tool of a registered server (e.g. mcp:fs/write_file)
  ID or NAME        a tool resource (\`agents tool list\`), with its overrides
  read_file, ...    a built-in tool`;

const toolShow: Command = {
  path: ['tool', 'show'],
  usage: SHOW_USAGE,
  async run(context) {
    const { positionals } = parseCommandLine(context.argv, {}, SHOW_USAGE);
    const name = requirePositional(positionals, 'TOOL', SHOW_USAGE);
    const descriptor = await describeTool(storeOf(context), name, context);
    if (context.json) printJson(context.stdout, descriptor);
    else {
      println(context.stdout, formatDescriptor(descriptor));
      println(context.stdout);
      println(context.stdout, `input schema: ${JSON.stringify(descriptor.inputSchema)}`);
    }
    return 0;
  },
};

function toggle(enabled: boolean): Command {
  const verb = enabled ? 'enable' : 'disable';
  const usage = `Usage: agents tool ${verb} ID|NAME

${enabled ? 'Enables' : 'Disables'} a tool resource; skills listing a disabled one fail with TOOL_DISABLED.`;
  return {
    path: ['tool', verb],
    usage,
    async run(context) {
      const { positionals } = parseCommandLine(context.argv, {}, usage);
      const name = requirePositional(positionals, 'tool ID or NAME', usage);
      const store = storeOf(context);
      const record = await store.findTool(name);
      if (!record) {
        throw new AgentsError(
          AgentsErrorCode.ToolNotFound,
          `No tool resource "${name}" in ${store.dir('tool')}; see \`agents tool list\` for the ids.`,
          { details: { toolId: name } },
        );
      }
      await store.put('tool', record.name, { ...record.value, enabled }, { overwrite: true });
      if (context.json) printJson(context.stdout, { id: record.value.id, enabled });
      else
        println(context.stdout, `Tool "${record.value.id}" ${enabled ? 'enabled' : 'disabled'}.`);
      return 0;
    },
  };
}

/** `agents tool add|list|show|trust|enable|disable`. */
export const toolCommands: readonly Command[] = [
  toolAdd,
  toolList,
  toolShow,
  toolCallCommand,
  toolTrust,
  toggle(true),
  toggle(false),
  createRemoveCommand('tool', usersOfTool),
];
