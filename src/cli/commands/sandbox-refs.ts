import { relative, sep } from 'node:path';
import { AgentsError, AgentsErrorCode } from '../../errors.js';
import { quotePath } from '../../sandbox/deliver/guard.js';
import type { DeliveryScreenOptions } from '../../sandbox/deliver/screen.js';
import {
  isDeliverySandbox,
  resolveSnapshot,
  type DeliverySandbox,
} from '../../sandbox/deliver/store-access.js';
import type { CommandContext } from '../command.js';
import type { OpenThreadContext, ThreadContext } from '../../actors/open-thread.js';

/** The thread's sandbox as the delivery functions need it, or `SANDBOX_FAILED`. */
export function deliverySandboxOf(thread: ThreadContext): DeliverySandbox {
  if (!isDeliverySandbox(thread.sandbox)) {
    throw new AgentsError(
      AgentsErrorCode.SandboxFailed,
      `The sandbox of thread "${thread.threadId}" has no snapshot store to read its work from.`,
      { details: { threadId: thread.threadId } },
    );
  }
  return thread.sandbox;
}

/**
 * A `--from`/`--to` value → snapshot sha: `base`, `head`, a checkpoint id of the thread (as
 * `agents checkpoints` lists them, or a unique prefix; its files are the snapshot it recorded,
 * the base before any write) or a snapshot sha. Throws `CHECKPOINT_NOT_FOUND` naming the value otherwise.
 */
export async function resolveThreadRef(
  thread: ThreadContext,
  sandbox: DeliverySandbox,
  ref: string,
  signal: AbortSignal,
): Promise<string> {
  if (ref === 'base') return sandbox.base;
  if (ref === 'head') return threadHead(thread, sandbox, signal);
  // A snapshot sha is plain hex; a checkpoint id (or its prefix, as git takes a short sha) is a
  // UUID, whose first characters are hex too: a hex value that names no snapshot is tried as a
  // checkpoint prefix.
  if (/^[0-9a-f]{4,64}$/.test(ref)) {
    try {
      return await resolveSnapshot(sandbox, ref, { signal });
    } catch (error) {
      if (!AgentsError.hasCode(error, AgentsErrorCode.CheckpointNotFound)) throw error;
    }
  }
  // Loaded on use: reading a checkpoint needs LangGraph; the other refs need only git.
  const [{ loadCheckpoint, resolveCheckpointId }, { readSandboxState }] = await Promise.all([
    import('../../thread/checkpointed-graph.js'),
    import('../../core/sandbox-state.js'),
  ]);
  const id = await resolveCheckpointId(thread.graph, thread.threadId, ref, signal);
  const snapshot = await loadCheckpoint(thread.graph, thread.threadId, id);
  return readSandboxState(snapshot.values).sandboxHead ?? sandbox.base;
}

/**
 * The snapshot of the thread's latest checkpoint, whichever worker wrote it: what `head` (and
 * the default `--to`) means. This worker's sandbox may be behind (another worker went on with
 * the thread; the opener fetched its snapshots from the shared store), so with a shared store
 * the checkpoint is read; on one worker (no shared store) its sandbox head is the thread's. Throws
 * `CHECKPOINT_NOT_FOUND`, saying how to get it, when the checkpoint's snapshot is not here.
 */
export async function threadHead(
  thread: ThreadContext,
  sandbox: DeliverySandbox,
  signal: AbortSignal,
): Promise<string> {
  // One worker: its sandbox is the thread's (runs and rollbacks move both together), and
  // reading it needs no checkpointer (LangGraph and the database stay unloaded).
  if (thread.shared !== true) return sandbox.head;
  const { readSandboxState } = await import('../../core/sandbox-state.js');
  let state: Awaited<ReturnType<ThreadContext['graph']['getState']>>;
  try {
    state = await thread.graph.getState({ configurable: { thread_id: thread.threadId } });
  } catch (error) {
    // No checkpoints to read (memory checkpointer): the sandbox is all there is.
    if (AgentsError.hasCode(error, AgentsErrorCode.CheckpointNotFound)) return sandbox.head;
    throw error;
  }
  if (state.createdAt === undefined) return sandbox.head;
  const head = readSandboxState(state.values).sandboxHead ?? sandbox.base;
  if (head === sandbox.head) return head;
  try {
    return await resolveSnapshot(sandbox, head, { signal });
  } catch (error) {
    if (!AgentsError.hasCode(error, AgentsErrorCode.CheckpointNotFound)) throw error;
    throw new AgentsError(
      AgentsErrorCode.CheckpointNotFound,
      `The latest checkpoint of thread "${thread.threadId}" names snapshot ${head.slice(0, 12)}, which this worker's snapshot store does not have (the thread went on elsewhere and the actor has no shared snapshot store): set \`snapshots.remote\` in the actor, or deliver from the worker that ran it. To deliver this worker's copy anyway, pass --to ${sandbox.head.slice(0, 12)}.`,
      { cause: error, details: { threadId: thread.threadId, snapshot: head } },
    );
  }
}

/** The options every delivery command takes: `--thread ID`, and `--from`/`--to` for a range. */
export const THREAD_DELIVERY_OPTIONS = {
  thread: { type: 'string' },
  from: { type: 'string' },
  to: { type: 'string' },
} as const;

/**
 * A thread opened by a delivery command, with its `--from` resolved (undefined: not given, the
 * base) and `--to` resolved (default the thread's latest checkpoint, see {@link threadHead}).
 */
export interface ThreadDelivery {
  thread: ThreadContext;
  sandbox: DeliverySandbox;
  from: string | undefined;
  to: string;
}

/**
 * Opens a thread for a `sandbox` delivery command (`diff`, `apply`, `commit`): its delivery
 * sandbox, `refs.from` and `refs.to` resolved by {@link resolveThreadRef}, then `work`; the
 * thread is closed whatever happens.
 */
export async function withThreadDelivery<T>(
  openThread: OpenThreadContext,
  context: CommandContext,
  threadId: string,
  refs: { from?: string | undefined; to?: string | undefined },
  work: (delivery: ThreadDelivery) => Promise<T>,
): Promise<T> {
  const thread = await openThread(context.workspace, threadId, {
    cwd: context.projectDir,
    signal: context.signal,
  });
  try {
    const sandbox = deliverySandboxOf(thread);
    const resolve = (ref: string | undefined): Promise<string | undefined> | undefined =>
      ref === undefined ? undefined : resolveThreadRef(thread, sandbox, ref, context.signal);
    const from = await resolve(refs.from);
    const to = (await resolve(refs.to)) ?? (await threadHead(thread, sandbox, context.signal));
    return await work({ thread, sandbox, from, to });
  } finally {
    await thread.close();
  }
}

/** The options of the delivering commands (apply, commit) about what they may deliver. */
export const DELIVERY_SCREEN_OPTIONS = {
  'include-config': { type: 'boolean' },
  'allow-symlinks-out': { type: 'boolean' },
} as const;

/** Usage lines for {@link DELIVERY_SCREEN_OPTIONS}. */
export const DELIVERY_SCREEN_USAGE = `  --include-config      also take changes to .agents/ (actors, servers, skills, policy: what
                        the next run may do); left out by default, and listed
  --allow-symlinks-out  also take symlinks pointing outside the project or into .git (refused
                        by default; taken with a warning)`;

/**
 * The workspace folder as a project-relative configuration prefix when it lies inside the
 * project under another name than `.agents` (a `--workspace` inside the project).
 */
export function configPrefixesOf(workspace: string, project: string): string[] {
  const rel = relative(project, workspace);
  if (rel === '' || rel === '..' || rel.startsWith(`..${sep}`) || rel.startsWith(sep)) return [];
  return [rel.split(sep).join('/')];
}

/** {@link DeliveryScreenOptions} from the command line and the command's workspace. */
export function deliveryScreenOf(
  values: { 'include-config'?: boolean | undefined; 'allow-symlinks-out'?: boolean | undefined },
  workspace: string,
  project: string,
): DeliveryScreenOptions {
  return {
    includeConfig: values['include-config'] === true,
    allowSymlinksOut: values['allow-symlinks-out'] === true,
    configPrefixes: configPrefixesOf(workspace, project),
  };
}

/**
 * Warns about what a delivery took only because it was asked to (configuration, symlinks out),
 * on `stream` (stderr: a warning, not the result).
 */
export function printTakenOnRequest(
  stream: NodeJS.WritableStream,
  result: { config: readonly string[]; warnings: readonly string[] },
): void {
  if (result.config.length > 0) {
    stream.write(
      `Warning: took ${result.config.length} configuration change(s) under .agents/ (--include-config; they change what the next run may do): ${result.config.map(quotePath).join(', ')}\n`,
    );
  }
  for (const warning of result.warnings)
    stream.write(`Warning: took ${warning} (--allow-symlinks-out)\n`);
}

/** One `  LABEL  PATH (reason)` line per path a delivery left out, paths quoted. */
export function formatSkipped(
  skipped: ReadonlyArray<{ path: string; reason: string }>,
  width: number,
): string[] {
  return skipped.map(
    (item) => `  ${'skipped'.padEnd(width)}${quotePath(item.path)} (${item.reason})`,
  );
}
