import type { RunnableConfig } from '@langchain/core/runnables';
import type { ChangeRecord } from '../core/change-record.js';
import type { Sandbox } from '../sandbox/types.js';
import type { CheckpointedGraph } from './checkpointed-graph.js';
import { readSandboxState } from '../core/sandbox-state.js';
import { UNATTRIBUTED_TOOL_ID } from './unattributed-id.js';

/** What {@link recordUnattributedChanges} found and recorded. */
export interface UnattributedChanges {
  record: ChangeRecord;
  /** The checkpoint the record was written to; absent when the thread has no checkpoint yet. */
  forkConfig?: RunnableConfig;
}

/**
 * Run when a thread's sandbox is reopened, before any call: snapshots what changed since the
 * snapshot the thread's state last recorded (a call killed before its snapshot, a state write
 * lost to a crash, edits made in the sandbox by hand) and records it as a change record of its
 * own, with `toolId` {@link UNATTRIBUTED_TOOL_ID}, in the thread's `changeLog` (a new checkpoint,
 * written with `updateState`). Without this the next call's snapshot would credit those changes
 * to that call. Returns `undefined` when nothing changed. The thread must not be running.
 */
export async function recordUnattributedChanges(input: {
  graph: CheckpointedGraph;
  threadId: string;
  sandbox: Sandbox;
  signal?: AbortSignal;
}): Promise<UnattributedChanges | undefined> {
  const { graph, threadId, sandbox } = input;
  const head = await graph.getState({ configurable: { thread_id: threadId } });
  const hasCheckpoint = head.createdAt !== undefined;
  const from = readSandboxState(head.values).sandboxHead ?? sandbox.base;
  const snapshot = await sandbox.snapshot(
    `unattributed changes of thread ${threadId}`,
    input.signal === undefined ? {} : { signal: input.signal },
  );
  if (snapshot.sha === from) return undefined;
  const record: ChangeRecord = {
    toolId: UNATTRIBUTED_TOOL_ID,
    snapshot: snapshot.sha,
    parent: from,
    changed: await sandbox.diff(from, snapshot.sha),
  };
  if (!hasCheckpoint) return { record };
  const forkConfig = await graph.updateState(head.config, {
    changeLog: [record],
    sandboxHead: snapshot.sha,
  });
  return { record, forkConfig };
}
