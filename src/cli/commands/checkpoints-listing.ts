/**
 * What `agents checkpoints` lists, from one reader: LangGraph's (`listCheckpoints` over the actor
 * graph). For a SQLite thread the listing LangGraph gave is stored beside the checkpoints with the
 * thread's stamp (`checkpoint/sqlite-listing.ts`), by the run that wrote them or by the first
 * listing after it, and served from there while the thread is unchanged: the command then starts
 * without LangGraph (issue 29), and nothing re-implements LangGraph's replay (issue 39). A thread
 * written before the store existed is listed through LangGraph once, which stores it.
 */
import type { RollbackRecord } from '../../core/sandbox-state.js';
import { openSqliteListing } from '../../checkpoint/sqlite-listing.js';
import type { CheckpointEntry } from '../../thread/checkpoint-list.js';
import type { CheckpointedGraph } from '../../thread/checkpointed-graph.js';
import type { Sandbox } from '../../sandbox/types.js';

/** Bump when {@link CheckpointListing} or what goes into an entry changes: older ones are read again. */
const LISTING_VERSION = 1;

/** A thread's checkpoints, newest first, and the rollbacks of its current state. */
export interface CheckpointListing {
  entries: Array<Omit<CheckpointEntry, 'config'>>;
  rollbacks: RollbackRecord[];
}

/** What is listed: a thread as `ThreadContext` opens it. */
export interface ListedThread {
  graph: CheckpointedGraph;
  sandbox: Sandbox;
  /** The thread's SQLite checkpoint file; undefined for other stores. */
  checkpointFile(): Promise<string | undefined>;
}

/** The stored listing and the stamp it was checked against; empty when none can be read. */
async function readStored(
  file: string,
  threadId: string,
): Promise<{ stamp?: string; listing?: CheckpointListing }> {
  try {
    const store = await openSqliteListing(file, { writable: false });
    if (store === undefined) return {};
    try {
      const stamp = store.stamp(threadId);
      const stored = store.read(threadId, stamp) as
        (CheckpointListing & { version?: unknown }) | undefined;
      if (stored?.version !== LISTING_VERSION) return { stamp };
      const { version: _version, ...listing } = stored;
      return { stamp, listing };
    } finally {
      store.close();
    }
  } catch {
    // A file SQLite cannot read: LangGraph's path says what is wrong, in its words.
    return {};
  }
}

/** The listing through LangGraph (at most `limit` entries plus the one that shows more exist). */
async function listThroughLangGraph(
  thread: ListedThread,
  threadId: string,
  limit: number | undefined,
  signal: AbortSignal | undefined,
): Promise<CheckpointListing> {
  const [{ listCheckpoints }, { readSandboxState }] = await Promise.all([
    import('../../thread/checkpoint-list.js'),
    import('../../core/sandbox-state.js'),
  ]);
  const entries = await listCheckpoints({
    graph: thread.graph,
    threadId,
    sandbox: thread.sandbox,
    ...(signal === undefined ? {} : { signal }),
    ...(limit === undefined ? {} : { limit }),
  });
  const current = await thread.graph.getState({ configurable: { thread_id: threadId } });
  return {
    entries: entries.map(({ config: _config, ...entry }) => entry),
    rollbacks: readSandboxState(current.values).rollbacks,
  };
}

/** Stores `listing` as the thread's at `stamp`; a cache, so failing to store it fails nothing. */
async function store(
  file: string,
  threadId: string,
  stamp: string,
  listing: CheckpointListing,
): Promise<void> {
  try {
    const opened = await openSqliteListing(file, { writable: true });
    try {
      opened?.write(threadId, stamp, { version: LISTING_VERSION, ...listing });
    } finally {
      opened?.close();
    }
  } catch {
    // Read-only file, locked database: the next listing asks LangGraph again.
  }
}

/**
 * The newest `limit` checkpoints of a thread (all without it): the stored listing while the
 * thread is unchanged, else LangGraph's, stored for the next time (SQLite threads).
 */
export async function listThreadCheckpoints(
  thread: ListedThread,
  options: { threadId: string; limit?: number | undefined; signal?: AbortSignal | undefined },
): Promise<CheckpointListing> {
  const { threadId, limit, signal } = options;
  const file = await thread.checkpointFile();
  if (file === undefined) return listThroughLangGraph(thread, threadId, limit, signal);
  // The stamp is taken before LangGraph reads: a write in between leaves it stale, never wrong.
  const { stamp, listing: stored } = await readStored(file, threadId);
  const listing = stored ?? (await listThroughLangGraph(thread, threadId, undefined, signal));
  if (stored === undefined && stamp !== undefined) await store(file, threadId, stamp, listing);
  return limit === undefined ? listing : { ...listing, entries: listing.entries.slice(0, limit) };
}

/**
 * Stores a SQLite thread's listing now (what a run calls once it has written its checkpoints), so
 * the next `agents checkpoints` starts without LangGraph. Does nothing for other stores.
 */
export async function recordCheckpointListing(
  thread: ListedThread,
  threadId: string,
  signal?: AbortSignal,
): Promise<void> {
  const file = await thread.checkpointFile();
  if (file === undefined) return;
  const { stamp, listing } = await readStored(file, threadId);
  if (stamp === undefined || listing !== undefined) return;
  await store(
    file,
    threadId,
    stamp,
    await listThroughLangGraph(thread, threadId, undefined, signal),
  );
}
