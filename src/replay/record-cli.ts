/**
 * The recording side of `agents actor run|resume|chat --record`: the recorder with the actor's
 * config and the run's input written first, and the end (tree id, checkpoints made) written
 * while the sandbox is still open.
 */
import type { WorkspaceStore } from '../workspace/workspace-types.js';
import type { RunEntry } from './cassette.js';
import { createCassetteRecorder, type CassetteRecorder } from './cassette-recorder.js';
import { recordActorConfig } from './record-actor.js';
import { threadEntryOf, type ThreadStateView } from './thread-history.js';

/** What the CLI needs of an actor to count a thread's checkpoints and read its state. */
export interface CheckpointedActor {
  readonly graph: {
    getStateHistory(config: { configurable: { thread_id: string } }): AsyncIterable<unknown>;
    getState(config: { configurable: { thread_id: string } }): Promise<unknown>;
  };
}

/**
 * A recorder holding the actor's config and the run's input (none given: `agents chat` records
 * one `run` entry per turn as it is typed).
 */
export async function startCliRecording(
  store: WorkspaceStore,
  actorName: string,
  run?: Omit<RunEntry, 'kind'>,
): Promise<CassetteRecorder> {
  const recorder = createCassetteRecorder();
  await recordActorConfig(recorder, store, actorName);
  if (run !== undefined) recorder.record({ kind: 'run', ...run });
  return recorder;
}

/** How many checkpoints thread `threadId` of `actor` has. */
export async function countCheckpoints(
  actor: CheckpointedActor,
  threadId: string,
): Promise<number> {
  let count = 0;
  for await (const _ of actor.graph.getStateHistory({ configurable: { thread_id: threadId } })) {
    count++;
  }
  return count;
}

/**
 * Records the thread's state as the recording starts (the `thread` entry, for a thread that ran
 * before: a replay seeds its fresh thread with it) and returns its checkpoint count so far.
 */
export async function recordThreadStart(
  recorder: CassetteRecorder,
  actor: CheckpointedActor,
  threadId: string,
): Promise<number> {
  const state = (await actor.graph.getState({
    configurable: { thread_id: threadId },
  })) as ThreadStateView;
  const entry = threadEntryOf(state, (value) => recorder.redact(value));
  if (entry !== undefined) recorder.record(entry);
  return countCheckpoints(actor, threadId);
}

/** Records the end of the recorded run: the sandbox's tree id and the checkpoints it made. */
export async function endCliRecording(
  recorder: CassetteRecorder,
  actor: CheckpointedActor,
  threadId: string,
  checkpointsBefore: number | undefined,
): Promise<void> {
  const after = await countCheckpoints(actor, threadId);
  await recorder.files.end(after - (checkpointsBefore ?? 0));
}
