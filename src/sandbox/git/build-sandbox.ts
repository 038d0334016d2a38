/**
 * The sandbox object of the git backend over a store and tree that are in place, shared by a
 * new sandbox (`createSandbox`) and a reopened one (`openSandbox`), and its removal.
 */
import { dirname } from 'node:path';
import { AgentsError, AgentsErrorCode, errorMessage } from '../../errors.js';
import { originOf, type SandboxWarning } from '../base-origin.js';
import { removeEmptyDirs } from '../empty-dirs.js';
import type { LargeFileGuard } from '../large-files.js';
import { NestedRepoTracker } from '../nested-repos.js';
import { createPathMap } from '../path-map.js';
import { removeTree } from '../remove-tree.js';
import { writeMarkerSync, type SandboxMarker } from '../sandbox-marker.js';
import { GitSandbox } from './git-sandbox.js';
import { storeGit } from './snapshot-store.js';

/** The sandbox object for a made or reopened sandbox whose store and tree are in place. */
export async function build(init: {
  marker: SandboxMarker;
  container: string;
  runDir: string;
  excludeFile: string;
  largeFiles: LargeFileGuard;
  timeoutMs: number | undefined;
  signal: AbortSignal | undefined;
  aliases: readonly string[];
  lockFile?: string;
  baseWarnings?: readonly SandboxWarning[];
  /** Write the nested repos found into the marker (a sandbox made by this process). */
  recordNested?: boolean;
  /**
   * The state folder a default-placed sandbox lives in: removing the sandbox also removes the
   * project's folders there once empty, so a script that cleans up leaves nothing behind.
   */
  emptyUpTo?: string;
}): Promise<GitSandbox> {
  const { marker, runDir, signal, timeoutMs } = init;
  const root = marker.root;
  const base = marker.base!;
  const head = marker.head ?? base;
  const git = { signal, timeoutMs };
  const trees = await snapshotTrees(marker, init.container, runDir, [base, head], git);
  // Read-only commands reopen a sandbox: its nested repos come from the marker when it names
  // this head, not from listing the whole head tree (53 ms at 100,000 files, issue 29).
  const nested = new NestedRepoTracker(root);
  if (marker.nested !== undefined && marker.nested.head === head) {
    nested.load(marker.nested.repos);
  } else {
    await nested.scan(
      (await storeGit(runDir, root, ['ls-tree', '-r', '-t', '-z', head], git)).stdout,
    );
    // A sandbox made by this call records them (nobody else writes its marker yet); a reopen
    // never writes here: a live run may own the marker, and its next snapshot records them.
    if (init.recordNested === true) {
      marker.nested = { head, repos: nested.list() };
      writeMarkerSync(runDir, marker);
    }
  }
  return new GitSandbox({
    id: marker.id,
    kind: marker.mode,
    root,
    source: marker.source,
    sourceCommit: marker.sourceCommit,
    baseOrigin: originOf(marker),
    baseWarnings: init.baseWarnings ?? [],
    container: init.container,
    runDir,
    base,
    baseTree: trees[0]!,
    head: { sha: head, tree: trees[1]! },
    timeoutMs,
    paths: createPathMap(root, { aliases: [...new Set(init.aliases)] }),
    marker,
    excludeFile: init.excludeFile,
    nested,
    largeFiles: init.largeFiles,
    ...(init.lockFile === undefined ? {} : { lockFile: init.lockFile }),
    remove: async () => {
      await removeContainer(marker.id, init.container);
      if (init.emptyUpTo !== undefined)
        await removeEmptyDirs(dirname(init.container), init.emptyUpTo);
    },
  });
}

/**
 * The trees of `shas` (snapshot commits of the store), in one `rev-parse`; throws
 * `SANDBOX_FAILED` naming the first one missing from the store.
 */
async function snapshotTrees(
  marker: SandboxMarker,
  container: string,
  runDir: string,
  shas: readonly string[],
  git: { signal: AbortSignal | undefined; timeoutMs: number | undefined },
): Promise<string[]> {
  const all = await storeGit(
    runDir,
    marker.root,
    ['rev-parse', ...shas.map((sha) => `${sha}^{tree}`)],
    { ...git, okExitCodes: [128] },
  );
  const trees = all.stdout.trim().split('\n');
  if (all.exitCode === 0 && trees.length === shas.length) return trees;
  for (const sha of shas) {
    const resolved = await storeGit(
      runDir,
      marker.root,
      ['rev-parse', '--verify', '--quiet', `${sha}^{tree}`],
      { ...git, okExitCodes: [1] },
    );
    if (resolved.exitCode !== 0) {
      throw new AgentsError(
        AgentsErrorCode.SandboxFailed,
        `Cannot open sandbox "${marker.id}" in ${container}: its snapshot ${sha} is missing from its store; remove the sandbox and start again.`,
        { details: { sandboxId: marker.id, sha } },
      );
    }
  }
  throw new AgentsError(
    AgentsErrorCode.SandboxFailed,
    `Cannot open sandbox "${marker.id}" in ${container}: git could not read the trees of its snapshots ${shas.join(', ')}.`,
    { details: { sandboxId: marker.id } },
  );
}

/** Removes a sandbox's folder (tree, store, run dir); nothing else exists to clean up. */
export async function removeContainer(id: string, container: string): Promise<void> {
  try {
    await removeTree(container);
  } catch (error) {
    throw new AgentsError(
      AgentsErrorCode.SandboxFailed,
      `Sandbox "${id}" was not fully removed (${container}): ${errorMessage(error)}`,
      { cause: error, details: { sandboxId: id } },
    );
  }
}
