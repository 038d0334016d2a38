import { resolve } from 'node:path';
import { AgentsError, AgentsErrorCode, errorMessage } from '../../errors.js';
import type { ApprovalResponse } from '../../policy/approval.js';
import { parseCommandLine, requirePositional, usageError } from '../args.js';
import type { Command } from '../command.js';
import { formatApprovalPreview } from '../../policy/terminal-approval.js';
import { answerInputRequest } from '../../policy/input-answer.js';
import type { ElicitAnswer, InputRequestPreview } from '../../policy/input-requests.js';
import { formatInputRequestPreview } from '../../policy/terminal-input.js';
import { println } from '../output.js';

const RESUME_USAGE = `Usage: agents actor resume NAME --thread ID (--approve | --reject MESSAGE | --edit JSON | --answer JSON | --decline | --continue) [options]

Answers the approval a paused run waits for and continues the run (the same as answering the
prompt of \`agents actor run\`). With several calls waiting, --approve and --reject answer all of
them; --edit needs exactly one. If the run pauses again, you are asked on stdin as in
\`agents actor run\` (or it exits with code 8 again). A run that stopped at its turn limit
or a budget (exit code 9) goes on with --continue, for up to --max-turns more turns, with its
tool-call and time budgets counted afresh. A run that ended mid-way (its process killed during a
call, a server crash, a login needed: exit code 5) also goes on with --continue, from its last
checkpoint: the call that did not finish runs again (once; a write call passes the policy again,
so an approval given before is asked again), and what the killed call left in the sandbox is
discarded (kept in a safety snapshot); a call that had become a task on its server (MCP Tasks)
follows that task instead of calling the tool again. What runs again is printed on stderr first.
A run paused because a server asked a question before running a tool (MCP 2026-07-28
input_required) is answered with --answer (the form's fields as a JSON object; a completion the
server asked for: '{"text":"..."}') or --decline; the call is then sent again with the answer and
the tool runs once.

Options:
  --thread ID       the paused thread (printed by \`agents actor run\`)
  --record [PATH]   record what this resume runs into a cassette, as \`agents actor run --record\`
                    (default PATH: THREAD.cassette.jsonl here). See docs/replay.md
  --approve         run the call as the model asked
  --reject MESSAGE  do not run it; the message is given to the model (may be "")
  --edit JSON       run it with these arguments instead (a JSON object)
  --answer JSON     answer a server's question: the form's fields, e.g. '{"confirm":true}'
                    (with several questions in one call: an object keyed by question)
  --decline         decline a server's question (the server decides what that means)
  --continue        go on with a run that stopped at its turn limit or a budget, or that
                    ended mid-way (killed, crashed, a login needed): from its last checkpoint
  --max-turns N     model turns the continued run may take (default: the actor's maxTurns)
  --max-tool-calls N  tool calls it may make (default: the actor's maxToolCalls)
  --max-time DURATION  wall time it may take: 90s, 10m, 1h (default: the actor's maxTimeMs)
  --by NAME         who answered, recorded in the audit log (default: your user name)
  --keep-sandbox    leave the sandbox folder in place to inspect the result
  --no-prompt       never ask for later approvals; exit with code 8 instead
  --verbose         also print what the servers write on stderr
  --json            one JSON event per line`;

function parseJsonObject(text: string, flag: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw usageError(`${flag} is not valid JSON (${errorMessage(error)}).`, RESUME_USAGE);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw usageError(`${flag} must be a JSON object.`, RESUME_USAGE);
  return value as Record<string, unknown>;
}

/**
 * The answers of `--answer` / `--decline` to one call's questions: the fields as the content of
 * its one question, or (several questions) an object keyed by question.
 */
function inputAnswers(
  preview: InputRequestPreview,
  fields: Record<string, unknown> | undefined,
): Record<string, ElicitAnswer> {
  const answers: Record<string, ElicitAnswer> = {};
  const [only] = preview.questions;
  if (fields === undefined) {
    for (const question of preview.questions) answers[question.key] = { action: 'decline' };
  } else if (preview.questions.length === 1 && only !== undefined) {
    answers[only.key] = { action: 'accept', content: fields };
  } else {
    for (const question of preview.questions) {
      const content = fields[question.key];
      if (typeof content !== 'object' || content === null || Array.isArray(content))
        throw usageError(
          `${preview.toolId} asks ${preview.questions.length} questions (${preview.questions.map((q) => q.key).join(', ')}); give --answer as an object with one object of fields per question.`,
          RESUME_USAGE,
        );
      answers[question.key] = { action: 'accept', content: content as Record<string, unknown> };
    }
  }
  return answers;
}

/** `agents actor resume NAME --thread ID ...`. */
export const actorResumeCommand: Command = {
  path: ['actor', 'resume'],
  usage: RESUME_USAGE,
  async run(context) {
    // `--record` takes an optional PATH: alone (or before another option) it means the default.
    const argv = [...context.argv];
    const at = argv.indexOf('--record');
    if (at !== -1 && (argv[at + 1] === undefined || argv[at + 1]!.startsWith('-'))) {
      argv.splice(at + 1, 0, '');
    }
    const { values, positionals } = parseCommandLine(
      argv,
      {
        record: { type: 'string' },
        thread: { type: 'string' },
        approve: { type: 'boolean' },
        reject: { type: 'string' },
        edit: { type: 'string' },
        answer: { type: 'string' },
        decline: { type: 'boolean' },
        continue: { type: 'boolean' },
        'max-turns': { type: 'string' },
        'max-tool-calls': { type: 'string' },
        'max-time': { type: 'string' },
        by: { type: 'string' },
        'keep-sandbox': { type: 'boolean' },
        'no-prompt': { type: 'boolean' },
        verbose: { type: 'boolean' },
      },
      RESUME_USAGE,
    );
    const name = requirePositional(positionals, 'actor NAME', RESUME_USAGE);
    // Loaded on use: the run's terminal output, prompts and the actor stay out of `--help`.
    const [{ defaultUser }, { driveRun, parseRunLimits, withActiveCliActor }] = await Promise.all([
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
      values.answer !== undefined,
      values.decline === true,
      values.continue === true,
    ];
    if (chosen.filter(Boolean).length !== 1)
      throw usageError(
        'Give exactly one of --approve, --reject MESSAGE, --edit JSON, --answer JSON, --decline, --continue.',
        RESUME_USAGE,
      );
    const answerFields =
      values.answer === undefined ? undefined : parseJsonObject(values.answer, '--answer');
    const by = values.by ?? defaultUser();
    const answer: ApprovalResponse =
      values.edit !== undefined
        ? { type: 'edit', args: parseJsonObject(values.edit, '--edit'), by }
        : values.reject !== undefined
          ? values.reject === ''
            ? { type: 'reject', by }
            : { type: 'reject', message: values.reject, by }
          : { type: 'approve', by };

    const { pendingApprovalsOf, pendingInputsOf, toResumeValue } =
      await import('../../actors/approvals.js');
    const settings = {
      name,
      threadId,
      keepSandbox: values['keep-sandbox'] === true,
      verbose: values.verbose === true,
      limits: parseRunLimits(values, RESUME_USAGE),
      recordRun: { mode: 'continue' as const },
      ...(values.record === undefined
        ? {}
        : { recordTo: resolve(context.cwd, values.record || `${threadId}.cassette.jsonl`) }),
    };
    const prompt = values['no-prompt'] !== true;
    return withActiveCliActor(context, settings, async (actor) => {
      const state = await actor.graph.getState({ configurable: { thread_id: threadId } });
      if (values.continue === true) {
        const { turnLimitPauseOf } = await import('../../actors/turn-limit.js');
        const interrupts = state.tasks.flatMap((task) => task.interrupts);
        const stopped = turnLimitPauseOf(interrupts);
        // Paused for an approval: that needs an answer, not --continue.
        const waiting = stopped === undefined && interrupts.length > 0;
        // A run that ended mid-way (killed, a crash, a login needed) has steps left to run.
        // Killed after a step's tasks saved their results but before its checkpoint was written,
        // `next` is empty (LangGraph lists only tasks without results) while the step's tasks
        // are still there: that run did not finish either (#38 item 9).
        const unfinished =
          stopped === undefined && !waiting && (state.next.length > 0 || state.tasks.length > 0);
        if (stopped === undefined && !unfinished) {
          throw new AgentsError(
            AgentsErrorCode.CheckpointNotFound,
            waiting
              ? `Thread "${threadId}" of actor "${name}" waits for an answer: an approval (--approve, --reject MESSAGE or --edit JSON) or a server's question (--answer JSON or --decline).`
              : `Thread "${threadId}" of actor "${name}" finished its last run, so there is nothing to continue; ` +
                  `start a run with \`agents actor run ${name} --thread ${threadId} --input TEXT\`.`,
            { details: { actor: name, threadId } },
          );
        }
        if (unfinished) {
          // Before anything runs: which calls run again (never completed) and which are kept.
          // On stderr also with --json: stdout carries only the run's events.
          // A call noted as an MCP task (the actor's store) follows that task, not called again.
          const { planResume, withNotedTasks, describeResumePlan } =
            await import('../../thread/resume-plan.js');
          const plan = await withNotedTasks(planResume(state), actor.graph.store, threadId);
          println(context.stderr, describeResumePlan(plan, threadId));
        }
        return driveRun(
          context,
          actor,
          actor.resume({ type: 'continue' }, { threadId, signal: context.signal }),
          { name, threadId, prompt, by },
        );
      }
      const interrupts = state.tasks.flatMap((task) => task.interrupts);
      const pending = pendingApprovalsOf(interrupts);
      const inputs = pendingInputsOf(interrupts);
      const answering = values.answer !== undefined || values.decline === true;
      if (answering || (pending.length === 0 && inputs.length > 0)) {
        if (!answering || inputs.length === 0 || pending.length > 0) {
          throw new AgentsError(
            AgentsErrorCode.CheckpointNotFound,
            inputs.length === 0
              ? `Thread "${threadId}" of actor "${name}" has no question from a server waiting; --answer and --decline answer those.`
              : pending.length > 0
                ? `Thread "${threadId}" of actor "${name}" waits for approvals and server questions together; answer the approvals first (--approve, --reject MESSAGE), then the questions.`
                : `Thread "${threadId}" of actor "${name}" waits for the answer to a server's question; answer it with --answer JSON or --decline.`,
            { details: { actor: name, threadId } },
          );
        }
        const given = inputs.map((item) =>
          answerInputRequest(item.preview, inputAnswers(item.preview, answerFields), by),
        );
        if (!context.json)
          for (const item of inputs)
            println(
              context.stdout,
              `${formatInputRequestPreview(item.preview)}\n  answer: ${answerFields === undefined ? 'decline' : JSON.stringify(answerFields)} (by ${by})`,
            );
        return driveRun(
          context,
          actor,
          actor.resume(toResumeValue(inputs, given), { threadId, signal: context.signal }),
          { name, threadId, prompt, by },
        );
      }
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
          // With questions waiting too, a map by interrupt id says which interrupts are answered.
          inputs.length > 0
            ? Object.fromEntries(pending.map((item) => [item.interruptId ?? '', answer]))
            : toResumeValue(
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
