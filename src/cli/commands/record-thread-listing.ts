/**
 * Stores a kept thread's checkpoint listing after its run (`checkpoints-listing.ts`), opening the
 * thread read-only: its own module because opening a thread (`cli/thread-context.ts`) itself
 * stores listings, so the listing module cannot import it.
 */
import { recordCheckpointListing } from './checkpoints-listing.js';

/**
 * `recordCheckpointListing` for a thread of the workspace, opened read-only (after its run
 * has closed it). A cache: a thread that cannot be opened or listed is left to the next listing.
 */
export async function recordThreadListing(
  context: { workspace: string; projectDir: string; signal: AbortSignal },
  threadId: string,
): Promise<void> {
  try {
    const { createThreadContextOpener } = await import('../thread-context.js');
    const thread = await createThreadContextOpener({ lock: false })(context.workspace, threadId, {
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
