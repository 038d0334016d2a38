import { isProcessAlive } from '../core/process-alive.js';
import { mkdir, readdir, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AgentsError, AgentsErrorCode } from '../errors.js';
import { removeTree } from './remove-tree.js';
import { MARKER_FILE } from './sandbox-marker.js';

/*
 * Issue 38 item 10: a run killed while it made its sandbox in a given folder (a thread's
 * `sandbox/` folder) left a half-made sandbox there with no marker, and every later run, the
 * `--continue` too, stopped at "the folder is not empty" (exit 7) until the user removed it.
 * Creation now writes a mark into the folder before anything else and removes it once the
 * sandbox's marker is written: a folder holding our mark, for the same sandbox id, from a process
 * that is gone and with no marker, is a creation that never finished, and is removed and made
 * again. Any other non-empty folder is not ours and is still refused.
 */

/** Written into the sandbox folder first, removed once the sandbox's marker is written. */
export const CREATION_MARK = '.agents-sandbox-creating';
const MARK_KIND = 'agents-sandbox-creating';

interface CreationMark {
  kind: typeof MARK_KIND;
  id: string;
  pid: number;
}

async function readMark(dir: string): Promise<CreationMark | undefined> {
  try {
    const parsed = JSON.parse(
      await readFile(join(dir, CREATION_MARK), 'utf8'),
    ) as Partial<CreationMark>;
    if (parsed.kind !== MARK_KIND || typeof parsed.id !== 'string') return undefined;
    if (typeof parsed.pid !== 'number' || !Number.isInteger(parsed.pid)) return undefined;
    return parsed as CreationMark;
  } catch {
    return undefined;
  }
}

async function hasMarker(dir: string): Promise<boolean> {
  return readFile(join(dir, 'run', MARKER_FILE)).then(
    () => true,
    () => false,
  );
}

/**
 * Why a non-empty `dir` is a creation of sandbox `id` that never finished (so it may be removed),
 * or undefined when it is not (not ours, another sandbox, a live creation, or a finished one).
 */
async function unfinishedCreation(
  dir: string,
  id: string,
  entries: readonly string[],
): Promise<CreationMark | undefined> {
  const mark = await readMark(dir);
  if (mark === undefined || mark.id !== id || isProcessAlive(mark.pid)) return undefined;
  // Only what creation makes: the mark, the run folder and the tree folder named by the id.
  if (!entries.every((entry) => entry === CREATION_MARK || entry === 'run' || entry === id))
    return undefined;
  return (await hasMarker(dir)) ? undefined : mark;
}

/**
 * Makes `dir` (with parents) for a new sandbox `id` and marks the creation in progress. An empty
 * folder, or one left by a creation of the same sandbox that was killed, is used (the leftover is
 * removed); any other non-empty folder is refused with `SANDBOX_FAILED`. Returns the real path.
 */
export async function prepareCreationDir(dir: string, id: string): Promise<string> {
  await mkdir(dir, { recursive: true });
  const entries = await readdir(dir);
  if (entries.length > 0) {
    if ((await unfinishedCreation(dir, id, entries)) === undefined) {
      throw new AgentsError(
        AgentsErrorCode.SandboxFailed,
        `Cannot create sandbox "${id}" in ${dir}: the folder is not empty and holds no unfinished creation of this sandbox; choose an empty folder or remove it.`,
        { details: { id, dir } },
      );
    }
    // Left by a process that died while it made this sandbox: nothing in it was ever used.
    for (const entry of entries) await removeTree(join(dir, entry));
  }
  const mark: CreationMark = { kind: MARK_KIND, id, pid: process.pid };
  await writeFile(join(dir, CREATION_MARK), JSON.stringify(mark));
  return realpath(dir);
}

/** Removes the creation mark once the sandbox's marker is written (the sandbox is complete). */
export async function clearCreationMark(dir: string): Promise<void> {
  await rm(join(dir, CREATION_MARK), { force: true });
}
