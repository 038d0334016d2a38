import { join } from 'node:path';
import { snapshotRange } from './diff.js';
import {
  recordApply,
  undoApply,
  type UndoApplyOptions,
  type UndoApplyResult,
} from './apply-journal.js';
import { mergeText } from './merge-file.js';
import {
  prepareConflictIndex,
  repositoryAt,
  writeConflictIndex,
  type ConflictStages,
} from './conflict-index.js';
import { quotePath } from './guard.js';
import { screenChanges, type DeliveryScreenOptions, type SkippedChange } from './screen.js';
import {
  rawSnapshotDiff,
  readBlob,
  type DeliveryGitOptions,
  type DeliverySandbox,
} from './store-access.js';
import {
  ABSENT,
  blobId,
  EXECUTABLE,
  looksBinary,
  readUserPath,
  REGULAR,
  writeUserPath,
  type FileState,
} from './user-files.js';

/** Folder of a sandbox's run dir holding the records of applies (for `undoApply`). */
export const APPLIES_FOLDER = 'applies';

/** Options of {@link applySandbox}. */
export interface ApplySandboxOptions extends DeliveryGitOptions, DeliveryScreenOptions {
  /** Snapshot the changes start from (sha); default the sandbox's base. */
  from?: string;
  /** Snapshot the changes end at (sha), for "only what the run did up to step N"; default head. */
  to?: string;
  /** Only these files or folders (relative to the project; literal). */
  paths?: readonly string[];
  /** Work out and return what would be written, write nothing. */
  dryRun?: boolean;
  /**
   * `refuse` (default): any conflict stops the apply before a file is written. `markers`: text
   * conflicts are written with git's conflict markers; other conflicts (binary, deleted on one
   * side, both added, a type change) keep your file and get the sandbox's version beside it as
   * `PATH.agent`.
   */
  conflicts?: 'refuse' | 'markers';
  /**
   * With `conflicts: 'markers'` in a git working tree (default true): every conflict is also
   * recorded in the user's index as unmerged stage entries (1 base, 2 yours, 3 the sandbox's),
   * as `git merge` leaves them, so `git status` lists it and `git mergetool` resolves it; an
   * undo puts the index entries back. False: only the files (markers, `PATH.agent`).
   */
  conflictIndex?: boolean;
  /** The folder to apply to; default the sandbox's source (the user's project). */
  target?: string;
  /** Where apply records are kept; default `applies/` in the store's records folder. */
  journalDir?: string;
}

/** What apply does (or would do) to one path. */
export interface ApplyChange {
  path: string;
  /**
   * `write`: the sandbox's version replaces an unchanged file (or adds a new one); `delete`:
   * removed as in the sandbox; `merge`: your edits and the sandbox's merged cleanly;
   * `markers`: written with conflict markers (`--conflicts markers`); `beside`: the sandbox's
   * version of a conflicting file that cannot hold markers, written as `PATH.agent` next to it;
   * `unmerged`: a file you deleted and the sandbox changed, written back with the sandbox's
   * version and left unmerged in the index ("deleted by us", as git leaves it), for
   * `git mergetool` (keep it) or `git rm` (your deletion).
   */
  action: 'write' | 'delete' | 'merge' | 'markers' | 'beside' | 'unmerged';
}

/** A path apply cannot take without losing someone's edit. */
export interface ApplyConflict {
  path: string;
  reason: string;
}

/** What {@link applySandbox} did (or, for a dry run or on conflict, would do). */
export interface ApplyResult {
  dryRun: boolean;
  /** `false` when conflicts stopped it (nothing was written) or for a dry run. */
  applied: boolean;
  from: string;
  to: string;
  target: string;
  changes: ApplyChange[];
  conflicts: ApplyConflict[];
  /** Paths whose file already matches the sandbox's (nothing to do). */
  alreadyApplied: string[];
  /** Paths left out on purpose (nested repositories, configuration, symlinks out), with why. */
  skipped: SkippedChange[];
  /** Configuration paths taken because `includeConfig` was given (say so to the user). */
  config: string[];
  /** Symlinks out taken because `allowSymlinksOut` was given (say so to the user). */
  warnings: string[];
  /** Id of the apply record `undoApply` uses (absent when nothing was written). */
  applyId?: string;
  /** Paths recorded as unmerged in the index (see `conflictIndex`). */
  unmerged: string[];
}

interface Planned extends ApplyChange {
  after: FileState | undefined;
  before: FileState | undefined;
}

/**
 * Takes the sandbox's work back into the user's folder as a three-way merge per file against
 * the recorded base: a file the user left alone gets the sandbox's version; one both changed is
 * merged with `git merge-file`; one that cannot be merged (both changed the same lines, a
 * binary both changed, a file one side deleted and the other edited) is a conflict, and any
 * conflict stops the apply before anything is written (unless `conflicts: 'markers'`). Only the
 * working tree is written: the user's index, refs, objects and config are never touched (no git
 * command runs in their repo). What was there before is recorded so `undoApply` can put it back.
 */
export async function applySandbox(
  sandbox: DeliverySandbox,
  options: ApplySandboxOptions = {},
): Promise<ApplyResult> {
  const { from, to } = await snapshotRange(sandbox, options);
  const target = options.target ?? sandbox.source;
  const raw = from === to ? [] : await rawSnapshotDiff(sandbox, from, to, options.paths, options);
  const screened = await screenChanges(sandbox, raw, options);
  const planned: Planned[] = [];
  const conflicts: ApplyConflict[] = [];
  // The conflicts go into the user's index too (git status, git mergetool) when applying with
  // markers to the top of a git working tree.
  const indexed =
    options.conflicts === 'markers' &&
    options.conflictIndex !== false &&
    (await repositoryAt(target, options)) !== undefined;
  const stages: ConflictStages[] = [];
  const alreadyApplied: string[] = [];
  const blob = async (mode: string, sha: string): Promise<FileState | undefined> =>
    mode === ABSENT ? undefined : { mode, bytes: await readBlob(sandbox, sha, options) };
  for (const change of screened.kept) {
    options.signal?.throwIfAborted();
    const { path } = change;
    const yours = await readUserPath(target, path);
    if (yours !== undefined && 'blocked' in yours) {
      conflicts.push({ path, reason: yours.blocked });
      continue;
    }
    const same = (state: FileState | undefined, mode: string, sha: string): boolean =>
      state === undefined
        ? mode === ABSENT
        : state.mode === mode && blobId(state.bytes, sha) === sha;
    if (same(yours, change.dstMode, change.dstSha)) {
      alreadyApplied.push(path);
      continue;
    }
    const after = await blob(change.dstMode, change.dstSha);
    if (same(yours, change.srcMode, change.srcSha)) {
      planned.push({
        path,
        action: after === undefined ? 'delete' : 'write',
        before: yours,
        after,
      });
      continue;
    }
    const base = await blob(change.srcMode, change.srcSha);
    const reason =
      yours === undefined
        ? 'you deleted it; the sandbox changed it'
        : after === undefined
          ? 'you changed it; the sandbox deleted it'
          : base === undefined
            ? 'you and the sandbox both added it, differently'
            : undefined;
    // With markers, a conflict that cannot hold them leaves the sandbox's version beside yours
    // as PATH.agent (compare, keep one, delete the other); a deletion has nothing to put there.
    const beside = async (why: string): Promise<void> => {
      if (indexed) stages.push({ path, base, yours, sandbox: after });
      if (indexed && yours === undefined && after !== undefined) {
        planned.push({ path, action: 'unmerged', before: undefined, after });
        conflicts.push({
          path,
          reason: `${why}; the sandbox's version is back in the file, unmerged in the index (git mergetool keeps it, git rm ${quotePath(path)} keeps your deletion)`,
        });
        return;
      }
      if (indexed && after === undefined) {
        conflicts.push({
          path,
          reason: `${why}; unmerged in the index (git mergetool, or git rm ${quotePath(path)} for the deletion)`,
        });
        return;
      }
      if (options.conflicts !== 'markers' || after === undefined) {
        conflicts.push({
          path,
          reason:
            after === undefined && options.conflicts === 'markers'
              ? `${why}; keep your version or delete the file yourself`
              : why,
        });
        return;
      }
      const agentPath = `${path}.agent`;
      const there = await readUserPath(target, agentPath);
      if (there !== undefined) {
        conflicts.push({
          path,
          reason: `${why}; ${quotePath(agentPath)} is in the way, so the sandbox's version was not written`,
        });
        return;
      }
      planned.push({ path: agentPath, action: 'beside', before: undefined, after });
      conflicts.push({
        path,
        reason: `${why}; the sandbox's version is in ${quotePath(agentPath)}`,
      });
    };
    if (reason !== undefined || yours === undefined || after === undefined || base === undefined) {
      await beside(reason ?? 'changed on both sides');
      continue;
    }
    const regular = (mode: string) => mode === REGULAR || mode === EXECUTABLE;
    if (![yours, base, after].every((state) => regular(state.mode))) {
      await beside('changed on both sides (a symlink or a type change)');
      continue;
    }
    if ([yours, base, after].some((state) => looksBinary(state.bytes))) {
      await beside('a binary file changed on both sides');
      continue;
    }
    const merged = await mergeText(
      { yours: yours.bytes, base: base.bytes, sandbox: after.bytes },
      options,
    );
    // The mode follows whichever side changed it.
    const mode = base.mode === yours.mode ? after.mode : yours.mode;
    if (merged.conflicts === 0) {
      planned.push({ path, action: 'merge', before: yours, after: { mode, bytes: merged.bytes } });
    } else if (options.conflicts === 'markers') {
      if (indexed) stages.push({ path, base, yours, sandbox: after });
      planned.push({
        path,
        action: 'markers',
        before: yours,
        after: { mode, bytes: merged.bytes },
      });
      conflicts.push({
        path,
        reason: `${merged.conflicts} conflicting region(s), written with markers`,
      });
    } else {
      conflicts.push({
        path,
        reason: `${merged.conflicts} conflicting region(s): you and the sandbox changed the same lines`,
      });
    }
  }
  const changes = planned.map(({ path, action }) => ({ path, action }));
  const result: ApplyResult = {
    dryRun: options.dryRun === true,
    applied: false,
    from,
    to,
    target,
    changes,
    conflicts,
    alreadyApplied,
    skipped: screened.skipped,
    config: screened.config,
    warnings: screened.warnings,
    unmerged: stages.map((stage) => stage.path),
  };
  // With markers, what cannot hold markers (binaries, deletions) is listed and left alone.
  const stop = options.conflicts !== 'markers' && conflicts.length > 0;
  if (options.dryRun === true || stop || (planned.length === 0 && stages.length === 0))
    return { ...result, unmerged: options.dryRun === true ? result.unmerged : [] };
  const index = indexed ? await prepareConflictIndex(target, stages, options) : undefined;
  // The record is written before the first file, so an interrupted apply can still be undone.
  const applyId = await recordApply(
    options.journalDir ?? join(sandbox.store.recordsDir, APPLIES_FOLDER),
    {
      target,
      from,
      to,
      files: [
        ...planned.map(({ path, before, after }) => ({ path, before, after })),
        ...keptInConflict(stages, planned),
      ],
      ...(index === undefined || index.length === 0 ? {} : { index }),
    },
  );
  for (const item of planned) {
    options.signal?.throwIfAborted();
    await writeUserPath(target, item.path, item.after);
  }
  if (index !== undefined) await writeConflictIndex(target, index, options);
  return { ...result, applied: true, applyId, unmerged: (index ?? []).map((item) => item.path) };
}

/**
 * The conflicted paths whose file the apply left as the user had it (a binary or a file both
 * added: the sandbox's version went beside it as PATH.agent; a file the sandbox deleted), but
 * put unmerged in the index: `git mergetool` then rewrites or deletes that file. Recorded as
 * written with its own bytes, so the undo notices such a rewrite and, rather than lose the
 * user's version, refuses (or, forced, saves the rewrite first and puts the user's version back).
 */
function keptInConflict(
  stages: readonly ConflictStages[],
  planned: readonly Planned[],
): Array<{ path: string; before: FileState | undefined; after: FileState | undefined }> {
  const written = new Set(planned.map((item) => item.path));
  return stages
    .filter((stage) => !written.has(stage.path))
    .map((stage) => ({ path: stage.path, before: stage.yours, after: stage.yours }));
}

/**
 * Undoes the latest apply of `sandbox` not yet undone (or `applyId`): see `undoApply` in
 * `apply-journal.ts`. Reads the records `applySandbox` kept in the store's records folder.
 */
export function undoSandboxApply(
  sandbox: Pick<DeliverySandbox, 'store'>,
  options: UndoApplyOptions & { journalDir?: string } = {},
): Promise<UndoApplyResult> {
  const { journalDir, ...rest } = options;
  return undoApply(journalDir ?? join(sandbox.store.recordsDir, APPLIES_FOLDER), rest);
}
