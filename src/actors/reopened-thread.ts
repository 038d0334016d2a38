/*
 * The last step of an actor's start (start-actor.ts), for a thread's own sandbox: bring it in
 * line with the thread's checkpoints before the next run. Apart from the start's other steps
 * because it is about the thread's past (it ran on another worker, a run was killed mid-call,
 * files changed outside any call), not about what the start opens; it reads the compiled
 * graph, so it runs once everything else is made.
 */
import type { AuditLog } from '../policy/audit-log.js';
import type { ActorGraph } from './actor-graph.js';
import type { ActorSandbox } from './actor-sandbox.js';
import { recordUnattributed } from './actor-unattributed.js';
import { discardKilledCallWrites } from './killed-call.js';
import { syncSandboxToThread, type SharedThread } from './shared-thread.js';

/**
 * For a thread-bound sandbox: first the files of the thread's latest checkpoint when it can move
 * between workers; then, for a reopened one, the partial writes of a killed call discarded, or
 * else changes no call made recorded as unattributed. Says on `onWarning` what it changed.
 */
export async function settleReopenedThread(options: {
  actor: string;
  opened: (ActorSandbox & { shared: SharedThread | undefined }) | undefined;
  threadId: string | undefined;
  graph: ActorGraph;
  auditLog: AuditLog;
  signal: AbortSignal | undefined;
  onWarning: ((message: string) => void) | undefined;
}): Promise<void> {
  const { opened, threadId, graph, signal, onWarning } = options;
  if (!opened?.threadBound || threadId === undefined) return;
  if (opened.shared?.replica !== undefined) {
    // The thread may have run (or been rolled back) on another worker since this sandbox last
    // saw it: bring it to the files of the thread's latest checkpoint.
    const synced = await syncSandboxToThread({
      graph,
      threadId,
      sandbox: opened.sandbox,
      ...(signal ? { signal } : {}),
    });
    if (synced !== undefined && synced.safety !== synced.from) {
      onWarning?.(
        `Thread "${threadId}": this worker's files had changes no checkpoint recorded; the sandbox now holds the files of the thread's latest checkpoint (${synced.to}), and the old tree is kept in snapshot ${synced.safety}.`,
      );
    }
  }
  if (!opened.reopened) return;
  // A run killed mid-call: its partial write is always discarded (kept in a safety snapshot)
  // and the call runs again, on this worker as on any other (issue 38, item 3).
  const discarded = await discardKilledCallWrites(graph, threadId, opened.sandbox, signal);
  if (discarded !== undefined) {
    onWarning?.(
      `Thread "${threadId}": its last run was killed during ${discarded.calls}; what it left in the sandbox is discarded (kept in snapshot ${discarded.safety}) and the call runs again on --continue.`,
    );
    return;
  }
  await recordUnattributed({
    actor: options.actor,
    graph,
    threadId,
    sandbox: opened.sandbox,
    auditLog: options.auditLog,
    signal,
    onWarning,
  });
}
