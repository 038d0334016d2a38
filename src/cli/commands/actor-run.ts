import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { parseCommandLine, requirePositional, usageError, withOptionalValue } from '../args.js';
import type { Command } from '../command.js';

const RUN_USAGE = `Usage: agents actor run NAME --input TEXT [--thread ID] [--from worktree|head|REV] [--max-turns N] [--max-tool-calls N] [--max-time DURATION] [--keep-sandbox] [--record [PATH]] [--no-prompt] [--by NAME] [--verbose] [--json]

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
  --thread ID       conversation thread to continue; its sandbox is kept for later runs,
                    rollbacks and diffs (default: a new thread for this run only, whose sandbox
                    is removed at the end unless --keep-sandbox, or the run pauses to be resumed)
  --from WHAT       what the sandbox starts from (default: the actor's sandbox.from, worktree):
                    worktree = your files as they are now (uncommitted edits and untracked, not
                    ignored files included; your repo is only read), head = the last commit,
                    or a branch, tag or sha. A thread keeps the base of its first run.
  --max-turns N     model turns this run may take (default: the actor's maxTurns, 200); at the
                    limit the run stops, the thread is saved and the command exits with code 9;
                    go on with \`agents actor resume NAME --thread ID --continue\`
  --max-tool-calls N  tool calls this run may make (default: the actor's maxToolCalls, none);
                    checked before each model turn, then it stops as at --max-turns (exit 9)
  --max-time DURATION  wall time this run may take: 90s, 10m, 1h (default: the actor's maxTimeMs,
                    none); checked before each model turn, then it stops as at --max-turns (exit 9)
  --keep-sandbox    keep the sandbox of a run without --thread, to inspect the result (printed
                    at the end); a failed start never leaves a sandbox behind
  --record [PATH]   record the run into a cassette (model turns and MCP exchanges, secrets
                    masked, the sandbox written as .); the last line says \`cassette: PATH\`
                    (default PATH: THREAD.cassette.jsonl here). See docs/replay.md
  --no-prompt       never ask; exit with code 8 when a call needs approval
  --by NAME         who answers approvals, recorded in the audit log (default: your user name)
  --verbose         also print what the servers write on stderr (problems, restarts and tool
                    list changes are always printed)
  --json            one JSON event per line (prompts go to stderr)`;

/** `agents actor run NAME --input TEXT`. */
export const actorRunCommand: Command = {
  path: ['actor', 'run'],
  usage: RUN_USAGE,
  async run(context) {
    const { values, positionals } = parseCommandLine(
      // `--record` takes an optional PATH: alone (or before another option) it means the default.
      withOptionalValue(context.argv, '--record'),
      {
        input: { type: 'string' },
        thread: { type: 'string' },
        from: { type: 'string' },
        'max-turns': { type: 'string' },
        'max-tool-calls': { type: 'string' },
        'max-time': { type: 'string' },
        'keep-sandbox': { type: 'boolean' },
        record: { type: 'string' },
        'no-prompt': { type: 'boolean' },
        by: { type: 'string' },
        verbose: { type: 'boolean' },
      },
      RUN_USAGE,
    );
    const name = requirePositional(positionals, 'actor NAME', RUN_USAGE);
    // Loaded on use: the run's terminal output, prompts and the actor stay out of `--help`.
    const [{ defaultUser }, { driveRun, parseRunLimits, withActiveCliActor }] = await Promise.all([
      import('./actor-answers.js'),
      import('./actor-session.js'),
    ]);
    if (values.input === undefined) throw usageError('--input is required.', RUN_USAGE);
    if (values.from === '')
      throw usageError('--from needs worktree, head or a revision.', RUN_USAGE);
    const input = values.input;
    const threadId = values.thread ?? randomUUID();
    const recordTo =
      values.record === undefined
        ? undefined
        : resolve(context.cwd, values.record || `${threadId}.cassette.jsonl`);
    const settings = {
      name,
      threadId,
      ephemeralThread: values.thread === undefined,
      keepSandbox: values['keep-sandbox'] === true,
      verbose: values.verbose === true,
      limits: parseRunLimits(values, RUN_USAGE),
      from: values.from,
      // Also when not asked here: `record:` in the actor's YAML may ask for it.
      recordRun: { mode: 'run' as const, input },
      ...(recordTo === undefined ? {} : { recordTo }),
    };
    return withActiveCliActor(context, settings, (actor, paused) =>
      driveRun(context, actor, actor.run(input, { threadId, signal: context.signal }), {
        name,
        threadId,
        prompt: values['no-prompt'] !== true,
        by: values.by ?? defaultUser(),
        paused,
      }),
    );
  },
};
