import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ScriptedStep } from '../../actors/scripted-model.js';
import { AgentsError, AgentsErrorCode, errorMessage } from '../../errors.js';
import type { CheckpointerSettings } from '../../runtime/agents-runtime.js';
import { parseCommandLine, requirePositional, storeOf, usageError } from '../args.js';
import type { Command, CommandContext } from '../command.js';
import { printJson, println } from '../output.js';

const ADD_USAGE = `Usage: agents actor add NAME --skill SKILL [options]

Creates actors/NAME.yaml after resolving its skills (missing skills, tool resources and servers
are reported now, not at run time) and checking its model.

Options:
  --skill SKILL          a skill of the workspace (repeatable, at least one)
  --model MODEL          the chat model, one of:
                           provider:model  e.g. openai:gpt-4.1-mini (install langchain and the
                                           provider package, e.g. @langchain/openai; set its key)
                           scripted:PATH   an offline model replaying the YAML script at PATH
                                           (relative to the project folder)
                           scripted        the default: the script <workspace>/actors/NAME.script.yaml
                         The script must exist: a YAML list of model turns, replayed in order for
                         each input (a turn has content and/or tool_calls), e.g.
                           - tool_calls: [{ name: write_file, args: { path: a.txt, content: hi } }]
                           - content: done
  --instructions TEXT    system instructions
  --description TEXT     what the actor is for
  --no-sandbox           run tools on the project itself instead of a sandbox
  --source DIR           folder or git repo the sandbox is made from (default .)
  --checkpointer KIND    sqlite (default, .agents/checkpoints.sqlite) or memory
  --policy MODE          safety policy mode: ask (default: write-class calls wait for
                         approval), read-only, or auto (everything runs); rules: edit the YAML
  --no-validate          do not start the skills' servers to check the tool names a model
                         script calls
  --force                replace an existing actor`;

const POLICY_MODES = ['ask', 'read-only', 'auto'] as const;
type PolicyModeOption = (typeof POLICY_MODES)[number];

function isPolicyMode(value: string): value is PolicyModeOption {
  return (POLICY_MODES as readonly string[]).includes(value);
}

const SCRIPT_EXAMPLE =
  '  - tool_calls: [{ name: write_file, args: { path: a.txt, content: hi } }]\n  - content: done';

/**
 * Checks an actor's model before it is stored: a script exists and parses (`scripted`,
 * `scripted:PATH`), or the spec has the `provider:model` form. Returns the script, if any.
 * Throws `CONFIG_NOT_FOUND` (no script), `CONFIG_INVALID` (broken script, with line and column)
 * or `INVALID_ARGUMENTS` (neither form), each saying how to fix it.
 */
async function checkModel(
  store: ReturnType<typeof storeOf>,
  actorName: string,
  model: string,
): Promise<{ file: string; steps: ScriptedStep[] } | undefined> {
  if (model === 'scripted' || model.startsWith('scripted:')) {
    const path = model === 'scripted' ? '' : model.slice('scripted:'.length);
    if (model !== 'scripted' && path === '')
      throw usageError('--model scripted: needs a path: scripted:path/to/script.yaml.', ADD_USAGE);
    const file =
      path === '' ? join(store.dir('actor'), `${actorName}.script.yaml`) : store.resolvePath(path);
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (error) {
      const how =
        path === ''
          ? `Without --model the actor replays the script ${file}`
          : `Model "${model}" replays the script ${file}`;
      throw new AgentsError(
        AgentsErrorCode.ConfigNotFound,
        `${how}, which cannot be read (${errorMessage(error)}). Write it first, a YAML list of ` +
          `model turns:\n${SCRIPT_EXAMPLE}\nor pass --model provider:model (e.g. openai:gpt-4.1-mini).`,
        { cause: error, details: { file } },
      );
    }
    const { parseModelScript } = await import('../../actors/scripted-model.js');
    return { file, steps: parseModelScript(text, file) };
  }
  if (!/^[a-z0-9_-]+:.+/i.test(model)) {
    throw usageError(
      `--model ${model}: use provider:model (e.g. openai:gpt-4.1-mini), scripted:PATH or scripted.`,
      ADD_USAGE,
    );
  }
  return undefined;
}

/**
 * Starts the skills' servers once and checks that every tool a model script calls is one the
 * actor will have; a typo would otherwise surface only mid-run as "tool not found". Throws
 * `TOOL_NOT_FOUND` naming the step, the name and the tools there are.
 */
async function checkScriptToolNames(
  context: CommandContext,
  skills: readonly string[],
  script: { file: string; steps: readonly ScriptedStep[] },
): Promise<void> {
  const calls = script.steps.flatMap((step, index) =>
    step.tool_calls.map((call) => ({ step: index + 1, name: call.name })),
  );
  if (calls.length === 0) return;
  const { activateSkills } = await import('../../actors/activate-skills.js');
  await using active = await activateSkills({
    store: storeOf(context),
    skills,
    cwd: context.projectDir,
    signal: context.signal,
  });
  const names = new Set(active.registry.entries().map((entry) => entry.descriptor.name));
  const unknown = calls.filter((call) => !names.has(call.name));
  if (unknown.length === 0) return;
  throw new AgentsError(
    AgentsErrorCode.ToolNotFound,
    `The model script ${script.file} calls ${unknown
      .map((call) => `"${call.name}" (step ${call.step})`)
      .join(', ')}, which the skills ${skills.join(', ')} do not provide; they provide: ${
      [...names].sort().join(', ') || 'no tools'
    }. Fix the script (or add a skill), or pass --no-validate to store it anyway.`,
    { details: { file: script.file, unknown, available: [...names] } },
  );
}

/** `agents actor add NAME --skill SKILL`. */
export const actorAddCommand: Command = {
  path: ['actor', 'add'],
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
        policy: { type: 'string' },
        'no-validate': { type: 'boolean' },
        force: { type: 'boolean' },
      },
      ADD_USAGE,
    );
    const name = requirePositional(positionals, 'actor NAME', ADD_USAGE);
    if (!values.skill || values.skill.length === 0)
      throw usageError('Give at least one --skill.', ADD_USAGE);
    // Any store of the checkpoint table that needs no more than its type; the others (a URL)
    // are written in the YAML. Loaded on use, like the schemas below.
    const stores = await (await import('../../runtime/agents-runtime.js')).checkpointStores();
    const flagTypes = stores.typeOnly;
    if (values.checkpointer !== undefined && !flagTypes.includes(values.checkpointer)) {
      const others = stores.backends
        .map((backend) => backend.type)
        .filter((type) => !flagTypes.includes(type));
      throw usageError(
        `--checkpointer ${values.checkpointer}: use ${flagTypes.join(' or ')}${others.length === 0 ? '' : ` (${others.join(', ')}: edit the YAML)`}.`,
        ADD_USAGE,
      );
    }
    const policyMode = values.policy;
    if (policyMode !== undefined && !isPolicyMode(policyMode))
      throw usageError(`--policy ${policyMode}: use ask, read-only or auto.`, ADD_USAGE);
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
      ...(values.checkpointer === undefined || values.checkpointer === stores.defaultType
        ? {}
        : // Checked above: a store that needs no more than its type.
          { checkpointer: { type: values.checkpointer } as CheckpointerSettings }),
      ...(policyMode === undefined ? {} : { policy: { mode: policyMode } }),
    };
    const { ActorSchema } = await import('../../config/actor-schema.js');
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
    const { planSkills } = await import('../../skills/skill-plan.js');
    const plan = await planSkills(store, values.skill);
    const script = await checkModel(store, name, values.model ?? 'scripted');
    if (script && values['no-validate'] !== true)
      await checkScriptToolNames(context, values.skill, script);
    const file = await store.put('actor', name, input, { overwrite: values.force === true });
    if (context.json)
      printJson(context.stdout, {
        name,
        file,
        actor: input,
        servers: plan.servers.map((server) => server.name),
        script: script?.file ?? null,
      });
    else
      println(
        context.stdout,
        `Added actor "${name}" (${file}); its skills use servers: ${plan.servers.map((server) => server.name).join(', ') || 'none'}` +
          `${script === undefined ? '' : `; model script: ${script.file}`}.`,
      );
    return 0;
  },
};
