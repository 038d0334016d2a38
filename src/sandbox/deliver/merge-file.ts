import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gitEnv } from '../git-env.js';
import { NO_USER_CONFIG } from '../git/snapshot-store.js';
import { gitBytes, type DeliveryGitOptions } from './store-access.js';

/** The outcome of a three-way merge of one text file. */
export interface MergedText {
  bytes: Buffer;
  /** Conflicting regions (0: clean; the bytes then hold conflict markers). */
  conflicts: number;
}

/**
 * Merges the user's version and the sandbox's version of a file against their common base with
 * `git merge-file` (the same merge `git merge` does per file). Works on temp copies outside
 * every repository; only the merged bytes come back.
 */
export async function mergeText(
  versions: { yours: Buffer; base: Buffer; sandbox: Buffer },
  options: DeliveryGitOptions = {},
): Promise<MergedText> {
  const dir = await mkdtemp(join(tmpdir(), 'agents-merge-'));
  try {
    const files = {
      yours: join(dir, 'yours'),
      base: join(dir, 'base'),
      sandbox: join(dir, 'sandbox'),
    };
    await Promise.all([
      writeFile(files.yours, versions.yours),
      writeFile(files.base, versions.base),
      writeFile(files.sandbox, versions.sandbox),
    ]);
    // Exit code: the number of conflicts (up to 127); above that, an error.
    const { stdout, exitCode } = await gitBytes(
      [
        'merge-file',
        '-p',
        '-L',
        'yours',
        '-L',
        'base',
        '-L',
        'sandbox',
        files.yours,
        files.base,
        files.sandbox,
      ],
      {
        cwd: dir,
        env: gitEnv({ ...NO_USER_CONFIG }),
        signal: options.signal,
        timeoutMs: options.timeoutMs,
        okExitCodes: Array.from({ length: 127 }, (_, index) => index + 1),
      },
    );
    return { bytes: stdout, conflicts: exitCode };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
