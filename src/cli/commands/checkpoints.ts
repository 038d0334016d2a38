import { quotePath } from '../../sandbox/deliver/guard.js';
import type { ChangedPath } from '../../core/change-record.js';
import type { Command, CommandContext } from '../command.js';
import type { OpenThreadContext } from '../../actors/open-thread.js';
import { parseCommandArgs, parsePositiveInteger, requireOption, usageError } from '../args.js';
import { agentsCommandLine, formatTable } from '../output.js';
import { listThreadCheckpoints } from './checkpoints-listing.js';

/** One-line summary of changed paths: `A a.txt, M src/x.ts (+3 more)`. */
export function formatChanges(changed: readonly ChangedPath[], max = 4): string {
  if (changed.length === 0) return '-';
  const shown = changed.slice(0, max).map((change) => `${change.status} ${quotePath(change.path)}`);
  return changed.length > max
    ? `${shown.join(', ')} (+${changed.length - max} more)`
    : shown.join(', ');
}

function write(stream: NodeJS.WritableStream, text: string): void {
  stream.write(text.endsWith('\n') ? text : `${text}\n`);
}

/** Printed under the table: what the KIND column's words mean. */
const KINDS_LEGEND = `KIND: input = a new input arrived (before the graph ran on it), loop = a step of the graph
ran (STEP DID: the prompt it took, the tools the model called, the tools that ran, its answer), update = the state
was written from outside (a rollback or undo fork, an approval answer). A CHECKPOINT may be
given by a unique prefix of its id.`;

/** Checkpoints listed when no `--limit` or `--all` is given. */
const DEFAULT_LIMIT = 20;

const CHECKPOINTS_USAGE = `Usage: agents checkpoints --thread ID [--limit N | --all]

Lists a thread's checkpoints, newest first (all branches), with the step, what it did (prompt,
tools called, answer), the sandbox snapshot and the files each checkpoint changed; a checkpoint made by a rollback or an undo names the
safety snapshot taken just before it. Then the rollbacks \`agents rollback --undo\` can undo.
Roll back with: agents rollback --thread ID --to CHECKPOINT (the id or a unique prefix of it)

Options:
  --limit N   list the newest N checkpoints (default ${DEFAULT_LIMIT}; a note says when there are more)
  --all       list every checkpoint (slower on a long thread)`;

/** `agents checkpoints --thread ID`: lists checkpoints and their file changes. */
export function createCheckpointsCommand(openThread: OpenThreadContext): Command {
  return {
    path: ['checkpoints'],
    usage: CHECKPOINTS_USAGE,
    async run(context: CommandContext): Promise<number> {
      const values = parseCommandArgs(
        context.argv,
        { thread: { type: 'string' }, limit: { type: 'string' }, all: { type: 'boolean' } },
        CHECKPOINTS_USAGE,
      );
      const threadId = requireOption(values.thread, 'thread', CHECKPOINTS_USAGE);
      if (values.all === true && values.limit !== undefined)
        throw usageError('Give --limit N or --all, not both.', CHECKPOINTS_USAGE);
      const limit =
        values.all === true
          ? undefined
          : (parsePositiveInteger(values.limit, 'limit', CHECKPOINTS_USAGE) ?? DEFAULT_LIMIT);
      const thread = await openThread(context.workspace, threadId, {
        cwd: context.projectDir,
        signal: context.signal,
      });
      try {
        // Loaded on use; `--help` stays fast.
        const [
          { undoStack },
          { UNATTRIBUTED_TOOL_ID },
          { formatSkippedPaths },
          { formatActivity },
        ] = await Promise.all([
          import('../../core/undo-stack.js'),
          import('../../thread/unattributed-id.js'),
          import('../../sandbox/skipped-paths.js'),
          import('../../thread/step-activity.js'),
        ]);
        // One more than shown, to say whether older ones exist.
        const listing = await listThreadCheckpoints(thread, {
          threadId,
          signal: context.signal,
          ...(limit === undefined ? {} : { limit: limit + 1 }),
        });
        const listed = listing.entries;
        const entries = limit === undefined ? listed : listed.slice(0, limit);
        const older = listed.length > entries.length;
        if (context.json) {
          write(context.stdout, JSON.stringify(entries, null, 2));
          return 0;
        }
        const rows = entries.map((entry) => {
          const head = entry.sandboxHead === undefined ? 'base' : entry.sandboxHead.slice(0, 10);
          const made =
            entry.rollback === undefined
              ? ''
              : `  [${entry.rollback.kind} from ${entry.rollback.from}, safety snapshot ${entry.rollback.safety}]`;
          const unattributed = entry.records.some(
            (record) => record.toolId === UNATTRIBUTED_TOOL_ID,
          )
            ? '  [unattributed changes: no recorded call made them]'
            : '';
          const skipped = entry.records.flatMap((record) => record.skipped ?? []);
          const notCaptured =
            skipped.length === 0 ? '' : `  [not captured: ${formatSkippedPaths(skipped)}]`;
          return [
            entry.checkpointId,
            String(entry.step),
            entry.source,
            head,
            entry.next.join(',') || '-',
            formatActivity(entry.activity),
            `${formatChanges(entry.changed)}${made}${unattributed}${notCaptured}`,
          ];
        });
        write(
          context.stdout,
          formatTable(
            ['CHECKPOINT', 'STEP', 'KIND', 'SNAPSHOT', 'NEXT', 'STEP DID', 'FILES'],
            rows,
          ),
        );
        write(context.stdout, KINDS_LEGEND);
        // On stderr: stdout stays one line per checkpoint for scripts.
        if (older)
          write(
            context.stderr,
            `(older checkpoints not shown: ${agentsCommandLine(context, ['checkpoints', '--thread', threadId, '--limit', String(limit! * 5)])} or --all lists more)`,
          );
        const stack = undoStack(listing.rollbacks).reverse();
        if (stack.length > 0) {
          write(
            context.stdout,
            `\nRollbacks to undo, newest first (${agentsCommandLine(context, ['rollback', '--thread', threadId, '--undo'])} puts back the first one's safety snapshot):`,
          );
          for (const item of stack) {
            write(
              context.stdout,
              `  ${item.time}  ${item.from} -> ${item.to}  safety snapshot ${item.safety}`,
            );
          }
        }
        return 0;
      } finally {
        await thread.close();
      }
    },
  };
}
