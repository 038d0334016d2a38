import { AgentsError, AgentsErrorCode } from '../errors.js';
import { NOT_FOUND_CODES } from '../workspace/workspace-files.js';
import type { WorkspaceKind, WorkspaceStore } from '../workspace/workspace-types.js';
import { parseCommandLine, requirePositional, storeOf } from './args.js';
import type { Command } from './command.js';
import { printJson, println } from './output.js';

/** Records that name `name` and would fail to resolve without it, e.g. `skill "files"`. */
type UsersOf = (store: WorkspaceStore, name: string) => Promise<string[]>;

/**
 * Builds `KIND remove NAME [--force]`: deletes `KIND/NAME.yaml`, but refuses while other records
 * use it (naming them), unless `--force`, so a skill or actor does not break silently.
 */
export function createRemoveCommand(kind: WorkspaceKind, usersOf: UsersOf): Command {
  const usage = `Usage: agents ${kind} remove NAME [--force]

Deletes ${kind}s/NAME.yaml. Refuses while other records use it (they are named); --force removes
it anyway, and those records then fail to resolve until you fix them.`;
  return {
    path: [kind, 'remove'],
    usage,
    async run(context) {
      const { values, positionals } = parseCommandLine(
        context.argv,
        { force: { type: 'boolean' } },
        usage,
      );
      const name = requirePositional(positionals, `${kind} NAME`, usage);
      const store = storeOf(context);
      if (!(await store.has(kind, name))) {
        throw new AgentsError(
          NOT_FOUND_CODES[kind],
          `No ${kind} named "${name}" in ${store.dir(kind)}; see \`agents ${kind} list\`.`,
          { details: { kind, name } },
        );
      }
      const users = values.force === true ? [] : await usersOf(store, name);
      if (users.length > 0) {
        throw new AgentsError(
          AgentsErrorCode.InvalidArguments,
          `${kind} "${name}" is used by ${users.join(', ')}; remove it from them first, or pass --force to remove it anyway.`,
          { details: { kind, name, usedBy: users } },
        );
      }
      await store.remove(kind, name);
      if (context.json) printJson(context.stdout, { removed: name, kind });
      else println(context.stdout, `Removed ${kind} "${name}".`);
      return 0;
    },
  };
}

/** Skills and tool resources that name server `name`. */
export async function usersOfServer(store: WorkspaceStore, name: string): Promise<string[]> {
  const [skills, tools] = await Promise.all([store.list('skill'), store.list('tool')]);
  return [
    ...skills.records
      .filter((record) => record.value.mcpServers.some((server) => server === name))
      .map((record) => `skill "${record.name}"`),
    ...tools.records
      .filter((record) => record.value.server === name)
      .map((record) => `tool "${record.value.id}"`),
  ];
}

/** Actors that are assigned skill `name`. */
export async function usersOfSkill(store: WorkspaceStore, name: string): Promise<string[]> {
  const actors = await store.list('actor');
  return actors.records
    .filter((record) => record.value.skills.includes(name))
    .map((record) => `actor "${record.name}"`);
}

/** Skills that list tool resource `name` (by its id or its file name). */
export async function usersOfTool(store: WorkspaceStore, name: string): Promise<string[]> {
  const tool = await store.get('tool', name);
  const skills = await store.list('skill');
  return skills.records
    .filter((record) => record.value.tools.some((entry) => entry === tool.id || entry === name))
    .map((record) => `skill "${record.name}"`);
}
