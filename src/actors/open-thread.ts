import { AgentsError, AgentsErrorCode, errorMessage } from '../errors.js';
import type { BaseCheckpointSaver } from '@langchain/langgraph-checkpoint';
import type { SharedThread } from './shared-thread.js';
import type { ThreadConfigFacts } from './thread-config.js';
import type { ThreadSandboxRecord } from './thread-sandbox.js';
import type { Checkpointer } from '../checkpoint/backend.js';
import type { AgentsRuntime, CheckpointerSettings } from '../runtime/agents-runtime.js';
import type { CheckpointedGraph } from '../thread/checkpointed-graph.js';
import type { RunSandbox } from '../sandbox/backend.js';
import { createWorkspaceStore } from '../workspace/store.js';
import type { WorkspaceStore } from '../workspace/workspace-types.js';

/**
 * One thread of the workspace, opened: the compiled graph (with its checkpointer) and the
 * thread's sandbox. What the checkpoint and delivery commands and `openThreadDelivery` read.
 * The caller of {@link OpenThreadContext} closes it.
 */
export interface ThreadContext extends AsyncDisposable {
  threadId: string;
  /** The actor that runs the thread. */
  actor?: string;
  /**
   * True when the thread's snapshots come from a shared store (several workers): this worker's
   * sandbox may be behind the thread's latest checkpoint.
   */
  shared?: boolean;
  graph: CheckpointedGraph;
  sandbox: RunSandbox;
  /** Fetches the thread's snapshots from its shared store into the sandbox's (shared only). */
  fetch?: (signal?: AbortSignal) => Promise<unknown>;
  /** Opens the graph's checkpoint saver (`agents thread compact` deletes rows from it). */
  saver?: () => Promise<BaseCheckpointSaver>;
  /**
   * The file of the thread's checkpoint store (absolute, resolved as the store opens it) when
   * the store is kept in one local file (its backend's `localFile`, SQLite); `undefined` for the
   * others (a server, memory). Opens nothing (the thread's record answers while the actor's config is unchanged).
   * Throws the actor config's error (`ACTOR_NOT_FOUND`, `CONFIG_INVALID`) when it must be read
   * and cannot be.
   */
  checkpointFile(): Promise<string | undefined>;
  close(): Promise<void>;
}

/**
 * Opens a thread of the workspace. `actor` picks among the actors that ran it (default: the one
 * that did), `stateDir` is the per-user state folder (default `agentsStateDir()`). Throws
 * `CHECKPOINT_NOT_FOUND` / `ACTOR_NOT_FOUND` when the thread is unknown.
 */
export type OpenThreadContext = (
  workspace: string,
  threadId: string,
  options: { cwd: string; signal: AbortSignal; actor?: string; stateDir?: string },
) => Promise<ThreadContext>;

/** Options of {@link createThreadContextOpener}. */
export interface ThreadContextOpenerOptions {
  /**
   * Hold the thread sandbox's run lock while the context is open: set for commands that change
   * the thread (rollback), so they refuse (`RUN_ACTIVE`) while `agents actor run` or another
   * rollback has the thread, in any process. Read-only commands leave it off and can look at a
   * thread while it runs.
   */
  lock: boolean;
  /**
   * Runs first when a `lock`ed context closes (the CLI stores the changed thread's checkpoint
   * listing); its failure is ignored.
   */
  beforeClose?: (thread: ThreadContext) => Promise<void>;
}

/**
 * Makes the {@link OpenThreadContext} the `checkpoints`, `rollback` and `sandbox diff` commands
 * use. For a thread it finds the sandbox record (in the workspace's folder of the per-user state folder, see `threadSandboxDir`)
 * (written by `agents actor run --thread`) and reopens the thread's sandbox. On first use of the
 * graph it opens that actor's checkpointer and compiles its graph without a
 * model, tools or MCP servers (listing and forking state needs only the graph's shape and the
 * checkpointer). Closing the context closes the checkpointer and releases the sandbox, keeping it
 * on disk.
 *
 * What it needs from the actor's config (sandbox backend, shared snapshot store, checkpointer)
 * comes from the facts the last run recorded in the thread's record when the config file still
 * has the bytes they were read from (its sha256): no YAML parser, no zod (issue 29). Otherwise
 * (an older record, an edited or missing config, a thread this worker never ran, a shared
 * store, a Postgres lease to take) it reads and validates the actor's config as before.
 *
 * Throws `CHECKPOINT_NOT_FOUND` when no actor ran the thread with a kept sandbox,
 * `INVALID_ARGUMENTS` when several actors did, `SANDBOX_FAILED` when its sandbox cannot be
 * reopened, `RUN_ACTIVE` when `lock` is set and the thread is busy; the graph's first call
 * throws `ACTOR_NOT_FOUND` when the actor's file is gone and `CHECKPOINT_NOT_FOUND` for a memory
 * checkpointer.
 */
export function createThreadContextOpener(options: ThreadContextOpenerOptions): OpenThreadContext {
  return async (workspace, threadId, { cwd, signal, ...pick }): Promise<ThreadContext> => {
    signal.throwIfAborted();
    // Loaded on use, in parallel: the thread records, the runtime (sandbox backends). The shared
    // store's code (with the checkpoint table's zod schemas) only when the config names one.
    const [
      { findThreadSandboxes, openThreadSandbox },
      { createAgentsRuntime, sandboxBackendNamed, checkpointStores },
      { actorConfigFacts, actorFileUnchanged },
    ] = await Promise.all([
      import('./thread-sandbox.js'),
      import('../runtime/agents-runtime.js'),
      import('./thread-config.js'),
    ]);
    const sharedThreads = () => import('./shared-thread.js');
    const here = createWorkspaceStore(workspace, { projectDir: cwd });
    const stateOption = pick.stateDir === undefined ? {} : { stateDir: pick.stateDir };
    const found = (await findThreadSandboxes(here.root, threadId, stateOption)).filter(
      (item) => pick.actor === undefined || item.record.actor === pick.actor,
    );
    const location = found[0];
    // A thread this worker never ran: its actor's shared snapshot store may hold it.
    const sharedActors =
      location === undefined && pick.actor === undefined
        ? await (await sharedThreads()).findSharedThreadActors(here, threadId, signal)
        : [];
    if (sharedActors.length > 1) {
      throw new AgentsError(
        AgentsErrorCode.InvalidArguments,
        `Thread "${threadId}" is in the shared snapshot stores of several actors (${sharedActors.join(', ')}); this worker cannot tell whose it is.`,
        { details: { threadId, actors: sharedActors } },
      );
    }
    const actorName = location?.record.actor ?? pick.actor ?? sharedActors[0];
    if (actorName === undefined) {
      throw new AgentsError(
        AgentsErrorCode.CheckpointNotFound,
        `No sandbox is recorded for thread "${threadId}" in workspace ${workspace}; check the thread id (\`agents actor run\` prints it, \`agents sandbox list\` shows the kept threads). Threads run with a memory checkpointer or the memory sandbox backend, or whose sandbox was removed or pruned (\`agents sandbox remove|prune\` take the record with it), cannot be listed or rolled back; \`agents thread remove\` drops the rest of a thread.`,
        { details: { threadId, workspace } },
      );
    }
    if (found.length > 1) {
      throw new AgentsError(
        AgentsErrorCode.InvalidArguments,
        `Thread "${threadId}" was run by several actors (${found.map((item) => item.record.actor).join(', ')}); remove the sandboxes of the ones you do not mean (agents sandbox remove --thread ${threadId} --actor NAME).`,
        { details: { threadId, actors: found.map((item) => item.record.actor) } },
      );
    }
    // Relative paths (the SQLite checkpoint file) resolve as they did for the run.
    const store = createWorkspaceStore(workspace, {
      projectDir: location?.record.projectDir ?? cwd,
    });
    let actorConfig: Promise<Awaited<ReturnType<typeof store.get<'actor'>>>> | undefined;
    const readActorConfig = () => (actorConfig ??= store.get('actor', actorName));
    const owner = `thread "${threadId}" (actor "${actorName}")`;
    // The facts the last run recorded, while the actor's file is unchanged and they leave
    // nothing to do across workers; else undefined and the config is read below.
    const recorded =
      location === undefined
        ? undefined
        : await usableFacts(location.record, {
            store,
            actor: actorName,
            lock: options.lock,
            unchanged: actorFileUnchanged,
            // A store shared across workers has a lease to take, which needs its URL (the config).
            leased: async (type) => {
              const backend = (await checkpointStores()).named(type);
              return backend === undefined || backend.lease !== undefined;
            },
            knownBackend: (name) => {
              try {
                sandboxBackendNamed(name, owner);
                return true;
              } catch {
                return false;
              }
            },
          });
    // Across workers (README "Running on several machines"): with a shared snapshot store the
    // thread's snapshots come from it, and with Postgres a changing command takes the lease.
    // Without either (read from the actor's file) nothing changes here.
    const sharedConfig =
      recorded === undefined ? await readActorConfig().catch(() => undefined) : undefined;
    // The sandbox backend and checkpoint store the actor's config names (opened on use below);
    // closing it closes what the command opened, last first.
    const runtime: AgentsRuntime = await createAgentsRuntime({
      owner,
      sandbox:
        recorded === undefined ? sharedConfig?.sandbox : { backend: recorded.sandboxBackend },
      checkpointer: false,
      cwd: store.projectDir,
    });
    let shared: SharedThread | undefined;
    let sandbox: RunSandbox;
    try {
      if (sharedConfig !== undefined) {
        const { openSharedThread, resolveSharedRemote } = await sharedThreads();
        shared = await openSharedThread({
          projectDir: store.projectDir,
          actor: actorName,
          threadId,
          checkpointer: sharedConfig.checkpointer,
          sandboxBackend: runtime.sandboxBackend,
          remote: resolveSharedRemote(sharedConfig.snapshots?.remote, (path) =>
            store.resolvePath(path),
          ),
          lease: options.lock,
          signal,
        });
      }
      // Last: push what the command snapshotted (a rollback's safety snapshot), then the lease.
      const openedLease = shared;
      if (openedLease !== undefined) runtime.defer(() => openedLease.close());
      const lock = options.lock && shared?.lease === undefined;
      if (location === undefined) {
        // Rebuilt from the shared store (the open attaches the replica).
        const config = sharedConfig!;
        sandbox = await openThreadSandbox({
          backend: runtime.sandboxBackend,
          workspaceRoot: store.root,
          ...stateOption,
          actor: actorName,
          threadId,
          source: store.resolvePath(config.sandbox.source),
          revision: config.sandbox.revision,
          projectDir: store.projectDir,
          create: false,
          lock,
          ...(shared?.replica === undefined ? {} : { replica: shared.replica }),
          signal,
        });
        const rebuilt = sandbox;
        runtime.defer(() => rebuilt.close({ remove: false }));
      } else {
        sandbox = await runtime.openSandbox({
          dir: location.sandboxDir,
          create: false,
          lock,
          signal,
        });
        if (shared?.replica !== undefined) {
          // Reading only fetches (another worker may run the thread); changing also queues this
          // worker's snapshots for the store (and below brings the files to the latest checkpoint).
          if (options.lock) await shared.replica.attach(sandbox, signal);
          else await shared.replica.fetchInto(sandbox.store, signal);
        }
      }
    } catch (error) {
      await runtime.close().catch(() => undefined);
      if (AgentsError.isInstance(error)) throw error;
      throw new AgentsError(
        AgentsErrorCode.SandboxFailed,
        `Cannot open the sandbox of thread "${threadId}" (actor "${actorName}"): ${errorMessage(error)}`,
        { cause: error, details: { threadId, actor: actorName } },
      );
    }
    const openedShared = shared;
    // The actor's config, its checkpointer and its graph (LangGraph, SQLite) are opened on first
    // use: `sandbox diff` needs only the sandbox and should start fast.
    let checkpointer: Promise<Checkpointer> | undefined;
    const openCheckpointer = (): Promise<Checkpointer> =>
      (checkpointer ??= (async () => {
        // The recorded file of a store kept in one (`localFile`); a server's URL is never
        // recorded (a secret): read it from the config.
        const stores = await checkpointStores();
        const recordedBackend =
          recorded === undefined ? undefined : stores.named(recorded.checkpointer);
        const file = recorded?.checkpointFile;
        if (recordedBackend?.localFile !== undefined && file !== undefined) {
          return runtime.openCheckpointer(
            // Checked by the backend's own schema as it opens.
            { type: recordedBackend.type, path: file } as CheckpointerSettings,
            { signal },
          );
        }
        if (recordedBackend?.ephemeral === true) throw inMemory(actorName, threadId);
        const config = await readActorConfig();
        const { backend } = stores.resolve(config.checkpointer);
        if (backend.ephemeral) throw inMemory(config.name, threadId);
        const { sharedThreadScope } = await sharedThreads();
        const threadScope = await sharedThreadScope(backend, store.projectDir, actorName);
        return runtime.openCheckpointer(config.checkpointer, {
          signal,
          ...(threadScope === undefined ? {} : { threadScope }),
        });
      })());
    // A record without a file (another store, or an older record): the config says.
    const checkpointFile = async (): Promise<string | undefined> =>
      recorded?.checkpointFile ??
      (await actorConfigFacts(await readActorConfig(), store.projectDir)).checkpointFile;
    let compiled: Promise<CheckpointedGraph> | undefined;
    const openGraph = (): Promise<CheckpointedGraph> =>
      (compiled ??= (async () => {
        const [{ saver }, { compileActorStateGraph }, { withCachedCheckpointReads }] =
          await Promise.all([
            openCheckpointer(),
            // The graph's shape alone, not the actor (its servers, skills, model and sandbox code).
            import('./actor-graph.js'),
            import('../thread/cached-reads.js'),
          ]);
        // Writes wait for the shared store to hold the snapshots they name.
        const writing = openedShared?.saver(saver) ?? saver;
        // Read-only commands read each checkpoint once (delta channels replay ancestors).
        return compileActorStateGraph(
          options.lock ? writing : withCachedCheckpointReads(saver),
          actorName,
        );
      })());
    let closing: Promise<void> | undefined;
    // A command that changed the thread (rollback, undo, compaction) runs `beforeClose` first
    // (the CLI stores its new listing); then the checkpointer (when opened), the sandbox, the
    // shared store and lease.
    const close = (): Promise<void> =>
      (closing ??= (async () => {
        if (options.lock) await options.beforeClose?.(thread).catch(() => undefined);
        await runtime.close(`Closing thread "${threadId}"`);
      })());
    const replica = openedShared?.replica;
    const thread: ThreadContext = {
      threadId,
      actor: actorName,
      shared: replica !== undefined,
      graph: lazyGraph(openGraph),
      sandbox,
      ...(replica === undefined
        ? {}
        : { fetch: (fetchSignal?: AbortSignal) => replica.fetchInto(sandbox.store, fetchSignal) }),
      saver: async () => (await openCheckpointer()).saver,
      checkpointFile,
      close,
      [Symbol.asyncDispose]: close,
    };
    if (options.lock && replica !== undefined) {
      // The thread may have moved on elsewhere: its latest checkpoint's files, before changing it.
      try {
        const { syncSandboxToThread } = await sharedThreads();
        await syncSandboxToThread({ graph: await openGraph(), threadId, sandbox, signal });
      } catch (error) {
        await close().catch(() => undefined);
        throw error;
      }
    }
    return thread;
  };
}

/**
 * The config facts of a thread's record when the opener may use them instead of reading the
 * actor's config: they passed the record's checks (see `parseThreadConfigFacts`), the record
 * names the project folder they were resolved against, the actor's file still has the bytes they
 * were read from, the backend is a known one, and there is nothing to do across workers (no
 * shared snapshot store to fetch from; no Postgres lease to take, which needs the URL).
 */
async function usableFacts(
  record: ThreadSandboxRecord,
  input: {
    store: WorkspaceStore;
    actor: string;
    lock: boolean;
    unchanged: (facts: ThreadConfigFacts, actorsDir: string, actor: string) => Promise<boolean>;
    knownBackend: (name: string) => boolean;
    /** True when the checkpoint store leases threads (or is unknown: the config says more). */
    leased: (type: string) => Promise<boolean>;
  },
): Promise<ThreadConfigFacts | undefined> {
  const facts = record.config;
  if (facts === undefined || record.projectDir === undefined) return undefined;
  if (facts.sharedRemote !== null || (input.lock && (await input.leased(facts.checkpointer)))) {
    return undefined;
  }
  if (!input.knownBackend(facts.sandboxBackend)) return undefined;
  try {
    // A name the store would refuse (the record is a file anyone may edit): read the config.
    input.store.file('actor', input.actor);
  } catch {
    return undefined;
  }
  return (await input.unchanged(facts, input.store.dir('actor'), input.actor)) ? facts : undefined;
}

function inMemory(actor: string, threadId: string): AgentsError {
  return new AgentsError(
    AgentsErrorCode.CheckpointNotFound,
    `Actor "${actor}" keeps checkpoints in memory, so thread "${threadId}" has none left to list or roll back; set its checkpointer to sqlite or postgres.`,
    { details: { threadId, actor } },
  );
}

/** A graph compiled on its first call (see {@link createThreadContextOpener}). */
function lazyGraph(open: () => Promise<CheckpointedGraph>): CheckpointedGraph {
  return {
    async getState(config) {
      return (await open()).getState(config);
    },
    async *getStateHistory(config, options) {
      yield* (await open()).getStateHistory(config, options);
    },
    async updateState(config, values, asNode) {
      return (await open()).updateState(config, values, asNode);
    },
  };
}
