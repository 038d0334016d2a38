import type { BaseCheckpointSaver } from '@langchain/langgraph';
import type { RunnableConfig } from '@langchain/core/runnables';
import { AgentsError, AgentsErrorCode } from '../errors.js';
import { ChangeRecordSchema } from '../core/change-record.js';
import { withSaverMethods } from '../checkpoint/saver-proxy.js';

/*
 * The write-time assertion of issue 38, item 1: a checkpoint written after a step whose tool
 * calls recorded changes must name, as its `sandboxHead`, the snapshot of one of that step's
 * change records. A head that is none of them (an older head a task reported, a head from
 * another step) would make diff/apply/commit/rollback drop files silently; refusing the write
 * fails the run loudly instead, and the step re-runs from the previous checkpoint on resume.
 */

type PutArgs = Parameters<BaseCheckpointSaver['put']>;
type PutWritesArgs = Parameters<BaseCheckpointSaver['putWrites']>;

/** Snapshots of the change records each step wrote, by the checkpoint the step started from. */
class StepRecords {
  private readonly byCheckpoint = new Map<string, Set<string>>();

  add(key: string, snapshots: readonly string[]): void {
    if (snapshots.length === 0) return;
    let set = this.byCheckpoint.get(key);
    if (set === undefined) {
      set = new Set();
      this.byCheckpoint.set(key, set);
      // Only the step under way matters; older entries are dropped (bounded by thread count).
      if (this.byCheckpoint.size > 256) {
        const oldest = this.byCheckpoint.keys().next().value;
        if (oldest !== undefined) this.byCheckpoint.delete(oldest);
      }
    }
    for (const sha of snapshots) set.add(sha);
  }

  take(key: string): Set<string> | undefined {
    const set = this.byCheckpoint.get(key);
    this.byCheckpoint.delete(key);
    return set;
  }
}

function keyOf(config: RunnableConfig): string | undefined {
  const configurable = config.configurable ?? {};
  const id: unknown = configurable['checkpoint_id'];
  if (typeof id !== 'string') return undefined;
  return `${String(configurable['thread_id'] ?? '')}|${String(configurable['checkpoint_ns'] ?? '')}|${id}`;
}

/** The snapshots of change records in one write value (a record or a list of them). */
function recordSnapshots(value: unknown): string[] {
  const values = Array.isArray(value) ? value : [value];
  const out: string[] = [];
  for (const item of values) {
    const record = ChangeRecordSchema.safeParse(item);
    if (record.success) out.push(record.data.snapshot);
  }
  return out;
}

/**
 * The saver with the head check in front of `put`: `putWrites` notes the change records each
 * task of a step writes; `put` of the checkpoint that ends a loop step whose `sandboxHead`
 * changed is refused with `SANDBOX_FAILED` when the head is not one of the step's record
 * snapshots. Writes a resumed step made in another process are read back from the parent
 * checkpoint's pending writes. Reads and everything else go straight to the saver (a Proxy keeps
 * its class, so `instanceof` and private fields still work).
 */
export function withHeadCheck(saver: BaseCheckpointSaver): BaseCheckpointSaver {
  const records = new StepRecords();
  const putWrites = async (...args: PutWritesArgs): Promise<void> => {
    const [config, writes] = args;
    const key = keyOf(config);
    if (key !== undefined) {
      for (const [channel, value] of writes) {
        if (channel === 'changeLog') records.add(key, recordSnapshots(value));
      }
    }
    return saver.putWrites(...args);
  };
  const put = async (...args: PutArgs): Promise<RunnableConfig> => {
    const [config, checkpoint, metadata, newVersions] = args;
    const key = keyOf(config);
    const head: unknown = checkpoint.channel_values['sandboxHead'];
    const seen = key === undefined ? undefined : records.take(key);
    if (
      key !== undefined &&
      metadata.source === 'loop' &&
      'sandboxHead' in newVersions &&
      typeof head === 'string' &&
      head !== ''
    ) {
      const snapshots = seen ?? (await recordsFromSaver(saver, config));
      if (snapshots.size > 0 && !snapshots.has(head)) {
        const threadId = String(config.configurable?.['thread_id'] ?? '');
        throw new AgentsError(
          AgentsErrorCode.SandboxFailed,
          `Refused to write a checkpoint of thread "${threadId}" at step ${metadata.step}: its sandbox head ${head.slice(0, 10)} is not the snapshot of any change its own step recorded (${[...snapshots].map((sha) => sha.slice(0, 10)).join(', ')}), so it would drop files. This is a bug; report it. The thread stays at its previous checkpoint: \`agents actor resume --continue\` re-runs the step.`,
          { details: { threadId, step: metadata.step, head, snapshots: [...snapshots] } },
        );
      }
    }
    return saver.put(...args);
  };
  return withSaverMethods(saver, { put, putWrites });
}

/** The record snapshots in the pending writes of the checkpoint `config` names. */
async function recordsFromSaver(
  saver: BaseCheckpointSaver,
  config: RunnableConfig,
): Promise<Set<string>> {
  const tuple = await saver.getTuple(config);
  const out = new Set<string>();
  for (const [, channel, value] of tuple?.pendingWrites ?? []) {
    if (channel === 'changeLog') for (const sha of recordSnapshots(value)) out.add(sha);
  }
  return out;
}
