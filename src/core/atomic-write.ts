import { randomBytes } from 'node:crypto';
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { chmod, mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/** Options of {@link writeFileAtomic}. */
export interface WriteFileAtomicOptions {
  /**
   * Mode of the written file, set exactly on the temp file before the rename, so the file never
   * exists with other permissions (a secrets file passes `0o600`). Default `0o644` narrowed by
   * the umask, as `writeFile` does.
   */
  mode?: number;
  /** Mode of the folders made for it when missing (default from the umask). */
  dirMode?: number;
}

/**
 * Writes a file atomically: the data goes to a temp file in the same folder (same file system,
 * a name no other writer uses: pid plus random), which is then renamed over the target, so
 * readers (and a crash) see the old file or the new one, never half of one. The folder is made
 * when missing. On failure the temp file is removed and the target is left as it was.
 *
 * The one place a file is replaced this way; records, pins, markers, OAuth tokens and journals
 * all go through it.
 */
export async function writeFileAtomic(
  path: string,
  data: string | Uint8Array,
  options: WriteFileAtomicOptions = {},
): Promise<void> {
  const folder = dirname(path);
  await mkdir(folder, {
    recursive: true,
    ...(options.dirMode === undefined ? {} : { mode: options.dirMode }),
  });
  const temp = join(
    folder,
    `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`,
  );
  const mode = options.mode ?? 0o644;
  try {
    await writeFile(temp, data, { flag: 'wx', mode });
    if (options.mode !== undefined) await chmod(temp, mode);
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true }).catch(() => undefined);
    throw error;
  }
}

/**
 * {@link writeFileAtomic} with synchronous calls, for a small file on a hot path (a sandbox's
 * marker after each snapshot), where promise-based calls cost a thread-pool round trip each.
 * The folder must exist.
 */
export function writeFileAtomicSync(path: string, data: string | Uint8Array): void {
  const temp = join(
    dirname(path),
    `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`,
  );
  try {
    writeFileSync(temp, data, { flag: 'wx', mode: 0o644 });
    renameSync(temp, path);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
}
