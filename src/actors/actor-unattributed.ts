import { errorMessage } from '../errors.js';
import { recordUnattributedChanges } from '../thread/unattributed.js';
import type { AuditLog } from '../policy/audit-log.js';
import type { Sandbox } from '../sandbox/types.js';
import type { ActorGraph } from './actor-graph.js';

/**
 * On reopening a thread's sandbox: records what changed since the thread's last recorded
 * snapshot (a call killed mid-way) as its own change record, in the thread's state and the
 * audit log, so the next call is not credited with it.
 */
export async function recordUnattributed(options: {
  actor: string;
  graph: ActorGraph;
  threadId: string;
  sandbox: Sandbox;
  auditLog: AuditLog;
  signal: AbortSignal | undefined;
  onWarning: ((message: string) => void) | undefined;
}): Promise<void> {
  const { actor, threadId, auditLog, signal, onWarning } = options;
  const found = await recordUnattributedChanges({
    graph: options.graph,
    threadId,
    sandbox: options.sandbox,
    ...(signal === undefined ? {} : { signal }),
  });
  if (found === undefined) return;
  const { record } = found;
  const paths = record.changed.map((change) => `${change.status} ${change.path}`);
  onWarning?.(
    `Thread "${threadId}" had changes no recorded tool call made (a call stopped before its snapshot?): ${paths.join(', ')}. Recorded as unattributed changes, snapshot ${record.snapshot}.`,
  );
  const unknown = { value: false, source: 'default' as const };
  await auditLog
    .append({
      time: new Date().toISOString(),
      event: 'unattributed-changes',
      actor,
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
