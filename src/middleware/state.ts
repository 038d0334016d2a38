import { DeltaValue, ReducedValue, StateSchema } from '@langchain/langgraph';
import { z } from 'zod';
import type { ChangeRecord } from '../core/tool-descriptor.js';

/** zod schema of one changed path (`ChangedPath`), as stored in graph state. */
export const ChangedPathSchema = z.object({
  status: z
    .string()
    .describe('git status letter: A (added), M (modified), D (deleted), T (type change).'),
  path: z.string().describe('Logical path, relative to the sandbox root.'),
});

/** zod schema of a `ChangeRecord` as stored in graph state (the `changeLog` items). */
export const ChangeRecordSchema = z.object({
  toolCallId: z.string().optional().describe('The tool call that made the change.'),
  toolId: z.string().describe('Stable id of the tool (`mcp:SERVER/TOOL`, `builtin:NAME`, ...).'),
  snapshot: z.string().describe('Snapshot sha taken right after the call.'),
  parent: z.string().describe('Snapshot sha the call started from.'),
  changed: z.array(ChangedPathSchema).describe('What the call changed.'),
  skipped: z
    .array(
      z.object({
        path: z.string(),
        reason: z.enum(['size-cap', 'nested-repo', 'git-name', 'empty-repo']),
        size: z.number().optional(),
      }),
    )
    .optional()
    .describe(
      'Paths the call left that the snapshot could not capture (not restored by a rollback).',
    ),
});

/** zod schema of one rollback or undo of a thread, as stored in graph state (`rollbacks`). */
export const RollbackRecordSchema = z.object({
  kind: z
    .enum(['rollback', 'undo'])
    .describe('`rollback`: the thread went back to `to`; `undo`: the latest rollback was undone.'),
  safety: z
    .string()
    .describe('Safety snapshot sha: the exact sandbox tree just before this operation.'),
  from: z.string().describe('Checkpoint id the thread was at before this operation.'),
  to: z.string().describe('Checkpoint id whose state was forked.'),
  sandboxHead: z.string().describe('Snapshot sha the files were restored to.'),
  time: z.string().describe('ISO time of the operation.'),
});

/**
 * zod schema of the active Agent Skill of a thread, as stored in graph state (`activeSkill`).
 * `allowedTools: null` means the skill restricts nothing.
 */
export const ActiveSkillSchema = z.object({
  name: z.string().describe('The active Agent Skill.'),
  allowedTools: z
    .array(z.string())
    .nullable()
    .describe("The skill's `allowed-tools` entries; null when it does not restrict tools."),
});

/** The active Agent Skill of a thread (see {@link ActiveSkillSchema}). */
export type ActiveSkillState = z.infer<typeof ActiveSkillSchema>;

/**
 * Where the skill activation tool puts the skill it activated (an {@link ActiveSkillState}) in
 * its result's `_meta`; the tracked ToolNode moves it into the `activeSkill` state field.
 */
export const ACTIVE_SKILL_META_KEY = 'agents/skill';

/** Reads an {@link ActiveSkillState} out of unknown data (a result's `_meta` entry, a state field). */
export function readActiveSkill(value: unknown): ActiveSkillState | undefined {
  const parsed = ActiveSkillSchema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}

/** One rollback or undo of a thread (see {@link RollbackRecordSchema}). */
export type RollbackRecord = z.infer<typeof RollbackRecordSchema>;

/**
 * The rollbacks that can still be undone, oldest first: each `undo` cancels the latest rollback
 * not yet undone. The last one is what `undoRollback()` restores next.
 */
export function undoStack(records: readonly RollbackRecord[]): RollbackRecord[] {
  const stack: RollbackRecord[] = [];
  for (const record of records) {
    if (record.kind === 'rollback') stack.push(record);
    else stack.pop();
  }
  return stack;
}

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

/**
 * The graph state fields this library reads and writes. Spread them into your own
 * `StateSchema`:
 *
 * ```ts
 * const State = new StateSchema({ messages: MessagesValue, ...sandboxStateFields });
 * ```
 *
 * - `changeLog`: every `ChangeRecord` of the thread, in order (append reducer).
 * - `sandboxHead`: snapshot sha of the sandbox tree this state belongs to. Every LangGraph
 *   checkpoint therefore records its file state, which is what rollback restores.
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
  sandboxHead: new ReducedValue(z.string().optional(), {
    // Optional so that `createAgent` does not demand it in the first input.
    inputSchema: z.string().optional(),
    reducer: lastWriteWins<string>,
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

/** The values of the sandbox fields in a graph state. */
export interface SandboxState {
  changeLog: ChangeRecord[];
  sandboxHead?: string;
  /** Rollbacks and undos, oldest first (empty when none, or when the graph has no such field). */
  rollbacks: RollbackRecord[];
}

/** The update a node returns to record changes: records to append and the new head. */
export interface SandboxStateUpdate {
  changeLog?: ChangeRecord | ChangeRecord[];
  sandboxHead?: string;
  activeSkill?: ActiveSkillState | null;
}

/**
 * Reads the sandbox fields out of any state values (e.g. `StateSnapshot.values`), narrowing
 * from unknown; missing or malformed fields come back empty rather than throwing.
 */
export function readSandboxState(values: unknown): SandboxState {
  if (typeof values !== 'object' || values === null) return { changeLog: [], rollbacks: [] };
  const record = values as Record<string, unknown>;
  const parsed = z.array(ChangeRecordSchema).safeParse(record['changeLog']);
  const rollbacks = z.array(RollbackRecordSchema).safeParse(record['rollbacks']);
  const head = record['sandboxHead'];
  return {
    changeLog: parsed.success ? parsed.data : [],
    ...(typeof head === 'string' && head !== '' ? { sandboxHead: head } : {}),
    rollbacks: rollbacks.success ? rollbacks.data : [],
  };
}

/**
 * The tip of a batch of change records made in one step: the snapshot no other record in the
 * batch builds on. Parallel calls are serialized, so their records form a chain whatever order
 * they are listed in. Returns `undefined` for an empty batch.
 */
export function chainTip(records: readonly ChangeRecord[]): string | undefined {
  const advancing = records.filter((record) => record.snapshot !== record.parent);
  if (advancing.length === 0) return records.at(-1)?.snapshot;
  const parents = new Set(advancing.map((record) => record.parent));
  const tips = advancing.filter((record) => !parents.has(record.snapshot));
  return (tips.at(-1) ?? advancing.at(-1))?.snapshot;
}
