/*
 * The last step of an actor's start (start-actor.ts), for a thread's own sandbox: bring it in
 * line with the thread's checkpoints before the next run. Apart from the start's other steps
 * because it is about the thread's past (it ran on another worker, a run was killed mid-call,
 * files changed outside any call), not about what the start opens; it reads the compiled
 * graph, so it runs once everything else is made.
 */
import { errorMessage } from '../errors.js';
import type { AuditLog } from '../policy/audit-log.js';
import type { Sandbox } from '../sandbox/types.js';
import type { CheckpointedGraph } from '../thread/checkpointed-graph.js';
import { planResume } from '../thread/resume-plan.js';
import { recordUnattributedChanges } from '../thread/unattributed.js';
import type { ActorGraph } from './actor-graph.js';
import type { ActorSandbox } from './actor-sandbox.js';
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
  // Else what changed since the thread's last recorded snapshot (edits by hand, a state write
  // lost to a crash) is recorded as its own change record, so the next call is not credited.
  const found = await recordUnattributedChanges({
    graph,
    threadId,
    sandbox: opened.sandbox,
    ...(signal === undefined ? {} : { signal }),
  });
  if (found === undefined) return;
  const { record } = found;
  const paths = record.changed.map((change) => `${change.status} ${change.path}`);
  onWarning?.(
    `Thread "${threadId}" had changes no recorded tool call made (a call stopped before its snapshot?): ${paths.join(', ')}. Recorded as unattributed changes, snapshot ${record.snapshot}.`,
  );
  const unknown = { value: false, source: 'default' as const };
  await options.auditLog
    .append({
      time: new Date().toISOString(),
      event: 'unattributed-changes',
      actor: options.actor,
      thread: threadId,
      toolId: record.toolId,
      toolName: 'unattributed changes',
      fingerprint: '',
      capabilities: {
        readOnly: unknown,
        writes: unknown,
        destructive: unknown,
        openWorld: unknown,
      },
      args: { changed: paths },
      durationMs: 0,
      snapshot: record.snapshot,
      changed: record.changed.length,
    })
    .catch((error: unknown) => onWarning?.(`Audit log write failed: ${errorMessage(error)}`));
}

/**
 * When the thread's last run was killed with tool calls unfinished, brings the sandbox to the
 * files the continued run must start from (the checkpoint's head advanced by the calls that
 * completed: see `planResume`), discarding what the killed calls left (`restore` keeps it in
 * a safety snapshot). Returns what it did, or `undefined` when no call is unfinished or the
 * files already match. Deterministic on every worker: before, the same worker sometimes kept
 * the partial write as "unattributed changes" and re-ran the call, so a write landed twice.
 */
async function discardKilledCallWrites(
  graph: CheckpointedGraph,
  threadId: string,
  sandbox: Sandbox,
  signal: AbortSignal | undefined,
): Promise<{ calls: string; safety: string } | undefined> {
  const state = await graph.getState({ configurable: { thread_id: threadId } });
  const plan = planResume(state);
  if (!plan.unfinished || plan.rerun.length === 0) return undefined;
  const target = plan.head ?? sandbox.base;
  const restored = await sandbox.restore(target, signal === undefined ? {} : { signal });
  if (restored.changed.length === 0) return undefined;
  return {
    calls: plan.rerun.map((call) => `${call.name} (${call.id})`).join(', '),
    safety: restored.safety.sha,
  };
}
