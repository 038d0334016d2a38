import { formatSkippedPaths } from '../../sandbox/skipped-paths.js';
import type { Command, CommandContext } from '../command.js';
import { formatChanges } from './checkpoints.js';
import { parseCommandArgs, requireOption } from '../args.js';
import type { OpenThreadContext } from './checkpoints.js';

const SANDBOX_DIFF_USAGE = `Usage: agents sandbox diff --thread ID [--from SHA]

Lists what the thread's run changed in its sandbox: from the sandbox base (or --from) to the
latest snapshot. One "STATUS PATH" per line (A added, M modified, D deleted, T type change).`;

/** `agents sandbox diff --thread ID`: what a run changed against its base. */
export function createSandboxDiffCommand(openThread: OpenThreadContext): Command {
  return {
    path: ['sandbox', 'diff'],
    summary: "Show what a thread's run changed in its sandbox",
    usage: SANDBOX_DIFF_USAGE,
    async run(context: CommandContext): Promise<number> {
      const values = parseCommandArgs(
        context.argv,
        { thread: { type: 'string' }, from: { type: 'string' } },
        SANDBOX_DIFF_USAGE,
      );
      const threadId = requireOption(values.thread, 'thread', SANDBOX_DIFF_USAGE);
      const thread = await openThread(context.workspace, threadId, {
        cwd: context.projectDir,
        signal: context.signal,
      });
      try {
        const from = values.from ?? thread.sandbox.base;
        const to = thread.sandbox.head;
        const changed = await thread.sandbox.diff(from, to);
        const skipped = thread.sandbox.skippedPaths?.() ?? [];
        if (context.json) {
          context.stdout.write(
            `${JSON.stringify({ threadId, from, to, changed, skipped }, null, 2)}\n`,
          );
          return 0;
        } else if (changed.length === 0) {
          context.stdout.write(`No changes in thread ${threadId} (${formatChanges(changed)}).\n`);
        } else {
          context.stdout.write(
            `${changed.map((change) => `${change.status} ${change.path}`).join('\n')}\n`,
          );
        }
        if (skipped.length > 0) {
          context.stderr.write(
            `Not captured by the snapshots (a rollback will neither restore nor remove them): ${formatSkippedPaths(skipped)}\n`,
          );
        }
        return 0;
      } finally {
        await thread.close();
      }
    },
  };
}
