import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { PassThrough, Writable } from 'node:stream';
// The actor module and the approval helpers (zod) are imported on use: `--help` stays fast.
import type { ActorInstance, ActorRunEvent, PendingApproval } from '../../actors/actor.js';
import type { ScriptedStep } from '../../actors/scripted-model.js';
import { AgentsError, AgentsErrorCode, errorMessage } from '../../errors.js';
import type { ApprovalPreview, ApprovalResponse } from '../../policy/approval.js';
import type { ServerLogger } from '../../servers/server-logger.js';
import { formatApprovalPreview, promptForApproval } from '../../policy/terminal-approval.js';
import { parseCommandLine, requirePositional, storeOf, usageError } from '../args.js';
import { createRemoveCommand } from '../remove-command.js';
import type { Command, CommandContext } from '../command.js';
import { createListCommand } from '../list-command.js';
import { ExitCode } from '../exit-codes.js';
import { printJson, println, shellQuote } from '../output.js';
import { createRunOutput } from '../run-output.js';

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
        policy: { type: 'string' },
        'no-validate': { type: 'boolean' },
        force: { type: 'boolean' },
      },
      ADD_USAGE,
    );
    const name = requirePositional(positionals, 'actor NAME', ADD_USAGE);
    if (!values.skill || values.skill.length === 0)
      throw usageError('Give at least one --skill.', ADD_USAGE);
    if (
      values.checkpointer !== undefined &&
      values.checkpointer !== 'sqlite' &&
      values.checkpointer !== 'memory'
    ) {
      throw usageError(
        `--checkpointer ${values.checkpointer}: use sqlite or memory (postgres: edit the YAML).`,
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
      ...(values.checkpointer === 'memory' ? { checkpointer: { type: 'memory' as const } } : {}),
      ...(policyMode === undefined ? {} : { policy: { mode: policyMode } }),
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

const LIST_USAGE = `Usage: agents actor list [--json]

Lists the actors of the workspace.`;

const actorList = createListCommand({
  kind: 'actor',
  path: ['actor', 'list'],
  summary: 'List actors',
  usage: LIST_USAGE,
  jsonKey: 'actors',
  headers: ['NAME', 'SKILLS', 'MODEL', 'SANDBOX', 'DESCRIPTION'],
  rows: (records) =>
    records.map((record) => [
      record.name,
      record.value.skills.join(','),
      record.value.model,
      record.value.sandbox.enabled ? record.value.sandbox.source : 'off',
      record.value.description,
    ]),
});

const RUN_USAGE = `Usage: agents actor run NAME --input TEXT [--thread ID] [--from worktree|head|REV] [--max-turns N] [--keep-sandbox] [--no-prompt] [--by NAME] [--verbose] [--json]

Activates the actor (starts its servers and sandbox), runs the input, prints tool calls and
results as they happen, then deactivates, also on Ctrl-C.

When the safety policy asks for approval (mode ask, the default), the call is shown with its
arguments, capability verdicts and the rule that asked, and you answer approve / edit / reject.
Answers are read from stdin, a terminal or a pipe, one per line: a (approve), r or r MESSAGE
(reject, the message goes to the model), e JSON (run with these arguments instead); a bare r or
e reads the message or the JSON from the next line. Without an answer (stdin closed, or --no-prompt)
the run stays paused: the command names the thread and exits with code 8; answer later with
\`agents actor resume\`.

Options:
  --input TEXT      the user message
  --thread ID       conversation thread to continue (default: a new one, printed at the end)
  --from WHAT       what the sandbox starts from (default: the actor's sandbox.from, worktree):
                    worktree = your files as they are now (uncommitted edits and untracked, not
                    ignored files included; your repo is only read), head = the last commit,
                    or a branch, tag or sha. A thread keeps the base of its first run.
  --max-turns N     model turns this run may take (default: the actor's maxTurns, 200); at the
                    limit the run stops, the thread is saved and the command exits with code 9;
                    go on with \`agents actor resume NAME --thread ID --continue\`
  --keep-sandbox    leave the sandbox folder in place to inspect the result
  --no-prompt       never ask; exit with code 8 when a call needs approval
  --by NAME         who answers approvals, recorded in the audit log (default: your user name)
  --verbose         also print what the servers write on stderr (problems, restarts and tool
                    list changes are always printed)
  --json            one JSON event per line (prompts go to stderr)`;

const RESUME_USAGE = `Usage: agents actor resume NAME --thread ID (--approve | --reject MESSAGE | --edit JSON | --continue) [options]

Answers the approval a paused run waits for and continues the run (the same as answering the
prompt of \`agents actor run\`). With several calls waiting, --approve and --reject answer all of
them; --edit needs exactly one. If the run pauses again, you are asked on stdin as in
\`agents actor run\` (or it exits with code 8 again). A run that stopped at its turn limit
(exit code 9) goes on with --continue, for up to --max-turns more turns.

Options:
  --thread ID       the paused thread (printed by \`agents actor run\`)
  --approve         run the call as the model asked
  --reject MESSAGE  do not run it; the message is given to the model (may be "")
  --edit JSON       run it with these arguments instead (a JSON object)
  --continue        go on with a run that stopped at its turn limit
  --max-turns N     model turns the continued run may take (default: the actor's maxTurns)
  --by NAME         who answered, recorded in the audit log (default: your user name)
  --keep-sandbox    leave the sandbox folder in place to inspect the result
  --no-prompt       never ask for later approvals; exit with code 8 instead
  --verbose         also print what the servers write on stderr
  --json            one JSON event per line`;

function defaultUser(): string {
  try {
    return userInfo().username || 'user';
  } catch {
    // No passwd entry (some containers): the policy's default name.
    return 'user';
  }
}

/**
 * Approval answers read line by line from one stream for the whole command. `promptForApproval`
 * opens a readline per question, which would swallow the rest of a piped chunk when it closes,
 * so each prompt reads from its own stream, fed one line each time it asks a question.
 */
interface AnswerSource {
  /** True when an answer can be read (a terminal, or a pipe that has a line left). */
  hasInput(): Promise<boolean>;
  ask(preview: ApprovalPreview): Promise<ApprovalResponse>;
  close(): void;
}

/** `promise`, or a rejection with the signal's reason as soon as `signal` aborts. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  signal.throwIfAborted();
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

function createAnswerSource(context: CommandContext, by: string): AnswerSource {
  const stdin = context.stdin as NodeJS.ReadableStream & { isTTY?: boolean };
  const output = context.json ? context.stderr : context.stdout;
  let reader: ReturnType<typeof createInterface> | undefined;
  let lines: AsyncIterator<string> | undefined;
  const buffered: string[] = [];
  let ended = false;
  const next = async (): Promise<string | undefined> => {
    const held = buffered.shift();
    if (held !== undefined) return held;
    if (ended) return undefined;
    reader ??= createInterface({ input: stdin, terminal: false });
    lines ??= reader[Symbol.asyncIterator]();
    // A pipe may never send another line; Ctrl-C must still end the wait.
    const result = await untilAborted(lines.next(), context.signal);
    if (result.done === true) {
      ended = true;
      return undefined;
    }
    return result.value;
  };
  return {
    async hasInput() {
      // A terminal may answer later; reading ahead would hide the question behind the wait.
      if (stdin.isTTY === true) return true;
      if (buffered.length === 0 && !ended)
        println(
          context.stderr,
          'Waiting for approval answers on stdin (not a terminal); close stdin or pass --no-prompt to stop here and resume later.',
        );
      const line = await next();
      if (line === undefined) return false;
      buffered.unshift(line);
      return true;
    },
    ask(preview) {
      const input = new PassThrough();
      const questions = new Writable({
        write(chunk: Buffer | string, _encoding, done) {
          const text = String(chunk);
          output.write(text);
          // A write without a newline is a question: hand the prompt the next line.
          if (!text.endsWith('\n')) {
            // Ctrl-C rejects the wait; the prompt sees its own abort, so just end its input.
            next().then(
              (line) => {
                if (line === undefined) input.end();
                else input.write(`${line}\n`);
              },
              () => input.end(),
            );
          }
          done();
        },
      });
      return promptForApproval(preview, {
        input,
        output: questions,
        user: by,
        signal: context.signal,
      });
    },
    close() {
      reader?.close();
    },
  };
}

function printResumeHint(
  context: CommandContext,
  name: string,
  threadId: string,
  pending: readonly PendingApproval[],
): void {
  const base = `agents actor resume ${shellQuote(name)} --thread ${shellQuote(threadId)}`;
  const lines = [
    `Paused on thread ${threadId}: ${pending.map((item) => item.preview.toolId).join(', ') || 'an interrupt'} waits for approval.`,
    'Answer with one of:',
    `  ${base} --approve`,
    `  ${base} --reject "why not"`,
  ];
  const first = pending[0];
  if (pending.length === 1 && first !== undefined)
    lines.push(`  ${base} --edit ${shellQuote(JSON.stringify(first.preview.args))}`);
  if (context.json) {
    context.stdout.write(
      `${JSON.stringify({
        type: 'paused',
        threadId,
        approvals: pending.map((item) => item.preview),
        resume: `${base} --approve|--reject MESSAGE|--edit JSON`,
      })}\n`,
    );
  }
  println(context.stderr, lines.join('\n'));
}

function printContinueHint(context: CommandContext, name: string, threadId: string): void {
  const command = `agents actor resume ${shellQuote(name)} --thread ${shellQuote(threadId)} --continue`;
  if (context.json)
    context.stdout.write(
      `${JSON.stringify({ type: 'stopped', reason: 'turn-limit', threadId, resume: command })}\n`,
    );
  println(context.stderr, `Thread ${threadId} is saved; go on with:\n  ${command} [--max-turns N]`);
}

/** `--max-turns N` as a number; a usage error unless a whole number from 1 to 100,000. */
function parseMaxTurns(text: string | undefined, usage: string): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  if (!/^\d+$/.test(text.trim()) || value < 1 || value > 100_000)
    throw usageError(`--max-turns ${text}: give a whole number from 1 to 100000.`, usage);
  return value;
}

/**
 * Prints a run's events; when it pauses for approval, asks (stdin) and resumes, until the run
 * ends (0) or an approval stays unanswered (8, with how to resume).
 */
async function driveRun(
  context: CommandContext,
  actor: ActorInstance,
  first: AsyncGenerator<ActorRunEvent, void, undefined>,
  settings: { name: string; threadId: string; prompt: boolean; by: string },
): Promise<number> {
  const answers = createAnswerSource(context, settings.by);
  const output = createRunOutput(context);
  try {
    let events = first;
    for (;;) {
      const pending: PendingApproval[] = [];
      let otherInterrupt = false;
      let turnLimit = false;
      for await (const event of events) {
        output.event(event);
        if (event.type === 'turn-limit') turnLimit = true;
        if (event.type !== 'interrupt') continue;
        if (event.approvals && event.approvals.length > 0) pending.push(...event.approvals);
        else otherInterrupt = true;
      }
      // Ctrl-C can land just as the run pauses: the user asked to stop, not to be asked.
      context.signal.throwIfAborted();
      if (turnLimit) {
        printContinueHint(context, settings.name, settings.threadId);
        return ExitCode.TurnLimit;
      }
      if (pending.length === 0 && !otherInterrupt) return ExitCode.Ok;
      const given: ApprovalResponse[] = [];
      try {
        if (otherInterrupt || !settings.prompt || !(await answers.hasInput())) {
          printResumeHint(context, settings.name, settings.threadId, pending);
          return ExitCode.Policy;
        }
        for (const item of pending) given.push(await answers.ask(item.preview));
      } catch (error) {
        // Ctrl-C at the prompt: the run stays paused on its thread, so say how to go on.
        if (context.signal.aborted)
          printResumeHint(context, settings.name, settings.threadId, pending);
        throw error;
      }
      const { toResumeValue } = await import('../../actors/approvals.js');
      events = actor.resume(toResumeValue(pending, given), {
        threadId: settings.threadId,
        signal: context.signal,
      });
    }
  } finally {
    output.close();
    answers.close();
  }
}

function printEnd(context: CommandContext, threadId: string, actor: ActorInstance, keep: boolean) {
  const sandbox = keep && actor.sandbox ? actor.sandbox.root : undefined;
  if (context.json)
    context.stdout.write(
      `${JSON.stringify({ type: 'end', threadId, ...(sandbox ? { sandbox } : {}) })}\n`,
    );
  else println(context.stderr, `thread: ${threadId}${sandbox ? ` sandbox: ${sandbox}` : ''}`);
}

/**
 * Server problems (warnings, errors) always go to stderr; with `--verbose` also what servers
 * print on their stderr and other lifecycle notes.
 */
function cliServerLogger(context: CommandContext, verbose: boolean): ServerLogger {
  const line = (message: string) => println(context.stderr, `server: ${message}`);
  return {
    debug: verbose ? line : () => {},
    info: verbose ? line : () => {},
    warn: line,
    error: line,
  };
}

/**
 * Prints restarts and tool-list changes of the actor's servers while it runs, so a crash or a
 * new tool is visible in the terminal. Returns the unsubscribe function.
 */
function watchServers(context: CommandContext, actor: ActorInstance): () => void {
  const servers = actor.servers();
  const say = (message: string) => println(context.stderr, `server: ${message}`);
  const stops = [
    servers.on('server-restart', (event) =>
      say(
        // The cause itself was just logged (with the server's last stderr lines).
        `"${event.serverName}" stopped; restart ${event.attempt}/${event.maxAttempts} in ${event.delayMs} ms`,
      ),
    ),
    servers.on('server-start', (event) => {
      if (event.restart)
        say(`"${event.serverName}" is back${event.pid === undefined ? '' : ` (pid ${event.pid})`}`);
    }),
    servers.on('tools-changed', (event) => {
      const parts = [
        ...event.added.map((id) => `+${id}`),
        ...event.removed.map((id) => `-${id}`),
        ...event.changed.map((id) => `~${id}`),
      ];
      if (parts.length > 0)
        say(`"${event.serverName}" tools changed (${event.reason}): ${parts.join(' ')}`);
    }),
  ];
  return () => {
    for (const stop of stops) stop();
  };
}

/**
 * Runs `work` with the workspace's actor for one thread activated (warnings and server events
 * on stderr), then deactivates it, also on Ctrl-C: the abort ends the run's stream, and servers
 * and sandbox go away here.
 */
async function withActiveCliActor(
  context: CommandContext,
  settings: {
    name: string;
    threadId: string;
    keepSandbox: boolean;
    verbose: boolean;
    maxTurns: number | undefined;
    from?: string | undefined;
  },
  work: (actor: ActorInstance) => Promise<number>,
): Promise<number> {
  // Loaded on use: LangGraph and the servers are heavy, and `--help` should be quick.
  const { createActor } = await import('../../actors/actor.js');
  const actor = await createActor({
    name: settings.name,
    workspace: storeOf(context),
    threadId: settings.threadId,
    keepSandbox: settings.keepSandbox,
    ...(settings.from === undefined ? {} : { sandboxFrom: settings.from }),
    ...(settings.maxTurns === undefined ? {} : { maxTurns: settings.maxTurns }),
    logger: cliServerLogger(context, settings.verbose),
    onWarning: (message) => println(context.stderr, `warning: ${message}`),
  });
  let unwatch: (() => void) | undefined;
  try {
    await actor.activate({ signal: context.signal });
    unwatch = watchServers(context, actor);
    const code = await work(actor);
    printEnd(context, settings.threadId, actor, settings.keepSandbox);
    return code;
  } finally {
    unwatch?.();
    await actor.deactivate();
  }
}

const actorRun: Command = {
  path: ['actor', 'run'],
  summary: 'Run an actor on one input, streaming tool calls and asking for approvals',
  usage: RUN_USAGE,
  async run(context) {
    const { values, positionals } = parseCommandLine(
      context.argv,
      {
        input: { type: 'string' },
        thread: { type: 'string' },
        from: { type: 'string' },
        'max-turns': { type: 'string' },
        'keep-sandbox': { type: 'boolean' },
        'no-prompt': { type: 'boolean' },
        by: { type: 'string' },
        verbose: { type: 'boolean' },
      },
      RUN_USAGE,
    );
    const name = requirePositional(positionals, 'actor NAME', RUN_USAGE);
    if (values.input === undefined) throw usageError('--input is required.', RUN_USAGE);
    if (values.from === '')
      throw usageError('--from needs worktree, head or a revision.', RUN_USAGE);
    const input = values.input;
    const threadId = values.thread ?? randomUUID();
    const settings = {
      name,
      threadId,
      keepSandbox: values['keep-sandbox'] === true,
      verbose: values.verbose === true,
      maxTurns: parseMaxTurns(values['max-turns'], RUN_USAGE),
      from: values.from,
    };
    return withActiveCliActor(context, settings, (actor) =>
      driveRun(context, actor, actor.run(input, { threadId, signal: context.signal }), {
        name,
        threadId,
        prompt: values['no-prompt'] !== true,
        by: values.by ?? defaultUser(),
      }),
    );
  },
};

function parseEditArgs(text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw usageError(`--edit is not valid JSON (${errorMessage(error)}).`, RESUME_USAGE);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw usageError('--edit must be a JSON object of arguments.', RESUME_USAGE);
  return value as Record<string, unknown>;
}

const actorResume: Command = {
  path: ['actor', 'resume'],
  summary: 'Answer a paused approval (approve, reject or edit) and continue the run',
  usage: RESUME_USAGE,
  async run(context) {
    const { values, positionals } = parseCommandLine(
      context.argv,
      {
        thread: { type: 'string' },
        approve: { type: 'boolean' },
        reject: { type: 'string' },
        edit: { type: 'string' },
        continue: { type: 'boolean' },
        'max-turns': { type: 'string' },
        by: { type: 'string' },
        'keep-sandbox': { type: 'boolean' },
        'no-prompt': { type: 'boolean' },
        verbose: { type: 'boolean' },
      },
      RESUME_USAGE,
    );
    const name = requirePositional(positionals, 'actor NAME', RESUME_USAGE);
    const threadId = values.thread;
    if (threadId === undefined || threadId === '')
      throw usageError('--thread is required.', RESUME_USAGE);
    const chosen = [
      values.approve === true,
      values.reject !== undefined,
      values.edit !== undefined,
      values.continue === true,
    ];
    if (chosen.filter(Boolean).length !== 1)
      throw usageError(
        'Give exactly one of --approve, --reject MESSAGE, --edit JSON, --continue.',
        RESUME_USAGE,
      );
    const by = values.by ?? defaultUser();
    const answer: ApprovalResponse =
      values.edit !== undefined
        ? { type: 'edit', args: parseEditArgs(values.edit), by }
        : values.reject !== undefined
          ? values.reject === ''
            ? { type: 'reject', by }
            : { type: 'reject', message: values.reject, by }
          : { type: 'approve', by };

    const { pendingApprovalsOf, toResumeValue } = await import('../../actors/actor.js');
    const settings = {
      name,
      threadId,
      keepSandbox: values['keep-sandbox'] === true,
      verbose: values.verbose === true,
      maxTurns: parseMaxTurns(values['max-turns'], RESUME_USAGE),
    };
    const prompt = values['no-prompt'] !== true;
    return withActiveCliActor(context, settings, async (actor) => {
      const state = await actor.graph.getState({ configurable: { thread_id: threadId } });
      if (values.continue === true) {
        const { turnLimitPauseOf } = await import('../../actors/turn-limit.js');
        const stopped = turnLimitPauseOf(state.tasks.flatMap((task) => task.interrupts));
        if (stopped === undefined) {
          throw new AgentsError(
            AgentsErrorCode.CheckpointNotFound,
            `Thread "${threadId}" of actor "${name}" did not stop at its turn limit, so there is nothing to continue; ` +
              `start a run with \`agents actor run ${name} --thread ${threadId} --input TEXT\`.`,
            { details: { actor: name, threadId } },
          );
        }
        return driveRun(
          context,
          actor,
          actor.resume({ type: 'continue' }, { threadId, signal: context.signal }),
          { name, threadId, prompt, by },
        );
      }
      const pending = pendingApprovalsOf(state.tasks.flatMap((task) => task.interrupts));
      if (pending.length === 0) {
        throw new AgentsError(
          AgentsErrorCode.CheckpointNotFound,
          `Thread "${threadId}" of actor "${name}" is not waiting for an approval; ` +
            `start a run with \`agents actor run ${name} --thread ${threadId} --input TEXT\`.`,
          { details: { actor: name, threadId } },
        );
      }
      if (answer.type === 'edit' && pending.length > 1) {
        throw usageError(
          `${pending.length} calls wait on thread ${threadId} (${pending
            .map((item) => item.preview.toolId)
            .join(', ')}); --edit answers one. Use --approve or --reject, or answer on a terminal.`,
          RESUME_USAGE,
        );
      }
      if (!context.json)
        for (const item of pending)
          println(
            context.stdout,
            `${formatApprovalPreview(item.preview)}\n  answer: ${answer.type} (by ${by})`,
          );
      return driveRun(
        context,
        actor,
        actor.resume(
          toResumeValue(
            pending,
            pending.map(() => answer),
          ),
          { threadId, signal: context.signal },
        ),
        { name, threadId, prompt: values['no-prompt'] !== true, by },
      );
    });
  },
};

/** `agents actor add|list|run|resume`. */
export const actorCommands: readonly Command[] = [
  actorAdd,
  actorList,
  actorRun,
  actorResume,
  // Nothing refers to an actor; its threads' sandboxes stay until `agents sandbox remove`.
  createRemoveCommand('actor', () => Promise.resolve([])),
];
