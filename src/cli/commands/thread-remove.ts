import { createInterface } from 'node:readline';
import type { RemoveThreadResult } from '../../actors/remove-thread.js';
import { AgentsError, AgentsErrorCode } from '../../errors.js';
import type { Command, CommandContext } from '../command.js';
import { parseCommandArgs, requireOption, storeOf } from '../args.js';
import { agentsCommandLine, printJson, println } from '../output.js';
import { formatDiskSize } from './sandbox-list.js';

const USAGE = `Usage: agents thread remove --thread ID [--yes] [--json]

Removes everything kept of a thread: its checkpoints (in the checkpoint store of the actor that
ran it), its entries in the workspace's audit log and its sandbox with its record. Refused while
a run or rollback holds the thread, or while another process (a run, \`agents serve\`) has the
audit log open. Without --yes it shows what would go and asks on a terminal; elsewhere it
removes nothing and says to pass --yes.
  --yes    remove without asking`;

function describe(result: RemoveThreadResult): string[] {
  const checkpoints = result.checkpoints.reduce((sum, item) => sum + item.count, 0);
  return [
    ...result.sandboxes.map(
      (sandbox) =>
        `  sandbox of actor "${sandbox.actor}": ${sandbox.dir} (${formatDiskSize(sandbox.sizeBytes)})`,
    ),
    ...(result.sandboxes.length === 0 ? ['  no sandbox'] : []),
    `  ${checkpoints} checkpoint(s)${result.checkpoints.length === 0 ? '' : ` in ${result.checkpoints.map((item) => item.store).join(', ')}`}`,
    `  ${result.auditEntries} audit entr${result.auditEntries === 1 ? 'y' : 'ies'} in ${result.auditFile}`,
  ];
}

async function confirm(context: CommandContext, question: string): Promise<boolean> {
  const reader = createInterface({ input: context.stdin, terminal: false });
  try {
    context.stdout.write(`${question} [y/N] `);
    const line = await new Promise<string | undefined>((resolve, reject) => {
      const onAbort = () => reject(context.signal.reason as Error);
      context.signal.addEventListener('abort', onAbort, { once: true });
      reader.once('line', (text) => resolve(text));
      reader.once('close', () => resolve(undefined));
    });
    return /^\s*y(es)?\s*$/i.test(line ?? '');
  } finally {
    reader.close();
  }
}

/** `agents thread remove --thread ID [--yes]`: sandbox, checkpoints and audit entries of a thread. */
export const threadRemoveCommand: Command = {
  path: ['thread', 'remove'],
  usage: USAGE,
  async run(context: CommandContext): Promise<number> {
    const values = parseCommandArgs(
      context.argv,
      { thread: { type: 'string' }, yes: { type: 'boolean' } },
      USAGE,
    );
    const threadId = requireOption(values.thread, 'thread', USAGE);
    const store = storeOf(context);
    // Loaded on use: the checkpointer brings LangGraph and SQLite.
    const { removeThread } = await import('../../actors/remove-thread.js');
    if (values.yes !== true) {
      const plan = await removeThread({ store, threadId, dryRun: true, signal: context.signal });
      const stdin = context.stdin as NodeJS.ReadableStream & { isTTY?: boolean };
      if (stdin.isTTY !== true || context.json) {
        throw new AgentsError(
          AgentsErrorCode.InvalidArguments,
          [
            `Removing thread "${threadId}" would delete:`,
            ...describe(plan),
            `Nothing was removed. To remove it: ${agentsCommandLine(context, ['thread', 'remove', '--thread', threadId, '--yes'])}`,
          ].join('\n'),
          { details: { threadId } },
        );
      }
      println(context.stdout, [`Thread "${threadId}":`, ...describe(plan)].join('\n'));
      if (!(await confirm(context, 'Remove all of it?'))) {
        println(context.stdout, 'Nothing was removed.');
        return 0;
      }
    }
    const result = await removeThread({ store, threadId, signal: context.signal });
    if (context.json) {
      printJson(context.stdout, { removed: true, ...result });
      return 0;
    }
    println(context.stdout, [`Removed thread "${threadId}":`, ...describe(result)].join('\n'));
    return 0;
  },
};
