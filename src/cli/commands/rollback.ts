import type { Command, CommandContext } from '../command.js';
import { formatChanges } from './checkpoints.js';
import { parseCommandArgs, requireOption } from '../args.js';
import type { OpenThreadContext } from './checkpoints.js';

const ROLLBACK_USAGE = `Usage: agents rollback --thread ID --to CHECKPOINT [--dry-run] [--note TEXT]

Restores the thread's sandbox files to the checkpoint's snapshot and forks the thread's state
from it. A safety snapshot is taken first; the old branch stays in the history, so rolling
"forward" is another rollback to a later checkpoint id. Refused while a run is active.
  --dry-run   show the file changes, change nothing
  --note      a note for the model, added to the forked conversation`;

/** `agents rollback --thread ID --to CHECKPOINT [--dry-run]`. */
export function createRollbackCommand(openThread: OpenThreadContext): Command {
  return {
    path: ['rollback'],
    summary: 'Roll a thread back to a checkpoint, files and state together',
    usage: ROLLBACK_USAGE,
    async run(context: CommandContext): Promise<number> {
      const values = parseCommandArgs(
        context.argv,
        {
          thread: { type: 'string' },
          to: { type: 'string' },
          'dry-run': { type: 'boolean' },
          note: { type: 'string' },
        },
        ROLLBACK_USAGE,
      );
      const threadId = requireOption(values.thread, 'thread', ROLLBACK_USAGE);
      const checkpointId = requireOption(values.to, 'to', ROLLBACK_USAGE);
      const thread = await openThread(context.workspace, threadId, {
        cwd: context.cwd,
        signal: context.signal,
      });
      try {
        const { rollback } = await import('../../middleware/rollback.js');
        const result = await rollback({
          graph: thread.graph,
          threadId,
          checkpointId,
          sandbox: thread.sandbox,
          dryRun: values['dry-run'] === true,
          signal: context.signal,
          ...(values.note === undefined ? {} : { note: values.note }),
        });
        if (context.json) {
          const { target, previous, forkConfig, ...rest } = result;
          context.stdout.write(
            `${JSON.stringify(
              {
                ...rest,
                target: { checkpointId: target.checkpointId, sandboxHead: target.sandboxHead },
                ...(previous === undefined
                  ? {}
                  : {
                      previous: {
                        checkpointId: previous.checkpointId,
                        sandboxHead: previous.sandboxHead,
                      },
                    }),
                ...(forkConfig === undefined
                  ? {}
                  : { forkCheckpointId: forkConfig.configurable?.['checkpoint_id'] }),
              },
              null,
              2,
            )}\n`,
          );
          return 0;
        }
        const lines = [
          `${result.dryRun ? 'Would restore' : 'Restored'} thread ${threadId} to checkpoint ${checkpointId} (snapshot ${result.target.sandboxHead.slice(0, 10)}).`,
          `File changes: ${formatChanges(result.preview, 50)}`,
        ];
        if (!result.dryRun) {
          lines.push(
            `Forked checkpoint: ${String(result.forkConfig?.configurable?.['checkpoint_id'])}`,
          );
          lines.push(`Safety snapshot: ${result.safety ?? '-'}`);
          if (result.previous?.checkpointId !== undefined) {
            lines.push(
              `To go back: agents rollback --thread ${threadId} --to ${result.previous.checkpointId}`,
            );
          }
        }
        context.stdout.write(`${lines.join('\n')}\n`);
        return 0;
      } finally {
        await thread.close();
      }
    },
  };
}
