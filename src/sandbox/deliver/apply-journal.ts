import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AgentsError, AgentsErrorCode } from '../../errors.js';
import { fingerprint, readUserPath, writeUserPath, type FileState } from './user-files.js';
import { writeFileAtomic } from '../../core/atomic-write.js';
import { quotePath } from './guard.js';
import { restoreConflictIndex, type IndexConflictRecord } from './conflict-index.js';

const RECORD_FILE = 'apply.json';

/** One path an apply wrote: what was there before (to put back) and what it wrote. */
interface RecordedFile {
  path: string;
  /** Mode and the file (under `before/`) holding the old bytes; null when nothing was there. */
  before: { mode: string; file: string } | null;
  /** Fingerprint of what apply wrote, to notice edits made after it. */
  after: string;
}

/** The record of one apply, in `<journal>/<id>/apply.json`. */
export interface ApplyRecord {
  id: string;
  time: string;
  target: string;
  from: string;
  to: string;
  files: RecordedFile[];
  /** Index entries the apply replaced with conflict stages (put back by the undo). */
  index?: IndexConflictRecord[];
  /** When `undoApply` put the files back. */
  undoneAt?: string;
}

/**
 * Records an apply before it writes anything: the exact old bytes of every path it will write
 * (copied under `before/`), and a fingerprint of what it will write. Returns the record's id,
 * which sorts by time.
 */
export async function recordApply(
  journalDir: string,
  apply: {
    target: string;
    from: string;
    to: string;
    files: Array<{ path: string; before: FileState | undefined; after: FileState | undefined }>;
    index?: IndexConflictRecord[];
  },
): Promise<string> {
  const now = new Date();
  const id = `${now.toISOString().replace(/[-:.]/g, '')}-${randomBytes(3).toString('hex')}`;
  const dir = join(journalDir, id);
  await mkdir(join(dir, 'before'), { recursive: true });
  const files: RecordedFile[] = [];
  for (const [index, file] of apply.files.entries()) {
    let before: RecordedFile['before'] = null;
    if (file.before !== undefined) {
      const name = String(index);
      await writeFile(join(dir, 'before', name), file.before.bytes);
      before = { mode: file.before.mode, file: name };
    }
    files.push({ path: file.path, before, after: fingerprint(file.after) });
  }
  const record: ApplyRecord = {
    id,
    time: now.toISOString(),
    target: apply.target,
    from: apply.from,
    to: apply.to,
    files,
    ...(apply.index === undefined ? {} : { index: apply.index }),
  };
  await writeRecord(dir, record);
  return id;
}

async function writeRecord(dir: string, record: ApplyRecord): Promise<void> {
  await writeFileAtomic(join(dir, RECORD_FILE), `${JSON.stringify(record, null, 2)}\n`);
}

/** The applies recorded in `journalDir`, oldest first (empty when there are none). */
export async function listApplies(journalDir: string): Promise<ApplyRecord[]> {
  const names = await readdir(journalDir).catch(() => [] as string[]);
  const records: ApplyRecord[] = [];
  for (const name of names.sort()) {
    try {
      records.push(
        JSON.parse(await readFile(join(journalDir, name, RECORD_FILE), 'utf8')) as ApplyRecord,
      );
    } catch {
      // A folder without a readable record (an apply killed while recording) wrote nothing.
    }
  }
  return records;
}

/** Options of {@link undoApply}. */
export interface UndoApplyOptions {
  /** The apply to undo; default the latest one not yet undone. */
  applyId?: string;
  /** Put the files back even where they changed after the apply (those edits are lost). */
  force?: boolean;
  /** Report what would be put back, change nothing. */
  dryRun?: boolean;
}

/** What {@link undoApply} put back. */
export interface UndoApplyResult {
  applyId: string;
  target: string;
  dryRun: boolean;
  /** Paths restored to their exact bytes (or removed, where the apply had added them). */
  restored: string[];
  /**
   * With `force`, where the edits made after the apply were saved before being overwritten:
   * a folder holding each such file under its own path (absent when none were dropped).
   */
  backup?: { dir: string; paths: string[] };
}

/**
 * Puts back the files an apply wrote, byte for byte (added files are removed). Refuses with
 * `ROLLBACK_FAILED`, naming the paths, when any of them changed after the apply, unless
 * `force`. Throws `CHECKPOINT_NOT_FOUND` when there is no apply to undo.
 */
export async function undoApply(
  journalDir: string,
  options: UndoApplyOptions = {},
): Promise<UndoApplyResult> {
  const records = await listApplies(journalDir);
  const record =
    options.applyId === undefined
      ? records.filter((item) => item.undoneAt === undefined).at(-1)
      : records.find((item) => item.id === options.applyId);
  if (record === undefined || record.undoneAt !== undefined) {
    throw new AgentsError(
      AgentsErrorCode.CheckpointNotFound,
      options.applyId === undefined
        ? 'There is no apply of this sandbox left to undo.'
        : `Apply "${options.applyId}" ${record === undefined ? 'is not recorded' : 'was already undone'} for this sandbox.`,
      {
        details: {
          journalDir,
          ...(options.applyId === undefined ? {} : { applyId: options.applyId }),
        },
      },
    );
  }
  const dir = join(journalDir, record.id);
  const changed: string[] = [];
  for (const file of record.files) {
    const now = await readUserPath(record.target, file.path);
    const current = now !== undefined && 'blocked' in now ? 'blocked' : fingerprint(now);
    if (current !== file.after) changed.push(file.path);
  }
  if (changed.length > 0 && options.force !== true) {
    throw new AgentsError(
      AgentsErrorCode.RollbackFailed,
      `Not undoing apply ${record.id}: ${changed.map(quotePath).join(', ')} changed after it was applied (by you or a merge tool such as git mergetool); undoing would lose what is there now. Keep it and leave the apply in place, or pass --force to put back what you had before the apply (what is there now is saved in a backup folder first, and its path printed).`,
      { details: { applyId: record.id, changed } },
    );
  }
  const restored = record.files.map((file) => file.path);
  if (options.dryRun === true) {
    return { applyId: record.id, target: record.target, dryRun: true, restored };
  }
  // Forced over later edits: keep them first (same relative paths), so nothing is lost.
  let backup: UndoApplyResult['backup'];
  if (changed.length > 0) {
    const backupDir = join(dir, `dropped-${new Date().toISOString().replace(/[-:.]/g, '')}`);
    const saved: string[] = [];
    for (const path of changed) {
      const now = await readUserPath(record.target, path);
      if (now === undefined || 'blocked' in now) continue;
      await writeUserPath(backupDir, path, now);
      saved.push(path);
    }
    if (saved.length > 0) backup = { dir: backupDir, paths: saved };
  }
  // Newest writes first, so a folder an apply made is empty again before its files go.
  for (const file of [...record.files].reverse()) {
    const before =
      file.before === null
        ? undefined
        : { mode: file.before.mode, bytes: await readFile(join(dir, 'before', file.before.file)) };
    await writeUserPath(record.target, file.path, before);
  }
  // The conflicts it recorded in the index: the entries those paths had before.
  if (record.index !== undefined) await restoreConflictIndex(record.target, record.index);
  await writeRecord(dir, { ...record, undoneAt: new Date().toISOString() });
  return {
    applyId: record.id,
    target: record.target,
    dryRun: false,
    restored,
    ...(backup === undefined ? {} : { backup }),
  };
}
