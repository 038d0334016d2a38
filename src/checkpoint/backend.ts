import type { BaseCheckpointSaver, BaseStore } from '@langchain/langgraph';
import type { z } from 'zod';
import type { ThreadScope } from './thread-namespace.js';

/** A LangGraph checkpoint saver plus the one way to release what it holds. */
export interface Checkpointer extends AsyncDisposable {
  /** Pass to `graph.compile({ checkpointer: saver })`. */
  readonly saver: BaseCheckpointSaver;
  /** The backend that opened it (the `checkpointer.type` of the settings). */
  readonly type: string;
  /** Closes the SQLite file / Postgres pool. Idempotent. */
  close(): Promise<void>;
}

/** Options of {@link CheckpointBackend.open}. */
export interface OpenCheckpointerOptions {
  /** Folder that a relative store path (SQLite) is resolved against. Default `process.cwd()`. */
  cwd?: string;
  /** Postgres schema for the checkpoint tables. Default `public`. */
  postgresSchema?: string;
  /**
   * Whose threads these are: a store several projects share (Postgres) keeps thread ids under
   * `<project>/<actor>/` (see `withThreadNamespace`). Stores one project owns ignore it.
   */
  threadScope?: ThreadScope;
  signal?: AbortSignal;
}

/** A LangGraph store a backend opened beside its checkpoints, and how to release it. */
export interface OpenedStore {
  store: BaseStore;
  close(): Promise<void>;
}

/** A thread held by this process across workers (see {@link CheckpointBackend.lease}). */
export interface ThreadLease extends AsyncDisposable {
  readonly actor: string;
  readonly threadId: string;
  /** How this holder shows to other workers (`agents <host> pid <pid>`). */
  readonly holder: string;
  /** Gives the thread up. Idempotent. */
  release(): Promise<void>;
}

/** What {@link CheckpointBackend.lease} needs besides the settings. */
export interface ThreadLeaseRequest {
  /** The project id (`projectIdOf`), so two projects' threads of one name are two leases. */
  project?: string;
  actor: string;
  threadId: string;
  signal?: AbortSignal;
}

/**
 * One checkpoint store (`checkpointer.type` in an actor's config): the seam a new store plugs
 * into. Each lives in a file of its own under `src/checkpoint/`; `checkpointBackends` maps the
 * config value to it, and callers look it up there instead of comparing `type` strings.
 */
export interface CheckpointBackend<S extends { type: string } = { type: string }> {
  readonly type: S['type'];
  /** The settings object of this store, as users write it (`{ type, ...options }`). */
  readonly schema: z.ZodType<S>;
  /**
   * True when the checkpoints die with the process: a thread then cannot be resumed, listed or
   * rolled back later, and its sandbox is temporary.
   */
  readonly ephemeral: boolean;
  /**
   * Where the store is, to show in messages and to tell two settings that name one store apart
   * (a resolved path, a redacted URL), and whether it exists yet: a store that does not exist has
   * no thread to remove and must not be made for that.
   */
  locate(settings: S, cwd: string): { name: string; exists: boolean };
  /**
   * The file the store keeps its checkpoints in, for a store kept in one local file (resolved as
   * `open` resolves it). A thread's record names it, so the thread's read-only commands reopen
   * the store as `{ type, path: file }` and read the listing stored in it (`sqlite-listing.ts`)
   * without reading the actor's config. Absent for stores elsewhere (a server, memory).
   */
  localFile?(settings: S, cwd: string): string;
  /** Opens the store; the caller owns the result and must `close()` it. */
  open(settings: S, options?: OpenCheckpointerOptions): Promise<Checkpointer>;
  /**
   * Takes a lease on one thread so that two workers sharing this store never run it at once.
   * Absent when the store cannot be shared between processes (one process: the local run lock
   * is the only guard needed).
   */
  lease?(settings: S, request: ThreadLeaseRequest): Promise<ThreadLease>;
  /**
   * The owners of the threads called `threadId` in a store several projects share (it keeps
   * `<project>/<actor>/<thread>`, see `withThreadNamespace`), at most 20: a worker asks before
   * it starts a thread it never ran. Absent for a store one project owns.
   */
  threadOwners?(settings: S, threadId: string): Promise<ThreadScope[]>;
  /**
   * A LangGraph store kept beside the checkpoints (relative paths against `cwd`), for what a
   * resumed run must find outside them (an actor's MCP tasks). Absent: the caller keeps one in
   * memory, which dies with the process as the checkpoints do.
   */
  openStore?(settings: S, cwd: string): Promise<OpenedStore>;
  /**
   * True for a saver of this store's kind that a caller made and passed in (e.g. a `MemorySaver`),
   * so its `ephemeral` applies to that saver too. Async: the saver classes load on use.
   */
  owns?(saver: BaseCheckpointSaver): Promise<boolean>;
}

/** A {@link Checkpointer} whose `close` runs `closeStore` once. */
export function checkpointerOf(
  type: string,
  saver: BaseCheckpointSaver,
  closeStore: () => Promise<void>,
): Checkpointer {
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => (closing ??= closeStore());
  return { type, saver, close, [Symbol.asyncDispose]: close };
}
