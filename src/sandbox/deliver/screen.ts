import type { RawTreeChange } from '../raw-tree-diff.js';
import { isConfigPath, quotePath, symlinkEscape } from './guard.js';
import { readBlob, type DeliveryGitOptions, type DeliverySandbox } from './store-access.js';
import { GITLINK, SYMLINK } from './user-files.js';

/** Options every delivery that writes (apply, commit) takes about what it may deliver. */
export interface DeliveryScreenOptions {
  /**
   * Also deliver changes to the library's own configuration (`.agents/`: actors, servers,
   * skills, policy). Off by default: a tool that edits them would change what the next run may
   * do (`confine: off`, a new server).
   */
  includeConfig?: boolean;
  /** Also deliver symlinks pointing outside the working tree or into `.git` (with a warning). */
  allowSymlinksOut?: boolean;
  /** Further project-relative folders that are configuration (a workspace kept elsewhere). */
  configPrefixes?: readonly string[];
}

/** A path a delivery left out on purpose, and why. */
export interface SkippedChange {
  path: string;
  /** `nested-repo`: not in the snapshots; `config`: `.agents/`; `symlink-out`: a link out. */
  kind: 'nested-repo' | 'config' | 'symlink-out';
  reason: string;
}

/** The changes a delivery may take, and what it left out or takes only with a warning. */
export interface ScreenedChanges {
  kept: RawTreeChange[];
  skipped: SkippedChange[];
  /** Configuration paths delivered because `includeConfig` was given. */
  config: string[];
  /** Said to the user: symlinks out delivered because `allowSymlinksOut` was given. */
  warnings: string[];
}

/**
 * Sorts a snapshot diff into what apply and commit deliver and what they leave out (nested
 * repositories, configuration, symlinks out), reading each new symlink's target from the store.
 */
export async function screenChanges(
  sandbox: DeliverySandbox,
  raw: readonly RawTreeChange[],
  options: DeliveryScreenOptions & DeliveryGitOptions = {},
): Promise<ScreenedChanges> {
  const screened: ScreenedChanges = { kept: [], skipped: [], config: [], warnings: [] };
  for (const change of raw) {
    const { path } = change;
    if (change.srcMode === GITLINK || change.dstMode === GITLINK) {
      screened.skipped.push({
        path,
        kind: 'nested-repo',
        reason: 'a nested repository (its files are not in the snapshots)',
      });
      continue;
    }
    if (isConfigPath(path, options.configPrefixes)) {
      if (options.includeConfig !== true) {
        screened.skipped.push({
          path,
          kind: 'config',
          reason: 'configuration of agents (.agents/); pass --include-config to take it',
        });
        continue;
      }
      screened.config.push(path);
    }
    if (change.dstMode === SYMLINK) {
      const target = (await readBlob(sandbox, change.dstSha, options)).toString('utf8');
      const escape = symlinkEscape(path, target);
      if (escape !== undefined) {
        if (options.allowSymlinksOut !== true) {
          screened.skipped.push({
            path,
            kind: 'symlink-out',
            reason: `a symlink that ${escape}; pass --allow-symlinks-out to take it`,
          });
          continue;
        }
        screened.warnings.push(`${quotePath(path)} is a symlink that ${escape}`);
      }
    }
    screened.kept.push(change);
  }
  return screened;
}
