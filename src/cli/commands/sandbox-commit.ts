import { commitSandbox } from '../../sandbox/deliver/commit-branch.js';
import type { Command, CommandContext } from '../command.js';
import { parseCommandLine, requireOption } from '../args.js';
import { printJson, println } from '../output.js';
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

const SANDBOX_COMMIT_USAGE = `Usage: agents sandbox commit --thread ID --branch NAME [-m MESSAGE] [--to REF] [--from REF] [PATH...]

Puts the thread's work on a new branch of your repository (for a pull request): one commit on
top of the commit the sandbox was made from (when the sandbox started from a working tree with
uncommitted changes, those come first in a commit of their own, then the work). Only the new
branch and its objects are written;
HEAD, the index, your working tree and other branches are left alone. NAME must not exist.
  PATH, --to, --from   only part of the work, as for agents sandbox apply
  -m, --message        the commit message (default: names the thread)
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
        async ({ sandbox, from, to }) => {
          const result = await commitSandbox(sandbox, {
            branch,
            message: values.message ?? `Work of agents thread ${threadId}`,
            paths,
            signal: context.signal,
            ...deliveryScreenOf(values, context.workspace, sandbox.source),
            ...(from === undefined ? {} : { from }),
            ...(to === undefined ? {} : { to }),
          });
          if (context.json) printJson(context.stdout, { threadId, ...result });
          else {
            for (const line of formatSkipped(result.skipped, 8)) println(context.stdout, line);
            printTakenOnRequest(context.stderr, result);
            println(
              context.stdout,
              `Branch ${result.branch} -> ${result.commit.slice(0, 12)} (on ${result.parent.slice(0, 12)}) in ${sandbox.source}.`,
            );
          }
          return 0;
        },
      );
    },
  };
}
