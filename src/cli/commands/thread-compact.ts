import { AgentsError, AgentsErrorCode } from '../../errors.js';
import type { Command, CommandContext } from '../command.js';
import { parseCommandArgs, parsePositiveInteger, requireOption } from '../args.js';
import { printJson, println } from '../output.js';
import type { OpenThreadContext } from '../../actors/open-thread.js';

/** Checkpoints `agents thread compact` keeps when `--keep` is not given. */
const DEFAULT_KEEP = 100;

const COMPACT_USAGE = `Usage: agents thread compact --thread ID [--keep N] [--vacuum] [--json]

Bounds a thread's checkpoint storage: deletes its checkpoints older than the newest N (all
branches; default ${DEFAULT_KEEP}) from the SQLite checkpoint file. The kept ones stay readable,
resumable and rollback targets (\\\`agents checkpoints\\\` lists them); the oldest kept one gets its
full state written into it. Refused while the thread runs.

Messages and change records are stored once each (in the step that made them), so a thread's
storage grows with its calls; compact a thread that has run for long, or remove it whole.

Options:
  --thread ID   the thread (printed by \\\`agents actor run\\\`)
  --keep N      newest checkpoints to keep (at least 1; two per model turn)
  --vacuum      also shrink the file (rewrites it; takes a while on a large file)
  --json        print the figures as JSON`;

/** `agents thread compact --thread ID`: deletes a thread's old checkpoints. */
export function createThreadCompactCommand(openThread: OpenThreadContext): Command {
  return {
    path: ['thread', 'compact'],
    usage: COMPACT_USAGE,
    async run(context: CommandContext): Promise<number> {
      const values = parseCommandArgs(
        context.argv,
        {
          thread: { type: 'string' },
          keep: { type: 'string' },
          vacuum: { type: 'boolean' },
        },
        COMPACT_USAGE,
      );
      const threadId = requireOption(values.thread, 'thread', COMPACT_USAGE);
      const keep = parsePositiveInteger(values.keep, 'keep', COMPACT_USAGE) ?? DEFAULT_KEEP;
      const thread = await openThread(context.workspace, threadId, {
        cwd: context.cwd,
        signal: context.signal,
      });
      try {
        if (thread.saver === undefined)
          throw new AgentsError(
            AgentsErrorCode.InvalidArguments,
            `Thread "${threadId}" has no checkpoint store to compact.`,
            { details: { threadId } },
          );
        const { compactThread } = await import('../../thread/compact-thread.js');
        const result = await compactThread({
          graph: thread.graph,
          saver: await thread.saver(),
          threadId,
          keep,
          vacuum: values.vacuum === true,
        });
        if (context.json) printJson(context.stdout, { threadId, ...result });
        else
          println(
            context.stdout,
            `Thread ${threadId}: ${result.before} checkpoints → ${result.after} kept` +
              ` (file ${Math.round(result.bytesBefore / 1024)} KiB → ${Math.round(result.bytesAfter / 1024)} KiB` +
              `${values.vacuum === true ? '' : '; pass --vacuum to shrink the file'}).`,
          );
        return 0;
      } finally {
        await thread.close();
      }
    },
  };
}
