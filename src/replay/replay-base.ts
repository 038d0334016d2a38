/**
 * The base a replay starts from, written into its throwaway project: the files the cassette
 * holds, and for a large project's base (a listing of content ids, docs/replay.md) either
 * nothing more (a cassette replay needs no content: the servers are answered from the cassette,
 * the listed files count in the trees by their ids) or the files of `--base DIR`, the project as
 * it was recorded, which a replay with live servers needs. The base tree check then says whether
 * DIR held the recorded base.
 */
import { lstat, mkdir, readFile, readlink } from 'node:fs/promises';
import { join } from 'node:path';
import { AgentsError, AgentsErrorCode } from '../errors.js';
import type { BaseEntry, RecordedFile } from './cassette.js';
import { applyRecordedChanges, type ReplayFiles } from './file-replay.js';

/** Writes `base` into `projectDir` as described above. */
export async function writeReplayBase(
  projectDir: string,
  base: BaseEntry,
  files: ReplayFiles,
  source: string,
  options: { baseDir?: string; liveTools?: boolean },
): Promise<void> {
  await mkdir(projectDir, { recursive: true });
  await applyRecordedChanges(projectDir, base.files);
  const listing = base.listing ?? [];
  if (listing.length === 0 || options.baseDir === undefined) {
    if (listing.length > 0 && options.liveTools) {
      throw new AgentsError(
        AgentsErrorCode.CassetteInvalid,
        `Cassette ${source} holds its base (${listing.length} files) as content ids only, to stay small; --tools live starts the servers for real, and they need the files. Pass --base DIR, a folder holding the project as it was recorded (the recorded tree id is checked).`,
        { details: { source, listed: listing.length } },
      );
    }
    files.baseWritten(base.files, listing);
    return;
  }
  const copied: RecordedFile[] = [];
  for (const file of listing) {
    const from = join(options.baseDir, file.path);
    const stat = await lstat(from).catch(() => undefined);
    if (stat === undefined) {
      throw new AgentsError(
        AgentsErrorCode.CassetteInvalid,
        `--base ${options.baseDir} has no ${file.path}, a file of the recorded base of ${source}. Give the folder of the project as it was when the run was recorded.`,
        { details: { source, path: file.path, baseDir: options.baseDir } },
      );
    }
    copied.push(
      stat.isSymbolicLink()
        ? { path: file.path, mode: file.mode, text: await readlink(from) }
        : { path: file.path, mode: file.mode, base64: (await readFile(from)).toString('base64') },
    );
  }
  await applyRecordedChanges(projectDir, copied);
  files.baseWritten(base.files);
}
