import { DeltaValue, ReducedValue, StateSchema } from '@langchain/langgraph';
import { z } from 'zod';
import { ChangeRecordSchema } from '../core/change-record.js';
import { reduceSandboxHead } from '../core/head-claim.js';
import type { HeadClaim } from '../core/head-claim.js';
import type { ChangeRecord } from '../core/change-record.js';
import {
  ActiveSkillSchema,
  RollbackRecordSchema,
  type ActiveSkillState,
  type RollbackRecord,
} from '../core/sandbox-state.js';

/**
 * Appends change records. Safe for parallel tool calls: several writers in one superstep each
 * append, where a plain (LastValue) field would fail with `InvalidUpdateError`.
 */
export function appendChangeRecords(
  current: ChangeRecord[] | undefined,
  next: ChangeRecord | ChangeRecord[] | undefined,
): ChangeRecord[] {
  if (next === undefined) return current ?? [];
  return [...(current ?? []), ...(Array.isArray(next) ? next : [next])];
}

/**
 * {@link appendChangeRecords} over a batch of writes, copying the log once: the batch reducer of
 * the `changeLog` delta channel (batching-invariant, as LangGraph requires).
 */
function appendChangeRecordBatch(
  current: ChangeRecord[],
  writes: Array<ChangeRecord | ChangeRecord[] | undefined>,
): ChangeRecord[] {
  const next = [...current];
  for (const write of writes) {
    if (write === undefined) continue;
    if (Array.isArray(write)) next.push(...write);
    else next.push(write);
  }
  return next;
}

/**
 * Last write wins, but through a reducer so that several writers in one superstep (parallel
 * tool calls through `createAgent` middleware) do not fail; writers there all report the same,
 * final head (see agent-middleware.ts).
 */
function lastWriteWins<T>(current: T | undefined, next: T | undefined): T | undefined {
  return next ?? current;
}

/** Last write wins, `null` included (a write of `null` means "no skill active"). */
function latestActiveSkill(
  current: ActiveSkillState | null | undefined,
  next: ActiveSkillState | null | undefined,
): ActiveSkillState | null {
  return next === undefined ? (current ?? null) : next;
}

/** zod schema of a {@link HeadClaim} (a tool task's write to `sandboxHead`). */
const HeadClaimSchema = z.object({
  kind: z.literal('head-claim'),
  sha: z.string(),
  step: z.string(),
  ancestors: z.array(z.string()),
});

/**
 * The graph state fields this library reads and writes. Spread them into your own
 * `StateSchema`:
 *
 * ```ts
 * const State = new StateSchema({ messages: MessagesValue, ...sandboxStateFields });
 * ```
 *
 * - `changeLog`: every `ChangeRecord` of the thread, in order (append reducer).
 * - `sandboxHead`: snapshot sha of the sandbox tree this state belongs to ('' before the first
 *   snapshot). Every LangGraph checkpoint therefore records its file state, which is what
 *   rollback restores. Parallel tool tasks write head claims (see `core/head-claim.ts`), so the
 *   step's newest snapshot wins whatever order the tasks finish in.
 * - `rollbacks`: the thread's rollbacks and undos with their safety snapshots, written whole by
 *   `rollback()` and `undoRollback()` (a fork starts from an older checkpoint, so the list is
 *   carried over from the thread's head rather than appended to the target's).
 * - `activeSkill`: the Agent Skill the thread activated last and its `allowed-tools`, which the
 *   tool pipeline enforces (null when none).
 */
export const sandboxStateFields = {
  changeLog: new ReducedValue(
    z.array(ChangeRecordSchema).default(() => []),
    {
      // Optional: `createAgent` validates a first input against the input schemas.
      inputSchema: z.union([ChangeRecordSchema, z.array(ChangeRecordSchema)]).optional(),
      reducer: appendChangeRecords,
    },
  ),
  // Default '' (no head yet; readers treat it as absent) so that every write, the first one
  // included, goes through the reducer: LangGraph stores the first write of an empty channel
  // as is, which would keep a claim object instead of a sha.
  sandboxHead: new ReducedValue(z.string().default(''), {
    // Optional so that `createAgent` does not demand it in the first input.
    inputSchema: z.union([z.string(), HeadClaimSchema]).optional(),
    reducer: reduceSandboxHead,
  }),
  rollbacks: new ReducedValue(
    z.array(RollbackRecordSchema).default(() => []),
    {
      inputSchema: z.array(RollbackRecordSchema).optional(),
      reducer: lastWriteWins<RollbackRecord[]>,
    },
  ),
  // Checkpointed, so a thread resumed in another process (or rolled back) keeps the
  // `allowed-tools` of the skill active at that point; `null` (the default) is "none active".
  activeSkill: new ReducedValue(ActiveSkillSchema.nullable().default(null), {
    inputSchema: ActiveSkillSchema.nullable().optional(),
    reducer: latestActiveSkill,
  }),
};

/**
 * The same fields for long-running hand-built `StateGraph`s: `changeLog` is a LangGraph delta
 * channel (`DeltaValue`), so a checkpoint stores the records its own step added instead of the
 * whole log again (whole-log storage grows with calls × history). Pair it with
 * `messages: MessagesDeltaValue`; the actor graph does. Not for `createAgent` (langchain 1.5
 * cannot initialise delta fields in middleware state): use {@link sandboxStateFields} there.
 */
export const sandboxDeltaStateFields = {
  changeLog: new DeltaValue(
    z.array(ChangeRecordSchema).default(() => []),
    {
      inputSchema: z.union([ChangeRecordSchema, z.array(ChangeRecordSchema)]).optional(),
      reducer: appendChangeRecordBatch,
    },
  ),
  sandboxHead: sandboxStateFields.sandboxHead,
  rollbacks: sandboxStateFields.rollbacks,
  activeSkill: sandboxStateFields.activeSkill,
};

/**
 * A ready `StateSchema` holding only the sandbox fields, for `createAgent` middleware
 * (`stateSchema`) or graphs that keep messages elsewhere.
 */
export const SandboxStateSchema = new StateSchema(sandboxStateFields);

/** The update a node returns to record changes: records to append and the new head. */
export interface SandboxStateUpdate {
  changeLog?: ChangeRecord | ChangeRecord[];
  /** A sha sets the head; a {@link HeadClaim} competes with its step's other claims. */
  sandboxHead?: string | HeadClaim;
  activeSkill?: ActiveSkillState | null;
}
