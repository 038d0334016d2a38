/*
 * What an actor run prints when it stops or ends, for `agents actor run|resume` and `agents chat`:
 * how to go on after a pause for approval or input, a turn limit or a login, and the end line
 * (thread, kept sandbox). Apart from actor-session.ts, which drives the run and its actor, so the
 * wording and JSON of every way a run stops read in one place.
 */
import type { ActorInstance } from '../../actors/actor-types.js';
import type { PendingApproval, PendingInput } from '../../actors/approvals.js';
import type { AgentsError } from '../../errors.js';
import type { CommandContext } from '../command.js';
import { println, shellQuote } from '../output.js';
import { formatInputRequestPreview } from '../../policy/terminal-input.js';

/** Paused for approval or input: how to answer with `agents actor resume`. */
export function printResumeHint(
  context: CommandContext,
  name: string,
  threadId: string,
  pending: readonly PendingApproval[],
  inputs: readonly PendingInput[] = [],
): void {
  const base = `agents actor resume ${shellQuote(name)} --thread ${shellQuote(threadId)}`;
  const lines: string[] = [];
  if (pending.length > 0 || inputs.length === 0) {
    lines.push(
      `Paused on thread ${threadId}: ${pending.map((item) => item.preview.toolId).join(', ') || 'an interrupt'} waits for approval.`,
      'Answer with one of:',
      `  ${base} --approve`,
      `  ${base} --reject "why not"`,
    );
    const first = pending[0];
    if (pending.length === 1 && first !== undefined)
      lines.push(`  ${base} --edit ${shellQuote(JSON.stringify(first.preview.args))}`);
  }
  if (inputs.length > 0) {
    lines.push(
      `Paused on thread ${threadId}: the server of ${inputs.map((item) => item.preview.toolId).join(', ')} asks before running it:`,
    );
    for (const item of inputs) lines.push(formatInputRequestPreview(item.preview));
    lines.push(
      'Answer with one of (the form fields as a JSON object):',
      `  ${base} --answer JSON`,
      `  ${base} --decline`,
    );
  }
  if (context.json) {
    context.stdout.write(
      `${JSON.stringify({
        type: 'paused',
        threadId,
        approvals: pending.map((item) => item.preview),
        ...(inputs.length === 0 ? {} : { questions: inputs.map((item) => item.preview) }),
        resume:
          inputs.length === 0
            ? `${base} --approve|--reject MESSAGE|--edit JSON`
            : pending.length === 0
              ? `${base} --answer JSON|--decline`
              : `${base} (answer on a terminal: approvals and questions wait together)`,
      })}\n`,
    );
  }
  println(context.stderr, lines.join('\n'));
}

/** Stopped at a turn, call or time limit: how to go on with `--continue`. */
export function printContinueHint(
  context: CommandContext,
  name: string,
  threadId: string,
  limit: string,
): void {
  const command = `agents actor resume ${shellQuote(name)} --thread ${shellQuote(threadId)} --continue`;
  if (context.json)
    context.stdout.write(
      `${JSON.stringify({ type: 'stopped', reason: 'turn-limit', limit, threadId, resume: command })}\n`,
    );
  println(
    context.stderr,
    `Thread ${threadId} is saved; go on with:\n  ${command} [--max-turns N] [--max-tool-calls N] [--max-time DURATION]`,
  );
}

/** The run stopped for a login: the login line for the person, then how to go on. */
export function printLoginPause(
  context: CommandContext,
  name: string,
  threadId: string,
  error: AgentsError,
): void {
  const command = `agents actor resume ${shellQuote(name)} --thread ${shellQuote(threadId)} --continue`;
  if (context.json)
    context.stdout.write(
      `${JSON.stringify({ type: 'stopped', reason: 'auth-required', code: error.code, message: error.message, threadId, resume: command })}\n`,
    );
  println(context.stderr, `Paused: ${error.message}`);
  println(
    context.stderr,
    `Thread ${threadId} is saved; after the login, go on with:\n  ${command}`,
  );
}

/** The end line: the thread, the kept sandbox, or that the sandbox was removed. */
export function printRunEnd(
  context: CommandContext,
  threadId: string,
  actor: ActorInstance,
  keep: boolean,
  threadKept: boolean,
): void {
  const sandbox = keep && actor.sandbox ? actor.sandbox.root : undefined;
  if (context.json)
    context.stdout.write(
      `${JSON.stringify({ type: 'end', threadId, ...(sandbox ? { sandbox } : {}), ...(threadKept ? {} : { sandboxRemoved: true }) })}\n`,
    );
  else
    println(
      context.stderr,
      `thread: ${threadId}${sandbox ? ` sandbox: ${sandbox}` : ''}${threadKept ? '' : ' (sandbox removed: run with --thread ID or --keep-sandbox to keep it)'}`,
    );
}
