import { z } from 'zod';
import { ChangeRecordSchema } from './change-record.js';
import type { ChangeRecord } from './change-record.js';

/*
 * The sandbox fields of a graph state as plain records: their zod schemas and readers, without
 * LangGraph. `thread/state.ts` builds the LangGraph state fields from these; commands that
 * only read a checkpoint's values (`agents sandbox diff`, `checkpoints`) import this module and
 * so never load LangGraph (issue 29: start-up is module count).
 */

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

// Kept in its own zod-free module: `agents checkpoints` reads it without zod (issue 29).
export { undoStack } from './undo-stack.js';

/** The values of the sandbox fields in a graph state. */
export interface SandboxState {
  changeLog: ChangeRecord[];
  sandboxHead?: string;
  /** Rollbacks and undos, oldest first (empty when none, or when the graph has no such field). */
  rollbacks: RollbackRecord[];
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
