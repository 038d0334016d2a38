import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runGit } from '../git.js';
import { literalPathspec } from '../git/git-store.js';
import type { DeliveryGitOptions } from './store-access.js';
import type { FileState } from './user-files.js';

/** A conflicting path's three versions: the sandbox's base, the user's, the sandbox's. */
export interface ConflictStages {
  path: string;
  base: FileState | undefined;
  yours: FileState | undefined;
  sandbox: FileState | undefined;
}

/**
 * What an apply did to the index for one path: its entries before (as `ls-files -s` prints
 * them, `MODE SHA STAGE\tPATH`, what `update-index --index-info` reads back) and the stage
 * entries it wrote (1 base, 2 yours, 3 the sandbox's).
 */
export interface IndexConflictRecord {
  path: string;
  before: string[];
  staged: string[];
}

const NULL_SHA = '0'.repeat(40);

/**
 * The user's repository when `target` is the top of its working tree (what `git status` and
 * `git mergetool` look at), else `undefined` (a plain folder: conflicts get `FILE.agent` only).
 */
export async function repositoryAt(
  target: string,
  options: DeliveryGitOptions,
): Promise<string | undefined> {
  const top = await runGit(['rev-parse', '--show-toplevel'], {
    cwd: target,
    ...(options.signal === undefined ? {} : { signal: options.signal }),
    okExitCodes: [128],
  }).catch(() => undefined);
  if (top === undefined || top.exitCode !== 0) return undefined;
  const [here, root] = await Promise.all([realpath(target), realpath(top.stdout.trim())]);
  return here === root ? target : undefined;
}

/**
 * Writes the three versions of each conflict into the user's object store (`hash-object -w`,
 * no filters, no programs) and works out the stage entries, as `git merge` leaves them: stage 1
 * the base, 2 yours, 3 the sandbox's, a side that has no file (deleted, or not there before)
 * has no entry. Nothing is written to the index yet ({@link writeConflictIndex} does, after the
 * apply record holds these, so an undo can put the old entries back). `undefined` when `target`
 * is not the top of a git working tree.
 */
export async function prepareConflictIndex(
  target: string,
  conflicts: readonly ConflictStages[],
  options: DeliveryGitOptions,
): Promise<IndexConflictRecord[] | undefined> {
  if (conflicts.length === 0) return [];
  const repo = await repositoryAt(target, options);
  if (repo === undefined) return undefined;
  const git = {
    cwd: repo,
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  };
  const folder = await mkdtemp(join(tmpdir(), 'agents-stages-'));
  try {
    const files: string[] = [];
    const wanted: Array<{ path: string; mode: string; stage: number; file: number }> = [];
    for (const conflict of conflicts) {
      const sides = [conflict.base, conflict.yours, conflict.sandbox];
      for (const [index, state] of sides.entries()) {
        if (state === undefined) continue;
        const file = join(folder, String(files.length));
        await writeFile(file, state.bytes);
        wanted.push({
          path: conflict.path,
          mode: state.mode,
          stage: index + 1,
          file: files.length,
        });
        files.push(file);
      }
    }
    const shas =
      files.length === 0
        ? []
        : (await runGit(['hash-object', '-w', '--no-filters', '--', ...files], git)).stdout
            .trim()
            .split('\n');
    const records: IndexConflictRecord[] = [];
    for (const conflict of conflicts) {
      const listed = await runGit(
        ['ls-files', '-s', '-z', ...literalPathspec([conflict.path])],
        git,
      );
      const before = listed.stdout
        .split('\0')
        .filter((line) => line !== '' && line.endsWith(`\t${conflict.path}`));
      const staged = wanted
        .filter((entry) => entry.path === conflict.path)
        .map((entry) => `${entry.mode} ${shas[entry.file]} ${entry.stage}\t${entry.path}`);
      records.push({ path: conflict.path, before, staged });
    }
    return records;
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

/** Replaces the index entries of each path with `pick(record)` (a mode-0 line drops them first). */
async function setIndexEntries(
  repo: string,
  records: readonly IndexConflictRecord[],
  pick: (record: IndexConflictRecord) => readonly string[],
  options: DeliveryGitOptions,
): Promise<void> {
  if (records.length === 0) return;
  const lines = records.flatMap((record) => [`0 ${NULL_SHA}\t${record.path}`, ...pick(record)]);
  await runGit(['update-index', '-z', '--index-info'], {
    cwd: repo,
    ...(options.signal === undefined ? {} : { signal: options.signal }),
    input: `${lines.join('\0')}\0`,
  });
}

/**
 * Records the conflicts in the user's index as unmerged stage entries, so `git status` lists
 * them ("both modified", "both added", "deleted by us/them") and `git mergetool` resolves each.
 * Runs git's own `update-index` (under the index lock, with the library's fixed config: no
 * hooks, no fsmonitor); only these paths' entries change.
 */
export function writeConflictIndex(
  target: string,
  records: readonly IndexConflictRecord[],
  options: DeliveryGitOptions,
): Promise<void> {
  return setIndexEntries(target, records, (record) => record.staged, options);
}

/** Puts back the index entries these paths had before the apply (see {@link writeConflictIndex}). */
export function restoreConflictIndex(
  target: string,
  records: readonly IndexConflictRecord[],
  options: DeliveryGitOptions = {},
): Promise<void> {
  return setIndexEntries(target, records, (record) => record.before, options);
}
