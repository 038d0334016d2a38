import { join } from 'node:path';
import { applySandbox, APPLIES_FOLDER, type ApplyResult } from '../../sandbox/deliver/apply.js';
import { undoApply } from '../../sandbox/deliver/apply-journal.js';
import type { Command, CommandContext } from '../command.js';
import { parseCommandLine, requireOption, usageError } from '../args.js';
import { ExitCode } from '../exit-codes.js';
import { agentsCommandLine, printJson, println } from '../output.js';
import type { OpenThreadContext } from '../../actors/open-thread.js';
import { quotePath } from '../../sandbox/deliver/guard.js';
import {
  DELIVERY_SCREEN_OPTIONS,
  DELIVERY_SCREEN_USAGE,
  deliveryScreenOf,
  formatSkipped,
  printTakenOnRequest,
  THREAD_DELIVERY_OPTIONS,
  withThreadDelivery,
} from './sandbox-refs.js';

const SANDBOX_APPLY_USAGE = `Usage: agents sandbox apply --thread ID [--to REF] [--from REF] [--dry-run]
                           [--conflicts refuse|markers] [--include-config]
                           [--allow-symlinks-out] [PATH...]
       agents sandbox apply --thread ID --undo [--force] [--dry-run]

Takes the thread's work back into your working tree, as a three-way merge per file against the
sandbox's base: files you did not touch get the sandbox's version, files you edited meanwhile
are merged (both edits kept). Your index, branches and .git are never touched.
  PATH         only these files or folders (relative to the project)
  --to REF     only what the run did up to a checkpoint (agents checkpoints --thread ID) or
               snapshot sha; --from REF starts later than the base
  --dry-run    show what would be written, write nothing
  --conflicts  refuse (default): any conflict stops the apply before a file is written, and
               each conflicting path is listed (exit 7); markers: write text conflicts with
               git's conflict markers, other kinds keep your file with the sandbox's beside it
               as FILE.agent, and (in a git repository) record every conflict as unmerged
               index stages (1 base, 2 yours, 3 sandbox) for git status and git mergetool
${DELIVERY_SCREEN_USAGE}
  --undo       put back the files the latest apply wrote, byte for byte (refused where you
               changed them since, unless --force)`;

/** The longest action (`unmerged`, `markers`) and a space: a path never touches its action. */
const ACTION_WIDTH = 9;

function printResult(context: CommandContext, threadId: string, result: ApplyResult): void {
  const out = context.stdout;
  for (const change of result.changes)
    println(out, `  ${change.action.padEnd(ACTION_WIDTH)}${quotePath(change.path)}`);
  for (const line of formatSkipped(result.skipped, ACTION_WIDTH)) println(out, line);
  if (result.alreadyApplied.length > 0) {
    println(out, `  (${result.alreadyApplied.length} file(s) already as in the sandbox)`);
  }
  const stopped = !result.applied && !result.dryRun && result.conflicts.length > 0;
  if (result.conflicts.length > 0) {
    println(
      out,
      `${stopped ? 'Conflicts, nothing written' : 'Conflicts'} (${result.conflicts.length}):`,
    );
    for (const item of result.conflicts) println(out, `  ${quotePath(item.path)}: ${item.reason}`);
  }
  const again = (...args: string[]) =>
    agentsCommandLine(context, [
      'sandbox',
      ...args.slice(0, 1),
      '--thread',
      threadId,
      ...args.slice(1),
    ]);
  if (result.applied) {
    println(
      out,
      `Applied ${result.changes.length} file(s) to ${result.target}. Undo with: ${again('apply', '--undo')}`,
    );
    if (result.unmerged.length > 0) {
      println(
        out,
        `Resolve the conflicts: ${result.unmerged.length} path(s) are unmerged in your index (git status lists them): run git mergetool, or edit each file and git add it (git rm to keep a deletion); delete the FILE.agent copies when done.`,
      );
    } else if (result.conflicts.length > 0) {
      println(
        out,
        'Resolve the conflicts: edit the files with conflict markers; compare each FILE.agent with FILE, keep one and delete the other.',
      );
    }
  } else if (result.dryRun) {
    const stop =
      result.conflicts.length > 0 &&
      result.changes.every((change) => !['markers', 'beside', 'unmerged'].includes(change.action))
        ? '; the conflicts above would stop it (with --conflicts markers they would be written as listed)'
        : '';
    println(
      out,
      `Dry run, nothing written: ${result.changes.length} file(s) would be written to ${result.target}${stop}.`,
    );
  } else if (result.conflicts.length === 0 && result.changes.length === 0) {
    println(out, 'Nothing to apply: your files already match the sandbox.');
  }
  if (stopped) {
    println(out, 'Next steps (any of):');
    println(
      out,
      `  ${again('apply', '--conflicts', 'markers')}   # text conflicts get git's markers; others keep your file, the sandbox's beside it as FILE.agent`,
    );
    println(out, `  ${again('diff', '--patch', 'PATH')}   # see what the sandbox did to a file`);
    println(out, `  ${again('apply', 'PATH...')}   # take the files without conflicts first`);
    println(
      out,
      `  ${again('commit', '--branch', 'NAME')}   # a branch, to merge with git (git mergetool for the conflicts)`,
    );
  }
}

/** `agents sandbox apply --thread ID [PATH...]` and `--undo`. */
export function createSandboxApplyCommand(openThread: OpenThreadContext): Command {
  return {
    path: ['sandbox', 'apply'],
    usage: SANDBOX_APPLY_USAGE,
    async run(context: CommandContext): Promise<number> {
      const { values, positionals: paths } = parseCommandLine(
        context.argv,
        {
          ...THREAD_DELIVERY_OPTIONS,
          'dry-run': { type: 'boolean' },
          conflicts: { type: 'string' },
          undo: { type: 'boolean' },
          force: { type: 'boolean' },
          ...DELIVERY_SCREEN_OPTIONS,
        },
        SANDBOX_APPLY_USAGE,
      );
      const threadId = requireOption(values.thread, 'thread', SANDBOX_APPLY_USAGE);
      const conflicts = values.conflicts ?? 'refuse';
      if (conflicts !== 'refuse' && conflicts !== 'markers') {
        throw usageError(
          `--conflicts takes refuse or markers, got "${conflicts}".`,
          SANDBOX_APPLY_USAGE,
        );
      }
      const undo = values.undo === true;
      if (
        undo &&
        (paths.length > 0 ||
          values.from !== undefined ||
          values.to !== undefined ||
          values.conflicts !== undefined)
      ) {
        throw usageError('--undo takes no PATH, --from, --to or --conflicts.', SANDBOX_APPLY_USAGE);
      }
      if (!undo && values.force === true)
        throw usageError('--force goes with --undo.', SANDBOX_APPLY_USAGE);
      return withThreadDelivery(
        openThread,
        context,
        threadId,
        values,
        async ({ sandbox, from, to }) => {
          if (undo) {
            const result = await undoApply(join(sandbox.store.recordsDir, APPLIES_FOLDER), {
              force: values.force === true,
              dryRun: values['dry-run'] === true,
            });
            if (context.json) printJson(context.stdout, result);
            else {
              for (const path of result.restored)
                println(context.stdout, `  restored ${quotePath(path)}`);
              if (result.backup !== undefined) {
                println(
                  context.stdout,
                  `Your edits made after the apply to ${result.backup.paths.map(quotePath).join(', ')} were saved first in ${result.backup.dir}`,
                );
              }
              println(
                context.stdout,
                `${result.dryRun ? 'Would put back' : 'Put back'} ${result.restored.length} file(s) in ${result.target} (apply ${result.applyId}).`,
              );
            }
            return 0;
          }
          const result = await applySandbox(sandbox, {
            ...(from === undefined ? {} : { from }),
            ...(to === undefined ? {} : { to }),
            paths,
            dryRun: values['dry-run'] === true,
            conflicts,
            signal: context.signal,
            ...deliveryScreenOf(values, context.workspace, sandbox.source),
          });
          if (context.json) printJson(context.stdout, { threadId, ...result });
          else {
            printResult(context, threadId, result);
            printTakenOnRequest(context.stderr, result);
          }
          return result.conflicts.length > 0 ? ExitCode.Sandbox : 0;
        },
      );
    },
  };
}
