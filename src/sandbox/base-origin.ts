import { AgentsError, AgentsErrorCode } from '../errors.js';
import type { ToolRepoSource } from './git/tool-repo.js';

// What a sandbox's base is made from and what is said about it: the `from` option, the origin
// recorded in the marker, and the warnings a base can carry. Making the base: base-snapshot.ts.

/**
 * What a sandbox's files are made from: `worktree` (the user's files as they are now: tracked
 * and untracked, not ignored, staged and unstaged edits included), `head` (the last commit), or
 * any revision git understands (a branch, tag or sha; `refs/heads/worktree` for a branch that
 * happens to be called `worktree`).
 */
export type SandboxFrom = 'worktree' | 'head' | (string & {});

/** What a sandbox's base snapshot was made from, as recorded in its marker. */
export interface SandboxBaseOrigin {
  /** `folder`: a copy of a plain folder (not a git repository). */
  from: 'worktree' | 'head' | 'revision' | 'folder';
  /** The revision as given (`revision` only). */
  revision?: string;
  /** The user's commit: the one checked out (`head`, `revision`), or HEAD when the working tree was taken (absent in a repository with no commits). */
  commit?: string;
  /** `worktree`: how many paths of the base differ from `commit` (the uncommitted changes it holds). */
  uncommitted?: number;
}

/** The origin recorded in a sandbox's marker (older markers: read from `mode` and `revision`). */
export function originOf(marker: {
  mode: 'repository' | 'folder';
  from?: SandboxBaseOrigin['from'];
  revision?: string;
  sourceCommit?: string;
  uncommitted?: number;
}): SandboxBaseOrigin {
  const from =
    marker.from ??
    (marker.mode === 'folder'
      ? 'folder'
      : marker.revision === undefined || marker.revision === 'HEAD'
        ? 'head'
        : 'revision');
  return {
    from,
    ...(from === 'revision' && marker.revision !== undefined ? { revision: marker.revision } : {}),
    ...(marker.sourceCommit === undefined ? {} : { commit: marker.sourceCommit }),
    ...(marker.uncommitted === undefined ? {} : { uncommitted: marker.uncommitted }),
  };
}

/** Something about a sandbox's base worth telling the user once, as data and as a sentence. */
export interface SandboxWarning {
  /**
   * `uncommitted-changes-left-out`: made from a commit while the user's tree has uncommitted
   * changes, which the sandbox does not see. `untracked-files-too-large`: untracked files over
   * the snapshot size cap were not copied in.
   */
  code: 'uncommitted-changes-left-out' | 'untracked-files-too-large';
  message: string;
  /** The user's repository. */
  source: string;
  /** The paths concerned (at most {@link MAX_WARNING_PATHS}). */
  paths: string[];
  /** How many paths in all. */
  count: number;
}

/** Paths named in one warning; the rest are counted. */
export const MAX_WARNING_PATHS = 20;

/** A parsed `from`: which kind of base to make. */
export type BaseRequest =
  { kind: 'worktree' } | { kind: 'head' } | { kind: 'revision'; revision: string };

/**
 * Reads `from` (or the older `revision` option, which names a revision: `HEAD` means `head`).
 * Default `worktree`. Throws `CONFIG_INVALID` for an empty value or one git would read as an
 * option.
 */
export function parseSandboxFrom(from: string | undefined, revision?: string): BaseRequest {
  const given = from ?? revision;
  if (given === undefined) return { kind: 'worktree' };
  if (given.trim() === '' || given.startsWith('-') || /[\0\r\n]/.test(given)) {
    throw new AgentsError(
      AgentsErrorCode.ConfigInvalid,
      `Sandbox "from" ${JSON.stringify(given)} is not valid: use worktree, head, or a branch, tag or commit of the repository.`,
      { details: { from: given } },
    );
  }
  if (from === 'worktree') return { kind: 'worktree' };
  if (given === 'head' || given === 'HEAD') return { kind: 'head' };
  return { kind: 'revision', revision: given };
}

/** The user's commit a base starts from (and HEAD's branch, for the tools' repository). */
export interface BasePlan {
  request: BaseRequest;
  /** Undefined only for `worktree` in a repository with no commits yet. */
  source: ToolRepoSource | undefined;
}
