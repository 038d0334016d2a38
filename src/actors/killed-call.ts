import type { CheckpointedGraph } from '../thread/checkpointed-graph.js';
import { planResume } from '../thread/resume-plan.js';
import type { Sandbox } from '../sandbox/types.js';

/**
 * When the thread's last run was killed with tool calls unfinished, brings the sandbox to the
 * files the continued run must start from (the checkpoint's head advanced by the calls that
 * completed: see `planResume`), discarding what the killed calls left (`restore` keeps it in
 * a safety snapshot). Returns what it did, or `undefined` when no call is unfinished or the
 * files already match. Deterministic on every worker: before, the same worker sometimes kept
 * the partial write as "unattributed changes" and re-ran the call, so a write landed twice.
 */
export async function discardKilledCallWrites(
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
