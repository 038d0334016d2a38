import type { RollbackResult } from '../../thread/restore-and-fork.js';
import type { Command, CommandContext } from '../command.js';
import { formatChanges } from './checkpoints.js';
import { parseCommandArgs, requireOption, usageError } from '../args.js';
import { agentsCommandLine } from '../output.js';
import { formatSkippedPaths } from '../../sandbox/skipped-paths.js';
import type { OpenThreadContext } from '../../actors/open-thread.js';

const ROLLBACK_USAGE = `Usage: agents rollback --thread ID --to CHECKPOINT [--dry-run] [--note TEXT]
       agents rollback --thread ID --undo

Restores the thread's sandbox files to the checkpoint's snapshot and forks the thread's state
from it. A safety snapshot of the exact tree is taken first; the old branch stays in the history.
Refused while a run is active. CHECKPOINT is an id from \`agents checkpoints\` or a unique
prefix of it (as git takes a short sha).
  --dry-run   show the file changes, change nothing
  --note      a note for the model, added to the forked conversation
  --undo      undo the latest rollback not yet undone: put back its safety snapshot (the tree
              just before it, files never snapshotted included) and the checkpoint the thread
              was at; repeat to undo older rollbacks`;

function jsonOf(result: RollbackResult): Record<string, unknown> {
  const { target, previous, forkConfig, ...rest } = result;
  return {
    ...rest,
    target: { checkpointId: target.checkpointId, sandboxHead: target.sandboxHead },
    ...(previous === undefined
      ? {}
      : {
          previous: { checkpointId: previous.checkpointId, sandboxHead: previous.sandboxHead },
        }),
    ...(forkConfig === undefined
      ? {}
      : { forkCheckpointId: forkConfig.configurable?.['checkpoint_id'] }),
  };
}

/** `agents rollback --thread ID --to CHECKPOINT [--dry-run]` and `--undo`. */
export function createRollbackCommand(openThread: OpenThreadContext): Command {
  return {
    path: ['rollback'],
    usage: ROLLBACK_USAGE,
    async run(context: CommandContext): Promise<number> {
      const values = parseCommandArgs(
        context.argv,
        {
          thread: { type: 'string' },
          to: { type: 'string' },
          undo: { type: 'boolean' },
          'dry-run': { type: 'boolean' },
          note: { type: 'string' },
        },
        ROLLBACK_USAGE,
      );
      const threadId = requireOption(values.thread, 'thread', ROLLBACK_USAGE);
      const undo = values.undo === true;
      if (undo && (values.to !== undefined || values['dry-run'] === true || values.note)) {
        throw usageError('--undo takes no --to, --dry-run or --note.', ROLLBACK_USAGE);
      }
      const to = undo ? '' : requireOption(values.to, 'to', ROLLBACK_USAGE);
      const thread = await openThread(context.workspace, threadId, {
        cwd: context.projectDir,
        signal: context.signal,
      });
      try {
        // Loaded on use: rollback brings LangGraph, LangChain and git.
        const [{ rollback }, { resolveCheckpointId }, { undoRollback }] = await Promise.all([
          import('../../thread/rollback.js'),
          import('../../thread/checkpointed-graph.js'),
          import('../../thread/undo-rollback.js'),
        ]);
        // `--to` may be a unique prefix of the id, as git takes a short sha.
        const checkpointId = undo
          ? ''
          : await resolveCheckpointId(thread.graph, threadId, to, context.signal);
        const result = undo
          ? await undoRollback({
              graph: thread.graph,
              threadId,
              sandbox: thread.sandbox,
              signal: context.signal,
            })
          : await rollback({
              graph: thread.graph,
              threadId,
              checkpointId,
              sandbox: thread.sandbox,
              dryRun: values['dry-run'] === true,
              signal: context.signal,
              ...(values.note === undefined ? {} : { note: values.note }),
            });
        if (context.json) {
          context.stdout.write(`${JSON.stringify(jsonOf(result), null, 2)}\n`);
          return 0;
        }
        const where = `checkpoint ${result.target.checkpointId} (snapshot ${result.target.sandboxHead.slice(0, 10)})`;
        const lines = [
          undo
            ? `Undid the latest rollback of thread ${threadId}: files put back to its safety snapshot ${result.target.sandboxHead.slice(0, 10)}, state forked from checkpoint ${result.target.checkpointId}.`
            : `${result.dryRun ? 'Would restore' : 'Restored'} thread ${threadId} to ${where}.`,
          `File changes: ${formatChanges(result.preview, 50)}`,
        ];
        if (result.notRestored !== undefined) {
          lines.push(
            `Not restored (left out of the snapshots, left as they are): ${formatSkippedPaths(result.notRestored)}`,
          );
        }
        if (result.keptIgnored !== undefined) {
          lines.push(`Kept (ignored there): ${result.keptIgnored.join(', ')}`);
        }
        if (!result.dryRun) {
          lines.push(
            `Forked checkpoint: ${String(result.forkConfig?.configurable?.['checkpoint_id'])}`,
          );
          lines.push(`Safety snapshot (the tree just before this): ${result.safety ?? '-'}`);
          if (result.undoable > 0) {
            const command = agentsCommandLine(context, [
              'rollback',
              '--thread',
              threadId,
              '--undo',
            ]);
            lines.push(
              undo
                ? `To undo the rollback before it (${result.undoable} left): ${command}`
                : `To undo: ${command}`,
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
