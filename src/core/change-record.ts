import { z } from 'zod';

/**
 * The change records of write-class tool calls: one zod schema each (they are checked when read
 * back from graph state and from `_meta`), and the TypeScript types inferred from them, so the
 * shape is written once.
 */

/** One changed path in a snapshot diff. */
export const ChangedPathSchema = z.object({
  status: z
    .string()
    .describe('git status letter: A (added), M (modified), D (deleted), T (type change).'),
  path: z.string().describe('Logical path, relative to the sandbox root.'),
});

/** One changed path in a snapshot diff (see {@link ChangedPathSchema}). */
export type ChangedPath = z.infer<typeof ChangedPathSchema>;

/**
 * A path the snapshots leave out, so a rollback neither restores nor removes it: over the size
 * cap (`size-cap`), a nested repository kept only as a gitlink or a stray `.git`
 * (`nested-repo`), a name git refuses to record (`git-name`, `empty-repo`), or a fifo where git
 * reads a file (`special-file`).
 */
export const SkippedPathSchema = z.object({
  path: z.string().describe('Logical path, relative to the sandbox root.'),
  reason: z.enum(['size-cap', 'nested-repo', 'git-name', 'empty-repo', 'special-file']),
  size: z.number().optional().describe('Size in bytes when last seen (`size-cap`).'),
});

/** A path the snapshots leave out (see {@link SkippedPathSchema}). */
export type SkippedPath = z.infer<typeof SkippedPathSchema>;

/** What one write-class tool call changed in the sandbox, as kept in graph state (`changeLog`). */
export const ChangeRecordSchema = z.object({
  toolCallId: z.string().optional().describe('The tool call that made the change.'),
  toolId: z.string().describe('Stable id of the tool (`mcp:SERVER/TOOL`, `builtin:NAME`, ...).'),
  snapshot: z.string().describe('Snapshot sha taken right after the call.'),
  parent: z.string().describe('Snapshot sha the call started from.'),
  changed: z.array(ChangedPathSchema).describe('What the call changed.'),
  skipped: z
    .array(SkippedPathSchema)
    .optional()
    .describe(
      'Paths the call left that the snapshot could not capture (a file over the size cap, a nested repository, ...): a rollback neither restores nor removes them. Absent when none.',
    ),
  scan: z
    .enum(['watched', 'full'])
    .optional()
    .describe(
      'How the snapshot found what changed: `watched` (only the paths the sandbox watcher reported were re-read) or `full` (the whole tree was scanned: the change set was unknown). Absent from older records.',
    ),
  scanReason: z
    .string()
    .optional()
    .describe('Why a `full` scan was needed (e.g. the watcher overflowed, a .gitignore changed).'),
});

/** What one write-class tool call changed in the sandbox (see {@link ChangeRecordSchema}). */
export type ChangeRecord = z.infer<typeof ChangeRecordSchema>;
