import { randomUUID } from 'node:crypto';
import { parseCommandLine, requirePositional, usageError } from '../args.js';
import type { Command } from '../command.js';

const RUN_USAGE = `Usage: agents actor run NAME --input TEXT [--thread ID] [--max-turns N] [--keep-sandbox] [--no-prompt] [--by NAME] [--verbose] [--json]

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
  --max-turns N     model turns this run may take (default: the actor's maxTurns, 200); at the
                    limit the run stops, the thread is saved and the command exits with code 9;
                    go on with \`agents actor resume NAME --thread ID --continue\`
  --keep-sandbox    leave the sandbox folder in place to inspect the result
  --no-prompt       never ask; exit with code 8 when a call needs approval
  --by NAME         who answers approvals, recorded in the audit log (default: your user name)
  --verbose         also print what the servers write on stderr (problems, restarts and tool
                    list changes are always printed)
  --json            one JSON event per line (prompts go to stderr)`;

/** `agents actor run NAME --input TEXT`. */
export const actorRunCommand: Command = {
  path: ['actor', 'run'],
  summary: 'Run an actor on one input, streaming tool calls and asking for approvals',
  usage: RUN_USAGE,
  async run(context) {
    const { values, positionals } = parseCommandLine(
      context.argv,
      {
        input: { type: 'string' },
        thread: { type: 'string' },
        'max-turns': { type: 'string' },
        'keep-sandbox': { type: 'boolean' },
        'no-prompt': { type: 'boolean' },
        by: { type: 'string' },
        verbose: { type: 'boolean' },
      },
      RUN_USAGE,
    );
    const name = requirePositional(positionals, 'actor NAME', RUN_USAGE);
    // Loaded on use: the run's terminal output, prompts and the actor stay out of `--help`.
    const [{ defaultUser }, { driveRun, parseMaxTurns, withActiveCliActor }] = await Promise.all([
      import('./actor-answers.js'),
      import('./actor-session.js'),
    ]);
    if (values.input === undefined) throw usageError('--input is required.', RUN_USAGE);
    const input = values.input;
    const threadId = values.thread ?? randomUUID();
    const settings = {
      name,
      threadId,
      keepSandbox: values['keep-sandbox'] === true,
      verbose: values.verbose === true,
      maxTurns: parseMaxTurns(values['max-turns'], RUN_USAGE),
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
