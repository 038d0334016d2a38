import { join } from 'node:path';
import { runGit, runGitBytes } from '../git.js';
import { gitRemoteEnv } from '../git-env.js';
import type {
  GitStoreAccess,
  SnapshotEntry,
  SnapshotStore,
  SnapshotStoreCallOptions,
} from '../backend.js';
import { parseRawTreeDiff, type RawTreeChange } from '../raw-tree-diff.js';
import { STORE_DIR, storeEnv, storeGit } from './snapshot-store.js';

/** Pathspec arguments for git: everything after `--`, read literally (no globs, no magic). */
export function literalPathspec(paths: readonly string[] | undefined): string[] {
  if (paths === undefined || paths.length === 0) return [];
  return ['--', ...paths.map((path) => `:(literal)${path.replace(/^\.\/+/, '')}`)];
}

function timing(options: SnapshotStoreCallOptions | undefined) {
  return {
    ...(options?.signal === undefined ? {} : { signal: options.signal }),
    ...(options?.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
  };
}

/**
 * The {@link SnapshotStore} of a git sandbox: its private git dir in `runDir` (see
 * `snapshot-store.ts`) over the tree at `root`. Records (apply journals) stay in `runDir`.
 */
export function gitSnapshotStore(
  runDir: string,
  root: string,
  defaults: { timeoutMs?: number | undefined } = {},
): SnapshotStore {
  const withDefaults = <T extends SnapshotStoreCallOptions>(options: T | undefined): T =>
    ({ timeoutMs: defaults.timeoutMs, ...options }) as T;
  const git: GitStoreAccess = {
    run: (args, options) => storeGit(runDir, root, args, withDefaults(options)),
    env: () => storeEnv(runDir, root),
    // Only GIT_DIR: the user's global config (credential helpers, url rewrites, ssh settings)
    // applies to reaching the remote; the store's own config has no hooks and no auto gc. The
    // remote environment keeps transports (not `ext::`) and fixes every program-naming key.
    runRemote: (args, options) => {
      const merged = withDefaults(options);
      return runGit(args, {
        cwd: runDir,
        env: gitRemoteEnv({ GIT_DIR: join(runDir, STORE_DIR) }),
        ...timing(merged),
        ...(merged.okExitCodes === undefined ? {} : { okExitCodes: merged.okExitCodes }),
        ...(merged.input === undefined ? {} : { input: merged.input }),
      });
    },
  };
  const blob = async (spec: string, options: SnapshotStoreCallOptions | undefined, ok?: number[]) =>
    runGitBytes(['cat-file', 'blob', spec], {
      cwd: root,
      env: storeEnv(runDir, root),
      ...timing(withDefaults(options)),
      ...(ok === undefined ? {} : { okExitCodes: ok }),
    });
  return {
    backend: 'git',
    location: join(runDir, STORE_DIR),
    recordsDir: runDir,
    git,
    async resolve(rev, options) {
      if (!/^[0-9a-f]{4,64}$/.test(rev)) return undefined;
      const result = await git.run(['rev-parse', '--verify', '--quiet', `${rev}^{commit}`], {
        ...options,
        okExitCodes: [1, 128],
      });
      const sha = result.stdout.trim();
      return result.exitCode === 0 && sha !== '' ? sha : undefined;
    },
    async listTree(snapshot, options) {
      const output = (await git.run(['ls-tree', '-r', '-z', '--full-tree', snapshot], options))
        .stdout;
      const entries: SnapshotEntry[] = [];
      for (const line of output.split('\0')) {
        if (line === '') continue;
        const tab = line.indexOf('\t');
        const [mode = '', type = '', id = ''] = line.slice(0, tab).split(' ');
        if (type === 'commit') continue; // a gitlink: the nested repo's files are not captured
        entries.push({ path: line.slice(tab + 1), mode, id });
      }
      return entries;
    },
    async readFile(snapshot, path, options) {
      const result = await blob(`${snapshot}:${path}`, options, [128]);
      return result.exitCode === 0 ? result.stdout : undefined;
    },
    async readBlob(id, options) {
      return (await blob(id, options)).stdout;
    },
    async diff(from, to, options): Promise<RawTreeChange[]> {
      const output = await git.run(
        [
          'diff-tree',
          '-r',
          '-z',
          '--raw',
          '--no-renames',
          from,
          to,
          ...literalPathspec(options?.paths),
        ],
        options,
      );
      return parseRawTreeDiff(output.stdout);
    },
    async fetch(remote, refspecs, options) {
      await git.runRemote(
        [
          'fetch',
          '-q',
          '--no-tags',
          '--no-write-fetch-head',
          '--end-of-options',
          remote,
          ...refspecs,
        ],
        options,
      );
    },
    async push(remote, refspecs, options) {
      await git.runRemote(
        ['push', '-q', '--no-verify', '--end-of-options', remote, ...refspecs],
        options,
      );
    },
  };
}
