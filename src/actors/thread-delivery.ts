import { AgentsError, AgentsErrorCode, errorMessage } from '../errors.js';
import type { StateSnapshot } from '@langchain/langgraph';
import { checkpointIdOf, type CheckpointedGraph } from '../thread/checkpointed-graph.js';
import { readSandboxState } from '../core/sandbox-state.js';
import type { DeliveryStep, DeliveryThread } from '../sandbox/deliver/store-access.js';
import type { RunSandbox } from '../sandbox/backend.js';
import { createWorkspaceStore } from '../workspace/store.js';
import { createAgentsRuntime } from '../runtime/agents-runtime.js';
import { compileActorStateGraph } from './actor-graph.js';
import { findSharedThreadActors, openSharedThread, resolveSharedRemote } from './shared-thread.js';
import { sharedThreadScope } from './thread-scope.js';
import { findThreadSandboxes, openThreadSandbox } from './thread-sandbox.js';

/**
 * A {@link DeliveryThread} for a thread whose checkpoints `graph` reads (an active actor's
 * `actor.graph`, or `compileActorStateGraph(saver, name)`): `latestSnapshot` first runs `fetch`
 * (the shared store's fetch, when there is one), then reads the thread's latest checkpoint.
 */
export function deliveryThreadOf(input: {
  graph: Pick<CheckpointedGraph, 'getState' | 'getStateHistory'>;
  threadId: string;
  actor?: string;
  fetch?: (signal?: AbortSignal) => Promise<unknown>;
}): DeliveryThread {
  const config = { configurable: { thread_id: input.threadId } };
  return {
    threadId: input.threadId,
    ...(input.actor === undefined ? {} : { actor: input.actor }),
    async latestSnapshot(signal) {
      await input.fetch?.(signal);
      const state = await input.graph.getState(config);
      if (state.createdAt === undefined) return undefined;
      return readSandboxState(state.values).sandboxHead;
    },
    async steps(signal) {
      const byId = new Map<string, StateSnapshot>();
      let latest: StateSnapshot | undefined;
      for await (const snapshot of input.graph.getStateHistory(config)) {
        signal?.throwIfAborted();
        latest ??= snapshot;
        const id = checkpointIdOf(snapshot.config);
        if (id !== undefined) byId.set(id, snapshot);
      }
      // The current branch only: from the latest checkpoint through its parents.
      const chain: StateSnapshot[] = [];
      for (let at = latest; at !== undefined;) {
        chain.unshift(at);
        const parent = checkpointIdOf(at.parentConfig);
        at = parent === undefined ? undefined : byId.get(parent);
        if (chain.length > byId.size) break;
      }
      const steps: DeliveryStep[] = [];
      let head: string | undefined;
      let seen = new Set<string>();
      for (const snapshot of chain) {
        const state = readSandboxState(snapshot.values);
        const now = state.sandboxHead;
        const records = state.changeLog;
        if (now !== undefined && now !== head) {
          const tools = records
            .filter((record) => !seen.has(recordKey(record)) && record.changed.length > 0)
            .map((record) => record.toolId);
          steps.push({
            snapshot: now,
            checkpointId: checkpointIdOf(snapshot.config) ?? '',
            prompt: latestPrompt(snapshot.values),
            tools: [...new Set(tools)],
          });
        }
        if (now !== undefined) head = now;
        seen = new Set(records.map(recordKey));
      }
      return steps;
    },
  };
}

function recordKey(record: { snapshot: string; toolCallId?: string | undefined }): string {
  return `${record.toolCallId ?? ''}\0${record.snapshot}`;
}

/** The text of the latest human message of a checkpoint's state. */
function latestPrompt(values: unknown): string | undefined {
  const messages = (values as { messages?: unknown } | undefined)?.messages;
  if (!Array.isArray(messages)) return undefined;
  for (let index = messages.length - 1; index >= 0; index -= 1) {
    const message = messages[index] as { getType?: () => string; content?: unknown };
    if (message.getType?.() === 'human' && typeof message.content === 'string')
      return message.content.trim();
  }
  return undefined;
}

/** Options of {@link openThreadDelivery}. */
export interface OpenThreadDeliveryOptions {
  /** The workspace folder (`.agents`); default `<projectDir>/.agents`. */
  workspace?: string;
  /** The project folder (relative paths of the actor's config resolve against it). */
  projectDir: string;
  threadId: string;
  /** The actor that ran the thread; default: found from the thread's record or shared store. */
  actor?: string;
  /** The per-user state folder; default `agentsStateDir()`. */
  stateDir?: string;
  signal?: AbortSignal;
}

/** A thread opened for delivery: pass `sandbox` and `{ thread }` to the delivery functions. */
export interface ThreadDeliveryHandle extends AsyncDisposable {
  actor: string;
  sandbox: RunSandbox;
  thread: DeliveryThread;
  /** Closes the checkpointer and the sandbox (kept on disk). */
  close(): Promise<void>;
}

/**
 * Opens a thread to review and deliver its work from code, on any worker, as `agents sandbox
 * diff|apply|commit --thread ID` do: this worker's sandbox of the thread (rebuilt from the actor's
 * shared snapshot store when this worker never ran it), its snapshots fetched from that store, and
 * the actor's checkpointer to read the thread's latest checkpoint. Read-only: no run lock, no
 * lease, the sandbox's files are not moved (a run may be using them). `diffSandbox(handle.sandbox,
 * { thread: handle.thread })` then shows the thread's latest work whichever worker did it.
 * Throws `CHECKPOINT_NOT_FOUND` for an unknown thread or a memory checkpointer.
 */
export async function openThreadDelivery(
  options: OpenThreadDeliveryOptions,
): Promise<ThreadDeliveryHandle> {
  const { threadId, signal } = options;
  const workspace = options.workspace ?? `${options.projectDir}/.agents`;
  const here = createWorkspaceStore(workspace, { projectDir: options.projectDir });
  const stateOption = options.stateDir === undefined ? {} : { stateDir: options.stateDir };
  const found = (await findThreadSandboxes(here.root, threadId, stateOption)).filter(
    (item) => options.actor === undefined || item.record?.actor === options.actor,
  );
  const location = found[0];
  const actor =
    options.actor ??
    location?.record?.actor ??
    (await findSharedThreadActors(here, threadId, signal))[0];
  if (actor === undefined) {
    throw new AgentsError(
      AgentsErrorCode.CheckpointNotFound,
      `No sandbox is recorded for thread "${threadId}" in workspace ${here.root}, and no actor's shared snapshot store has it; check the thread id (agents sandbox list).`,
      { details: { threadId, workspace: here.root } },
    );
  }
  const store = createWorkspaceStore(workspace, {
    projectDir: location?.record?.projectDir ?? options.projectDir,
  });
  const config = await store.get('actor', actor);
  // The actor's backends; closing it closes the checkpointer, the sandbox, then the shared store.
  const runtime = await createAgentsRuntime({
    owner: `thread "${threadId}" (actor "${actor}")`,
    sandbox: config.sandbox,
    checkpointer: config.checkpointer,
    cwd: store.projectDir,
  });
  if (runtime.checkpointBackend?.ephemeral === true) {
    throw new AgentsError(
      AgentsErrorCode.CheckpointNotFound,
      `Actor "${actor}" keeps checkpoints in memory, so thread "${threadId}" has none to read; set its checkpointer to sqlite or postgres.`,
      { details: { threadId, actor } },
    );
  }
  // Read-only: no lease (another worker may be running the thread).
  const shared = await openSharedThread({
    projectDir: store.projectDir,
    actor,
    threadId,
    checkpointer: config.checkpointer,
    sandboxBackend: runtime.sandboxBackend,
    remote: resolveSharedRemote(config.snapshots?.remote, (path) => store.resolvePath(path)),
    lease: false,
    ...(signal === undefined ? {} : { signal }),
  });
  if (shared !== undefined) runtime.defer(() => shared.close());
  const replica = shared?.replica;
  let sandbox: RunSandbox;
  try {
    if (location === undefined) {
      const rebuilt = await openThreadSandbox({
        backend: runtime.sandboxBackend,
        workspaceRoot: store.root,
        ...stateOption,
        actor,
        threadId,
        source: store.resolvePath(config.sandbox.source),
        revision: config.sandbox.revision,
        projectDir: store.projectDir,
        create: false,
        lock: false,
        ...(replica === undefined ? {} : { replica }),
        ...(signal === undefined ? {} : { signal }),
      });
      runtime.defer(() => rebuilt.close({ remove: false }));
      sandbox = rebuilt;
    } else {
      sandbox = await runtime.openSandbox({
        dir: location.sandboxDir,
        create: false,
        lock: false,
        ...(signal === undefined ? {} : { signal }),
      });
    }
  } catch (error) {
    await runtime.close().catch(() => undefined);
    if (AgentsError.isInstance(error)) throw error;
    throw new AgentsError(
      AgentsErrorCode.SandboxFailed,
      `Cannot open the sandbox of thread "${threadId}" (actor "${actor}"): ${errorMessage(error)}`,
      { cause: error, details: { threadId, actor } },
    );
  }
  let graph: CheckpointedGraph | undefined;
  const openGraph = async (): Promise<CheckpointedGraph> => {
    if (graph !== undefined) return graph;
    const threadScope = await sharedThreadScope(runtime.checkpointBackend, store.projectDir, actor);
    const checkpointer = await runtime.openCheckpointer(undefined, {
      ...(signal === undefined ? {} : { signal }),
      ...(threadScope === undefined ? {} : { threadScope }),
    });
    graph = compileActorStateGraph(checkpointer.saver, actor);
    return graph;
  };
  const thread = deliveryThreadOf({
    graph: {
      getState: async (config) => (await openGraph()).getState(config),
      async *getStateHistory(config, options) {
        yield* (await openGraph()).getStateHistory(config, options);
      },
    },
    threadId,
    actor,
    ...(replica === undefined
      ? {}
      : { fetch: (fetchSignal) => replica.fetchInto(sandbox.store, fetchSignal) }),
  });
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => (closing ??= runtime.close(`Closing thread "${threadId}"`));
  return { actor, sandbox, thread, close, [Symbol.asyncDispose]: close };
}
