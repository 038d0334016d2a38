import { randomUUID } from 'node:crypto';
import type { ActorRunEvent } from '../../actors/actor.js';
import { AgentsError, AgentsErrorCode } from '../../errors.js';
import { parseCommandLine, requirePositional, storeOf } from '../args.js';
import type { Command, CommandContext } from '../command.js';
import { CliUsageError } from '../exit-codes.js';
import { formatTable, printJson, println } from '../output.js';

const ADD_USAGE = `Usage: agents actor add NAME --skill SKILL [options]

Creates actors/NAME.yaml after resolving its skills (missing skills, tool resources and servers
are reported now, not at run time).

Options:
  --skill SKILL          a skill of the workspace (repeatable, at least one)
  --model MODEL          provider:model (e.g. openai:gpt-4.1) or scripted:PATH (default scripted)
  --instructions TEXT    system instructions
  --description TEXT     what the actor is for
  --no-sandbox           run tools on the project itself instead of a git worktree sandbox
  --source DIR           folder or git repo the sandbox is made from (default .)
  --checkpointer KIND    sqlite (default, .agents/checkpoints.sqlite) or memory
  --force                replace an existing actor`;

const actorAdd: Command = {
  path: ['actor', 'add'],
  summary: 'Create an actor from skills',
  usage: ADD_USAGE,
  async run(context) {
    const { values, positionals } = parseCommandLine(
      context.argv,
      {
        skill: { type: 'string', multiple: true },
        model: { type: 'string' },
        instructions: { type: 'string' },
        description: { type: 'string' },
        'no-sandbox': { type: 'boolean' },
        source: { type: 'string' },
        checkpointer: { type: 'string' },
        force: { type: 'boolean' },
      },
      ADD_USAGE,
    );
    const name = requirePositional(positionals, 'actor NAME', ADD_USAGE);
    if (!values.skill || values.skill.length === 0)
      throw new CliUsageError('Give at least one --skill.', ADD_USAGE);
    if (
      values.checkpointer !== undefined &&
      values.checkpointer !== 'sqlite' &&
      values.checkpointer !== 'memory'
    ) {
      throw new CliUsageError(
        `--checkpointer ${values.checkpointer}: use sqlite or memory (postgres: edit the YAML).`,
        ADD_USAGE,
      );
    }
    const input = {
      skills: values.skill,
      ...(values.description ? { description: values.description } : {}),
      ...(values.model ? { model: values.model } : {}),
      ...(values.instructions ? { instructions: values.instructions } : {}),
      ...(values['no-sandbox'] || values.source
        ? {
            sandbox: {
              ...(values['no-sandbox'] ? { enabled: false } : {}),
              ...(values.source ? { source: values.source } : {}),
            },
          }
        : {}),
      ...(values.checkpointer === 'memory' ? { checkpointer: { type: 'memory' as const } } : {}),
    };
    const { ActorSchema } = await import('../../config/schemas.js');
    ActorSchema.parse(input);
    const store = storeOf(context);
    if (!values.force && (await store.has('actor', name))) {
      throw new AgentsError(
        AgentsErrorCode.ConfigInvalid,
        `Actor "${name}" already exists (${store.file('actor', name)}); pass --force to replace it.`,
        {
          details: { problems: [] },
        },
      );
    }
    const { planSkills } = await import('../../registry/skill-registry.js');
    const plan = await planSkills(store, values.skill);
    const file = await store.put('actor', name, input, { overwrite: values.force === true });
    if (context.json)
      printJson(context.stdout, {
        name,
        file,
        actor: input,
        servers: plan.servers.map((server) => server.name),
      });
    else
      println(
        context.stdout,
        `Added actor "${name}" (${file}); its skills use servers: ${plan.servers.map((server) => server.name).join(', ') || 'none'}.`,
      );
    return 0;
  },
};

const LIST_USAGE = `Usage: agents actor list [--json]

Lists the actors of the workspace.`;

const actorList: Command = {
  path: ['actor', 'list'],
  summary: 'List actors',
  usage: LIST_USAGE,
  async run(context) {
    parseCommandLine(context.argv, {}, LIST_USAGE);
    const { records, problems } = await storeOf(context).list('actor');
    if (context.json) {
      printJson(context.stdout, {
        actors: records.map((record) => ({ file: record.file, ...record.value })),
        problems: problems.map((problem) => ({
          name: problem.name,
          file: problem.file,
          message: problem.error.message,
        })),
      });
    } else {
      println(
        context.stdout,
        formatTable(
          ['NAME', 'SKILLS', 'MODEL', 'SANDBOX', 'DESCRIPTION'],
          records.map((record) => [
            record.name,
            record.value.skills.join(','),
            record.value.model,
            record.value.sandbox.enabled ? record.value.sandbox.source : 'off',
            record.value.description,
          ]),
        ),
      );
      for (const problem of problems) println(context.stderr, `warning: ${problem.error.message}`);
    }
    return problems.length > 0 ? 3 : 0;
  },
};

const RUN_USAGE = `Usage: agents actor run NAME --input TEXT [--thread ID] [--keep-sandbox] [--json]

Activates the actor (starts its servers and sandbox), runs the input, prints tool calls and
results as they happen, then deactivates, also on Ctrl-C.

Options:
  --input TEXT      the user message
  --thread ID       conversation thread to continue (default: a new one, printed at the end)
  --keep-sandbox    leave the sandbox folder in place to inspect the result
  --json            one JSON event per line`;

const MAX_SHOWN = 300;

function shorten(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > MAX_SHOWN ? `${flat.slice(0, MAX_SHOWN)}…` : flat;
}

function printEvent(context: CommandContext, event: ActorRunEvent): void {
  if (context.json) {
    context.stdout.write(`${JSON.stringify(event)}\n`);
    return;
  }
  switch (event.type) {
    case 'tool-call-start':
      println(context.stdout, `→ ${event.name} ${shorten(JSON.stringify(event.args))}`);
      break;
    case 'tool-call-end':
      println(context.stdout, `${event.isError ? '✗' : '←'} ${event.name}: ${shorten(event.text)}`);
      if (event.change && event.change.changed.length > 0) {
        println(
          context.stdout,
          `  changed: ${event.change.changed.map((item) => `${item.status} ${item.path}`).join(', ')}`,
        );
      }
      break;
    case 'message':
      println(context.stdout, event.text);
      break;
    case 'interrupt':
      println(context.stdout, `Paused for approval: ${shorten(JSON.stringify(event.value))}`);
      break;
  }
}

const actorRun: Command = {
  path: ['actor', 'run'],
  summary: 'Run an actor on one input, streaming tool calls',
  usage: RUN_USAGE,
  async run(context) {
    const { values, positionals } = parseCommandLine(
      context.argv,
      {
        input: { type: 'string' },
        thread: { type: 'string' },
        'keep-sandbox': { type: 'boolean' },
      },
      RUN_USAGE,
    );
    const name = requirePositional(positionals, 'actor NAME', RUN_USAGE);
    if (values.input === undefined) throw new CliUsageError('--input is required.', RUN_USAGE);
    const threadId = values.thread ?? randomUUID();
    // Loaded on use: LangGraph and the servers are heavy, and `--help` should be quick.
    const { createActor } = await import('../../actors/actor.js');
    const actor = await createActor({
      name,
      workspace: storeOf(context),
      // Bound to the thread: its sandbox is kept per thread, so `agents rollback` works later.
      threadId,
      keepSandbox: values['keep-sandbox'] === true,
      onWarning: (message) => println(context.stderr, `warning: ${message}`),
    });
    let interrupted = false;
    try {
      await actor.activate({ signal: context.signal });
      for await (const event of actor.run(values.input, { threadId, signal: context.signal })) {
        printEvent(context, event);
        if (event.type === 'interrupt') interrupted = true;
      }
      const sandboxNote =
        values['keep-sandbox'] && actor.sandbox ? ` sandbox: ${actor.sandbox.root}` : '';
      if (context.json)
        context.stdout.write(
          `${JSON.stringify({ type: 'end', threadId, ...(sandboxNote ? { sandbox: actor.sandbox?.root } : {}) })}\n`,
        );
      else println(context.stderr, `thread: ${threadId}${sandboxNote}`);
    } finally {
      // Also on Ctrl-C: the abort ends the stream above, and servers and sandbox go away here.
      await actor.deactivate();
    }
    return interrupted ? 8 : 0;
  },
};

/** `agents actor add|list|run`. */
export const actorCommands: readonly Command[] = [actorAdd, actorList, actorRun];
