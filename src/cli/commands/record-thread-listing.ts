/**
 * The CLI's thread opener (`actors/open-thread.ts`) with the checkpoint listing it stores
 * (`checkpoints-listing.ts`): after a command changed a thread, and after a run, so the next
 * `agents checkpoints` starts without LangGraph. Loaded on use, like the commands that need it.
 */
import type { OpenThreadContext } from '../../actors/open-thread.js';
import { recordCheckpointListing } from './checkpoints-listing.js';

/**
 * Opens threads for the `checkpoints`, `rollback`, `thread compact` and `sandbox` commands:
 * `lock` for the ones that change the thread (they store its new listing as they close).
 */
export async function threadOpener(lock: boolean): Promise<OpenThreadContext> {
  const { createThreadContextOpener } = await import('../../actors/open-thread.js');
  return createThreadContextOpener({
    lock,
    beforeClose: (thread) => recordCheckpointListing(thread, thread.threadId),
  });
}

/**
 * `recordCheckpointListing` for a thread of the workspace, opened read-only (after its run
 * has closed it). A cache: a thread that cannot be opened or listed is left to the next listing.
 */
export async function recordThreadListing(
  context: { workspace: string; projectDir: string; signal: AbortSignal },
  threadId: string,
): Promise<void> {
  try {
    const thread = await (
      await threadOpener(false)
    )(context.workspace, threadId, {
      cwd: context.projectDir,
      signal: context.signal,
    });
    try {
      await recordCheckpointListing(thread, threadId, context.signal);
    } finally {
      await thread.close();
    }
  } catch {
    // Nothing recorded: `agents checkpoints` reads through LangGraph once and stores it then.
  }
}
