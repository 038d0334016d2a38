import { rm, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { AgentsError, AgentsErrorCode } from '../../errors.js';
import type { SandboxWarning } from '../base-origin.js';
import { LargeFileGuard } from '../large-files.js';
import { validateMaxFileBytes } from '../size-cap.js';
import { createSandbox, type GitSandboxOptions, type LocalSandbox } from './local-sandbox.js';
import { build, removeContainer } from './build-sandbox.js';
import type { GitSandbox } from './git-sandbox.js';
import type { OpenSandboxOptions } from '../backend.js';
import {
  acquireRunLock,
  lockHolder,
  readMarker,
  writeMarker,
  type SandboxMarker,
} from '../sandbox-marker.js';
import {
  EXCLUDE_FILE,
  readRecordedExcludes,
  validateExcludes,
  writeExcludeFile,
} from '../sandbox-excludes.js';
import { INDEX_FILE, storeGit } from './snapshot-store.js';
import { gitTopLevel, realSourceDir } from '../source-dir.js';

/** {@link OpenSandboxOptions} of the git backend. */
export type OpenGitSandboxOptions = OpenSandboxOptions & GitSandboxOptions;

/** A sandbox from {@link openSandbox}: `reopened` tells whether it existed before. */
export interface OpenedSandbox extends LocalSandbox {
  /** `true` when an existing sandbox was reopened, `false` when it was made by this call. */
  readonly reopened: boolean;
}

/**
 * Opens the sandbox kept in `dir`, or makes it there on first use: the same tree, store and
 * private index, continuing from the latest snapshot it recorded. This is what lets a thread's
 * sandbox outlive the process that ran it, so a later process can list, diff or roll it back.
 * Close it with `close({ remove: false })` to keep it, or `close()` to delete it.
 *
 * Files edited in the tree while no one had it open are picked up by the next snapshot. Throws
 * `SANDBOX_FAILED` when `dir` holds no sandbox and `create` is false, when the recorded source
 * or id differs from the one given, or when its tree or snapshots are gone; `RUN_ACTIVE` when
 * `lock` is set and another live process holds the sandbox.
 */
export async function openSandbox(options: OpenGitSandboxOptions): Promise<OpenedSandbox> {
  const { signal } = options;
  signal?.throwIfAborted();
  const dir = resolve(options.dir);
  const runDir = join(dir, 'run');
  const marker = await readMarker(runDir);
  if (marker === 'legacy') throw legacySandbox(dir);
  if (marker === undefined) {
    if (options.create === false || options.source === undefined) {
      throw new AgentsError(
        AgentsErrorCode.SandboxFailed,
        `No sandbox in ${dir}${options.create === false ? '' : ' and no source to make one from'}; it was never made, or it was removed.`,
        { details: { dir } },
      );
    }
    const made = await createSandbox({
      source: options.source,
      dir,
      ...(options.from === undefined ? {} : { from: options.from }),
      ...(options.revision === undefined ? {} : { revision: options.revision }),
      ...(options.onSandboxWarning === undefined
        ? {}
        : { onSandboxWarning: options.onSandboxWarning }),
      ...(options.id === undefined ? {} : { id: options.id }),
      ...(signal === undefined ? {} : { signal }),
      ...(options.gitTimeoutMs === undefined ? {} : { gitTimeoutMs: options.gitTimeoutMs }),
      ...(options.exclude === undefined ? {} : { exclude: options.exclude }),
      ...(options.maxFileBytes === undefined ? {} : { maxFileBytes: options.maxFileBytes }),
      ...(options.seed === undefined ? {} : { seed: options.seed }),
    });
    if (!options.lock) return Object.assign(made, { reopened: false as const });
    const { baseWarnings } = made;
    // Made a moment ago by us: rebuild it through the reopen path so it carries the lock.
    await made.close({ remove: false });
    try {
      const fresh = (await readMarker(runDir)) as SandboxMarker;
      return Object.assign(await reopen(dir, runDir, fresh, options, baseWarnings), {
        reopened: false as const,
      });
    } catch (error) {
      await removeContainer(made.id, dir).catch(() => undefined);
      throw error;
    }
  }
  return Object.assign(await reopen(dir, runDir, marker, options), { reopened: true as const });
}

async function reopen(
  dir: string,
  runDir: string,
  marker: SandboxMarker,
  options: OpenGitSandboxOptions,
  baseWarnings?: readonly SandboxWarning[],
): Promise<GitSandbox> {
  const { signal } = options;
  const exclude = options.exclude === undefined ? undefined : validateExcludes(options.exclude);
  const maxFileBytes = validateMaxFileBytes(options.maxFileBytes ?? marker.maxFileBytes);
  const fail = (reason: string, cause?: unknown): never => {
    throw new AgentsError(
      AgentsErrorCode.SandboxFailed,
      `Cannot reopen sandbox "${marker.id}" in ${dir}: ${reason}`,
      { ...(cause === undefined ? {} : { cause }), details: { sandboxId: marker.id, dir } },
    );
  };
  if (options.id !== undefined && options.id !== marker.id) {
    fail(`it is sandbox "${marker.id}", not "${options.id}".`);
  }
  if (marker.base === undefined) fail('its record has no base snapshot.');
  if (options.source !== undefined) {
    const sourceReal = await realSourceDir(options.source);
    const source =
      marker.mode === 'repository'
        ? ((await gitTopLevel(sourceReal, signal, options.gitTimeoutMs)) ?? sourceReal)
        : sourceReal;
    if (source !== marker.source) {
      fail(
        `it was made from ${marker.source}, not ${source}; remove it to start over from the new source.`,
      );
    }
  }
  try {
    if (!(await stat(marker.root)).isDirectory()) throw new Error('not a directory');
  } catch (error) {
    fail(`its tree ${marker.root} is gone; remove the sandbox and start again.`, error);
  }
  const root = marker.root;
  const git = { signal, timeoutMs: options.gitTimeoutMs };
  try {
    await stat(join(runDir, INDEX_FILE));
  } catch {
    // The private index went missing: rebuild it from the head (stat data is cold, so the next
    // snapshot re-hashes the files once).
    await storeGit(runDir, root, ['read-tree', marker.head ?? marker.base!], git);
  }
  // The private exclude file is rewritten on every open, with the given patterns or else the
  // recorded ones: the LFS patterns of `.gitattributes` are read afresh, and the size-cap
  // section is rebuilt from the recorded skipped files below.
  const excludeFile = await writeExcludeFile(
    runDir,
    root,
    exclude ?? (await readRecordedExcludes(join(runDir, EXCLUDE_FILE))),
    signal,
  );
  const largeFiles = await LargeFileGuard.open({ root, runDir, excludeFile, maxFileBytes });
  const recorded = { ...marker, maxFileBytes };
  if (marker.maxFileBytes !== maxFileBytes) await writeMarker(runDir, recorded);
  const lockFile = options.lock === true ? await acquireRunLock(runDir, marker.id) : undefined;
  try {
    return await build({
      marker: recorded,
      container: dir,
      runDir,
      excludeFile,
      largeFiles,
      timeoutMs: options.gitTimeoutMs,
      signal,
      aliases: [...(options.source === undefined ? [] : [resolve(options.source)]), marker.source],
      ...(lockFile === undefined ? {} : { lockFile }),
      ...(baseWarnings === undefined ? {} : { baseWarnings }),
    });
  } catch (error) {
    if (lockFile !== undefined) await rm(lockFile, { force: true });
    throw error;
  }
}

/**
 * Deletes the sandbox kept in `dir` without opening it, also when its tree is already gone.
 * Refuses with `RUN_ACTIVE` while a live process holds its run lock. Returns false when `dir`
 * holds no sandbox (nothing is deleted then). Nothing outside `dir` is touched.
 */
export async function removeSandbox(dir: string): Promise<boolean> {
  const container = resolve(dir);
  const runDir = join(container, 'run');
  const marker = await readMarker(runDir);
  if (marker === undefined) return false;
  if (marker === 'legacy') throw legacySandbox(container);
  const holder = await lockHolder(runDir);
  if (holder !== undefined) {
    throw new AgentsError(
      AgentsErrorCode.RunActive,
      `Sandbox "${marker.id}" is in use by process ${holder}; wait for its run to end before removing it.`,
      { details: { sandboxId: marker.id, pid: holder } },
    );
  }
  await removeContainer(marker.id, container);
  return true;
}

function legacySandbox(dir: string): AgentsError {
  return new AgentsError(
    AgentsErrorCode.SandboxFailed,
    `${dir} holds a sandbox of an older version (a git worktree of your repo); it cannot be reopened. Remove that folder, then \`git worktree prune\` and delete \`refs/agents/\` in your repo if they are still listed.`,
    { details: { dir } },
  );
}
