import { AgentsError, AgentsErrorCode, errorMessage } from '../../errors.js';
import type { ApprovalResponse } from '../../policy/approval.js';
import { parseCommandLine, requirePositional, usageError } from '../args.js';
import type { Command } from '../command.js';
import { formatApprovalPreview } from '../../policy/terminal-approval.js';
import { println } from '../output.js';

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

/** `agents actor resume NAME --thread ID ...`. */
export const actorResumeCommand: Command = {
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
    // Loaded on use: the run's terminal output, prompts and the actor stay out of `--help`.
    const [{ defaultUser }, { driveRun, parseMaxTurns, withActiveCliActor }] = await Promise.all([
      import('./actor-answers.js'),
      import('./actor-session.js'),
    ]);
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
