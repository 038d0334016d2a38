import { AgentsError, AgentsErrorCode } from '../../errors.js';
import { createWorkspaceStore } from '../../workspace/store.js';
import type { Command, CommandContext } from '../command.js';
import { printJson, println } from '../output.js';
import { parseCommandArgs, requireOption } from '../args.js';

const SANDBOX_REMOVE_USAGE = `Usage: agents sandbox remove --thread ID [--actor NAME]

Deletes a thread's sandbox: its tree, snapshot store and run folder, kept in the per-user
state folder ($AGENTS_STATE_DIR, else $XDG_STATE_HOME/agents, else ~/.local/state/agents).
The thread's checkpoints stay, but its files can no longer be rolled back. Refused while a
run or rollback holds the thread.
  --actor NAME   only the sandbox of this actor (when several actors ran the thread)`;

/** `agents sandbox remove --thread ID`: deletes a kept per-thread sandbox. */
export const sandboxRemoveCommand: Command = {
  path: ['sandbox', 'remove'],
  usage: SANDBOX_REMOVE_USAGE,
  async run(context: CommandContext): Promise<number> {
    const values = parseCommandArgs(
      context.argv,
      { thread: { type: 'string' }, actor: { type: 'string' } },
      SANDBOX_REMOVE_USAGE,
    );
    const threadId = requireOption(values.thread, 'thread', SANDBOX_REMOVE_USAGE);
    const store = createWorkspaceStore(context.workspace, { projectDir: context.projectDir });
    // Loaded on use: the sandbox modules bring git.
    const { findThreadSandboxes, removeThreadSandbox } =
      await import('../../actors/thread-sandbox.js');
    const found = (await findThreadSandboxes(store.root, threadId)).filter(
      (location) => values.actor === undefined || location.record.actor === values.actor,
    );
    if (found.length === 0) {
      throw new AgentsError(
        AgentsErrorCode.CheckpointNotFound,
        `No sandbox is recorded for thread "${threadId}"${values.actor === undefined ? '' : ` of actor "${values.actor}"`} in workspace ${store.root}.`,
        { details: { threadId } },
      );
    }
    if (found.length > 1) {
      throw new AgentsError(
        AgentsErrorCode.InvalidArguments,
        `Thread "${threadId}" has sandboxes of several actors (${found.map((item) => item.record.actor).join(', ')}); pass --actor NAME.\n\n${SANDBOX_REMOVE_USAGE}`,
        { details: { threadId } },
      );
    }
    const location = found[0]!;
    await removeThreadSandbox(location);
    if (context.json) {
      printJson(context.stdout, {
        threadId,
        actor: location.record.actor,
        removed: location.dir,
      });
    } else {
      println(
        context.stdout,
        `Removed the sandbox of thread ${threadId} (actor "${location.record.actor}", ${location.dir}).`,
      );
    }
    return 0;
  },
};
