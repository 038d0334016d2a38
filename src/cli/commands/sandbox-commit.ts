import { commitSandbox } from '../../sandbox/deliver/commit-branch.js';
import type { Command, CommandContext } from '../command.js';
import { parseCommandLine, requireOption } from '../args.js';
import { printJson, println } from '../output.js';
import { quotePath } from '../../sandbox/deliver/guard.js';
import type { OpenThreadContext } from '../../actors/open-thread.js';
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
                            [--squash | -m MESSAGE] [--to REF] [--from REF] [PATH...]

Puts the thread's work on a new branch of your repository, ready for a pull request: one commit
per checkpoint that changed files (--squash: one commit), on --onto (default HEAD, where you
are now), the work replayed onto it with a three-way merge against the sandbox's base, so the
branch merges back cleanly even after you committed meanwhile (a conflict writes nothing and
names the paths). Your uncommitted edits the sandbox started from are listed, and go on the
branch (a first commit of their own) only with --with-base-edits. Each message holds the
prompt of its turn, the tools that wrote, the thread id, the checkpoint, the base commit and a
Co-authored-by trailer naming the actor. Only the new branch and its objects
are written; HEAD, the index, your working tree and other branches are left alone. NAME must not
exist.
  PATH, --to, --from   only part of the work, as for agents sandbox apply
  --squash             one commit for all the work (its message lists every prompt and tool)
  -m, --message        the message of one commit (implies --squash)
${DELIVERY_SCREEN_USAGE}`;

/** `agents sandbox commit --thread ID --branch NAME`. */
export function createSandboxCommitCommand(openThread: OpenThreadContext): Command {
  return {
    path: ['sandbox', 'commit'],
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
          squash: { type: 'boolean' },
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
          // Loaded on use: reading the checkpoints needs LangGraph.
          const { deliveryThreadOf } = await import('../../actors/thread-delivery.js');
          const result = await commitSandbox(sandbox, {
            branch,
            ...(values.message === undefined ? {} : { message: values.message }),
            squash: values.squash === true,
            // The checkpoints (for one commit each, with their prompts and tools); `to` is
            // already the thread's head, so its latest snapshot is not read again.
            thread: deliveryThreadOf({
              graph: thread.graph,
              threadId: thread.threadId,
              ...(thread.actor === undefined ? {} : { actor: thread.actor }),
            }),
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
            for (const made of result.commits)
              println(context.stdout, `  ${made.commit.slice(0, 12)} ${made.subject}`);
            println(
              context.stdout,
              `Branch ${result.branch} -> ${result.commit.slice(0, 12)} (${result.commits.length} commit(s) on ${result.onto.slice(0, 12)}) in ${sandbox.source}.`,
            );
          }
          return 0;
        },
      );
    },
  };
}
