import { AgentsError, AgentsErrorCode, errorMessage } from '../errors.js';
import type { SharedThread } from '../actors/shared-thread.js';
import type { Checkpointer } from '../middleware/checkpointer.js';
import type { LocalSandbox } from '../sandbox/local-sandbox.js';
import { createWorkspaceStore } from '../workspace/store.js';
import type { OpenThreadContext, ThreadContext } from './commands/checkpoints.js';

/** Options of {@link createThreadContextOpener}. */
export interface ThreadContextOpenerOptions {
  /**
   * Hold the thread sandbox's run lock while the context is open: set for commands that change
   * the thread (rollback), so they refuse (`RUN_ACTIVE`) while `agents actor run` or another
   * rollback has the thread, in any process. Read-only commands leave it off and can look at a
   * thread while it runs.
   */
  lock: boolean;
}

/**
 * Makes the {@link OpenThreadContext} the `checkpoints`, `rollback` and `sandbox diff` commands
 * use. For a thread it finds the sandbox record (in the workspace's folder of the per-user state folder, see `threadSandboxDir`)
 * (written by `agents actor run --thread`), loads that actor's config, opens its checkpointer and
 * compiles its graph without a model, tools or MCP servers (listing and forking state needs only
 * the graph's shape and the checkpointer), and reopens the thread's sandbox. Closing the context
 * closes the checkpointer and releases the sandbox, keeping it on disk.
 *
 * Throws `CHECKPOINT_NOT_FOUND` when no actor ran the thread with a kept sandbox,
 * `INVALID_ARGUMENTS` when several actors did, `ACTOR_NOT_FOUND` when the actor's file is gone,
 * `SANDBOX_FAILED` when its sandbox cannot be reopened, `RUN_ACTIVE` when `lock` is set and the
 * thread is busy.
 */
export function createThreadContextOpener(options: ThreadContextOpenerOptions): OpenThreadContext {
  return async (workspace, threadId, { cwd, signal }): Promise<ThreadContext> => {
    signal.throwIfAborted();
    // Loaded on use, in parallel: git (simple-git), the checkpointer (LangGraph, SQLite).
    const [
      { findThreadSandboxes, openThreadSandbox },
      { createCheckpointer },
      { openSandbox },
      { findSharedThreadActors, openSharedThread, resolveSharedRemote, syncSandboxToThread },
    ] = await Promise.all([
      import('../actors/thread-sandbox.js'),
      import('../middleware/checkpointer.js'),
      import('../sandbox/open-sandbox.js'),
      import('../actors/shared-thread.js'),
    ]);
    const here = createWorkspaceStore(workspace, { projectDir: cwd });
    const found = await findThreadSandboxes(here.root, threadId);
    const location = found[0];
    // A thread this worker never ran: its actor's shared snapshot store may hold it.
    const sharedActors =
      location === undefined ? await findSharedThreadActors(here, threadId, signal) : [];
    if (sharedActors.length > 1) {
      throw new AgentsError(
        AgentsErrorCode.InvalidArguments,
        `Thread "${threadId}" is in the shared snapshot stores of several actors (${sharedActors.join(', ')}); this worker cannot tell whose it is.`,
        { details: { threadId, actors: sharedActors } },
      );
    }
    const rebuildFor = sharedActors[0];
    if (location === undefined && rebuildFor === undefined) {
      throw new AgentsError(
        AgentsErrorCode.CheckpointNotFound,
        `No sandbox is recorded for thread "${threadId}" in workspace ${workspace}; check the thread id (\`agents actor run\` prints it). Threads run with a memory checkpointer, or whose sandbox was removed, cannot be rolled back.`,
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
    const actorConfig = await store.get('actor', location?.record.actor ?? rebuildFor!);
    if (actorConfig.checkpointer.type === 'memory') {
      throw new AgentsError(
        AgentsErrorCode.CheckpointNotFound,
        `Actor "${actorConfig.name}" keeps checkpoints in memory, so thread "${threadId}" has none left to list or roll back; set its checkpointer to sqlite or postgres.`,
        { details: { threadId, actor: actorConfig.name } },
      );
    }
    // Loaded on use: the actor module pulls in LangGraph, the servers and the MCP SDK.
    const { compileActorStateGraph } = await import('../actors/actor.js');
    let checkpointer: Checkpointer | undefined;
    let sandbox: LocalSandbox | undefined;
    let shared: SharedThread | undefined;
    try {
      // Across workers (README "Running on several machines"): a changing command takes the
      // Postgres lease, and the thread's snapshots come from the shared store.
      shared = await openSharedThread({
        actor: actorConfig.name,
        threadId,
        checkpointer: actorConfig.checkpointer,
        remote: resolveSharedRemote(actorConfig.snapshots?.remote, (path) =>
          store.resolvePath(path),
        ),
        lease: options.lock,
        signal,
      });
      checkpointer = await createCheckpointer(actorConfig.checkpointer, {
        cwd: store.projectDir,
        signal,
      });
      sandbox =
        location === undefined
          ? // Rebuilt from the shared store (the replica is attached by the open).
            await openThreadSandbox({
              workspaceRoot: store.root,
              actor: actorConfig.name,
              threadId,
              source: store.resolvePath(actorConfig.sandbox.source),
              revision: actorConfig.sandbox.revision,
              projectDir: store.projectDir,
              create: false,
              lock: options.lock && shared?.lease === undefined,
              ...(shared?.replica === undefined ? {} : { replica: shared.replica }),
              signal,
            })
          : await openSandbox({
              dir: location.sandboxDir,
              create: false,
              lock: options.lock && shared?.lease === undefined,
              signal,
            });
      if (location !== undefined && shared?.replica !== undefined) {
        // Reading only fetches (another worker may be running the thread); changing also queues
        // this worker's snapshots for the store and brings the files to the latest checkpoint.
        if (options.lock) await shared.replica.attach(sandbox, signal);
        else await shared.replica.fetchInto(sandbox.runDir, signal);
      }
    } catch (error) {
      await sandbox?.close({ remove: false }).catch(() => undefined);
      await shared?.close().catch(() => undefined);
      await checkpointer?.close().catch(() => undefined);
      if (AgentsError.isInstance(error)) throw error;
      throw new AgentsError(
        AgentsErrorCode.SandboxFailed,
        `Cannot open thread "${threadId}" of actor "${actorConfig.name}": ${errorMessage(error)}`,
        { cause: error, details: { threadId, actor: actorConfig.name } },
      );
    }
    const graph = compileActorStateGraph(
      shared?.saver(checkpointer.saver) ?? checkpointer.saver,
      actorConfig.name,
    );
    const openedCheckpointer = checkpointer;
    const openedSandbox = sandbox;
    const openedShared = shared;
    if (options.lock && shared?.replica !== undefined) {
      try {
        await syncSandboxToThread({ graph, threadId, sandbox, signal });
      } catch (error) {
        await sandbox.close({ remove: false }).catch(() => undefined);
        await shared.close().catch(() => undefined);
        await checkpointer.close().catch(() => undefined);
        throw error;
      }
    }
    let closing: Promise<void> | undefined;
    const close = (): Promise<void> =>
      (closing ??= (async () => {
        const results = await Promise.allSettled([
          openedSandbox.close({ remove: false }),
          openedCheckpointer.close(),
        ]);
        // Last: push what the command snapshotted (a rollback's safety snapshot), then the lease.
        if (openedShared !== undefined) {
          results.push(...(await Promise.allSettled([openedShared.close()])));
        }
        const errors = results.flatMap((result) =>
          result.status === 'rejected' ? [result.reason as unknown] : [],
        );
        if (errors.length > 0) {
          throw new AggregateError(
            errors,
            `Closing thread "${threadId}" failed: ${errors.map(errorMessage).join('; ')}`,
          );
        }
      })());
    return {
      threadId,
      graph,
      sandbox: openedSandbox,
      saver: openedCheckpointer.saver,
      close,
      [Symbol.asyncDispose]: close,
    };
  };
}
