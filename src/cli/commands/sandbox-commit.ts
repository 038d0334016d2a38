import { commitSandbox } from '../../sandbox/deliver/commit-branch.js';
import type { Command, CommandContext } from '../command.js';
import { parseCommandLine, requireOption } from '../args.js';
import { printJson, println } from '../output.js';
import { quotePath } from '../../sandbox/deliver/guard.js';
import type { ThreadContext } from '../thread-context.js';
import type { OpenThreadContext } from '../thread-context.js';
import {
  DELIVERY_SCREEN_OPTIONS,
  DELIVERY_SCREEN_USAGE,
  deliveryScreenOf,
  formatSkipped,
  printTakenOnRequest,
  THREAD_DELIVERY_OPTIONS,
  withThreadDelivery,
} from './sandbox-refs.js';

const SANDBOX_COMMIT_USAGE = `Usage: agents sandbox commit --thread ID --branch NAME [--onto REV] [--with-base-edits]
                            [-m MESSAGE] [--to REF] [--from REF] [PATH...]

Puts the thread's work on a new branch of your repository, ready for a pull request: one commit
on --onto (default HEAD, where you are now), the work replayed onto it with a three-way merge
against the sandbox's base, so the branch merges back cleanly even after you committed
meanwhile (a conflict writes nothing and names the paths). Your uncommitted edits the sandbox
started from are listed, and go on the branch (a first commit of their own) only with
--with-base-edits. The message holds the thread's prompt, the tools that wrote, the base commit,
the thread id and a Co-authored-by trailer naming the actor. Only the new branch and its objects
are written; HEAD, the index, your working tree and other branches are left alone. NAME must not
exist.
  PATH, --to, --from   only part of the work, as for agents sandbox apply
  -m, --message        the commit message (default: made from the thread, as above)
${DELIVERY_SCREEN_USAGE}`;

/** `agents sandbox commit --thread ID --branch NAME`. */
export function createSandboxCommitCommand(openThread: OpenThreadContext): Command {
  return {
    path: ['sandbox', 'commit'],
    summary: "Put a thread's work on a new branch of your repo (HEAD, index and files untouched)",
    usage: SANDBOX_COMMIT_USAGE,
    async run(context: CommandContext): Promise<number> {
      const { values, positionals: paths } = parseCommandLine(
        context.argv,
        {
          ...THREAD_DELIVERY_OPTIONS,
          branch: { type: 'string' },
          message: { type: 'string', short: 'm' },
          onto: { type: 'string' },
          'with-base-edits': { type: 'boolean' },
          ...DELIVERY_SCREEN_OPTIONS,
        },
        SANDBOX_COMMIT_USAGE,
      );
      const threadId = requireOption(values.thread, 'thread', SANDBOX_COMMIT_USAGE);
      const branch = requireOption(values.branch, 'branch', SANDBOX_COMMIT_USAGE);
      return withThreadDelivery(
        openThread,
        context,
        threadId,
        values,
        async ({ thread, sandbox, from, to }) => {
          const result = await commitSandbox(sandbox, {
            branch,
            message:
              values.message ??
              (await threadCommitMessage(thread, {
                base: sandbox.sourceCommit,
                from,
                to,
                signal: context.signal,
              })),
            ...(values.onto === undefined ? {} : { onto: values.onto }),
            withBaseEdits: values['with-base-edits'] === true,
            paths,
            signal: context.signal,
            ...deliveryScreenOf(values, context.workspace, sandbox.source),
            ...(from === undefined ? {} : { from }),
            ...(to === undefined ? {} : { to }),
          });
          if (context.json) printJson(context.stdout, { threadId, ...result });
          else {
            for (const line of formatSkipped(result.skipped, 8)) println(context.stdout, line);
            if (result.baseEdits.length > 0) {
              println(
                context.stdout,
                `${result.baseCommit === undefined ? 'Left out' : 'Committed first'}: your uncommitted edits the sandbox started from (${result.baseEdits.length})${result.baseCommit === undefined ? '; add them with --with-base-edits' : ''}:`,
              );
              for (const edit of result.baseEdits)
                println(context.stdout, `  ${edit.status} ${quotePath(edit.path)}`);
            }
            printTakenOnRequest(context.stderr, result);
            println(
              context.stdout,
              `Branch ${result.branch} -> ${result.commit.slice(0, 12)} (on ${result.onto.slice(0, 12)}) in ${sandbox.source}.`,
            );
          }
          return 0;
        },
      );
    },
  };
}

/** Longest prompt quoted in a commit message. */
const MAX_PROMPT_CHARS = 2000;

/**
 * A commit message made from the thread: its first line and body from the user's prompt, the
 * tools that wrote the files, the commit the sandbox started from and the thread id, and a
 * `Co-authored-by` trailer naming the actor (git and forges show it as a co-author).
 */
async function threadCommitMessage(
  thread: ThreadContext,
  range: { base: string | undefined; from: string | undefined; to: string; signal: AbortSignal },
): Promise<string> {
  let prompt: string | undefined;
  let tools: string[] = [];
  try {
    const { readSandboxState } = await import('../../core/sandbox-state.js');
    const state = await thread.graph.getState({ configurable: { thread_id: thread.threadId } });
    const values = state.values as {
      messages?: Array<{ getType?: () => string; content?: unknown }>;
    };
    const human = (values.messages ?? []).find((message) => message.getType?.() === 'human');
    if (typeof human?.content === 'string') prompt = human.content.trim();
    tools = [
      ...new Set(
        readSandboxState(state.values)
          .changeLog.filter((record) => record.changed.length > 0)
          .map((record) => record.toolId),
      ),
    ];
  } catch {
    // No readable checkpoints (memory checkpointer): a message without the prompt.
  }
  const firstLine = (prompt ?? '').split('\n')[0]!.slice(0, 72).trim();
  const actor = thread.actor ?? 'agents';
  const lines = [firstLine === '' ? `Work of agents thread ${thread.threadId}` : firstLine, ''];
  if (prompt !== undefined && prompt !== firstLine) {
    lines.push(
      'Prompt:',
      ...prompt
        .slice(0, MAX_PROMPT_CHARS)
        .split('\n')
        .map((line) => `  ${line}`),
      '',
    );
  }
  if (tools.length > 0) lines.push(`Files written by: ${tools.join(', ')}`);
  lines.push(`Agents thread: ${thread.threadId}`);
  if (range.base !== undefined) lines.push(`Sandbox base commit: ${range.base}`);
  lines.push('', `Co-authored-by: agents actor ${actor} <${actor}@agents.invalid>`);
  return `${lines.join('\n')}\n`;
}
