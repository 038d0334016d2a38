import type { StateSnapshot } from '@langchain/langgraph';
import { checkpointIdOf, type CheckpointedGraph } from '../thread/checkpointed-graph.js';
import { readSandboxState } from '../core/sandbox-state.js';
import type { DeliveryStep, DeliveryThread } from '../sandbox/deliver/store-access.js';
import type { RunSandbox } from '../sandbox/backend.js';
import { createThreadContextOpener } from './open-thread.js';

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
 * diff|apply|commit --thread ID` do (the same opener): this worker's sandbox of the thread
 * (rebuilt from the actor's shared snapshot store when this worker never ran it), its snapshots
 * fetched from that store, and the actor's checkpointer to read the thread's latest checkpoint.
 * Read-only: no run lock, no lease, the sandbox's files are not moved (a run may be using them).
 * `diffSandbox(handle.sandbox, { thread: handle.thread })` then shows the thread's latest work
 * whichever worker did it. Throws `CHECKPOINT_NOT_FOUND` for an unknown thread, and from the
 * thread's reads for a memory checkpointer.
 */
export async function openThreadDelivery(
  options: OpenThreadDeliveryOptions,
): Promise<ThreadDeliveryHandle> {
  const opened = await createThreadContextOpener({ lock: false })(
    options.workspace ?? `${options.projectDir}/.agents`,
    options.threadId,
    {
      cwd: options.projectDir,
      signal: options.signal ?? new AbortController().signal,
      ...(options.actor === undefined ? {} : { actor: options.actor }),
      ...(options.stateDir === undefined ? {} : { stateDir: options.stateDir }),
    },
  );
  const actor = opened.actor!;
  const thread = deliveryThreadOf({
    graph: opened.graph,
    threadId: options.threadId,
    actor,
    ...(opened.fetch === undefined ? {} : { fetch: opened.fetch }),
  });
  const close = (): Promise<void> => opened.close();
  return { actor, sandbox: opened.sandbox, thread, close, [Symbol.asyncDispose]: close };
}
