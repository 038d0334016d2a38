import { createHash } from 'node:crypto';
import {
  chmod,
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  readlink,
  rename,
  rm,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { AgentsError, AgentsErrorCode, errorMessage } from '../errors.js';

/** Files larger than this are hashed but not copied, so they can be detected but not restored. */
const MAX_COPY_BYTES = 1024 * 1024;
/** Bounds on the walk of a watched folder (hooks/, info/), so a hostile tree cannot stall a check. */
const MAX_ENTRIES = 2000;
const MAX_DEPTH = 8;

/**
 * One watched part of a git dir. `restore: false` parts are reported but never written back
 * (e.g. a worktree's HEAD: a commit made inside the sandbox moves it, which harms no one).
 */
interface WatchedPart {
  /** Folder that holds the part (the common dir or the worktree's admin dir). */
  base: string;
  /** Label used in reports, e.g. `.git` or `.git/worktrees/run-1`. */
  label: string;
  /** Name inside `base`. */
  name: string;
  restore: boolean;
  /** Entries directly inside the part that git itself writes, so changes to them are not ours to judge. */
  generated?: ReadonlySet<string>;
}

/**
 * Files in `info/` that git writes on its own: `git update-server-info`, run by every repack
 * (and so by the background `gc --auto` after a big commit in the user's repo), rewrites
 * `info/refs`. It only lists refs for dumb transports; nothing reads it to run code.
 */
const GIT_WRITTEN_INFO = new Set(['refs']);

type Entry =
  | {
      type: 'file';
      mode: number;
      size: number;
      ctimeMs: number;
      mtimeMs: number;
      ino: number;
      hash?: string;
      content?: Buffer;
    }
  | { type: 'dir'; mode: number }
  | { type: 'link'; target: string }
  | { type: 'other' };

/** One difference found by {@link RepoIntegrityGuard.check}. */
export interface RepoIntegrityChange {
  /** Path shown to people, e.g. `.git/hooks/post-checkout`. */
  path: string;
  change: 'added' | 'removed' | 'modified';
  /** Whether the part was written back to its state at the baseline. */
  reverted: boolean;
}

/** The outcome of one check: what changed, and where the changed files were saved. */
export interface RepoIntegrityReport {
  changes: RepoIntegrityChange[];
  /** Folder holding copies of the changed files as found (before the revert), if any. */
  quarantine?: string;
}

/**
 * Watches the parts of a git dir that a sandboxed tool must never change (security note T15):
 * the shared `config` (and `config.worktree`), `hooks/` and `info/` of the common dir, and the
 * sandbox worktree's own admin files (`HEAD`, `commondir`, `gitdir`, `config.worktree`, `info/`),
 * but not the index or logs that git rewrites itself.
 */
export interface RepoIntegrityGuard {
  /**
   * Compares the watched parts with the baseline. With `revert` (default true) restorable parts
   * are written back from the copy taken at the baseline; the changed files are first copied to
   * a quarantine folder under the OS temp dir so nothing (e.g. an edit the user made meanwhile)
   * is lost. Returns an empty `changes` list when nothing changed.
   */
  check(options?: { revert?: boolean }): Promise<RepoIntegrityReport>;
}

/**
 * Takes the baseline of a repo's watched git metadata. `commonDir` is `git rev-parse
 * --git-common-dir`; `worktreeDir` is the sandbox worktree's admin dir (`--git-dir`), omitted
 * when it is the common dir itself (a private repo). Cheap to re-check: unchanged files are
 * recognised by inode, size, mtime and ctime (ctime cannot be set back from user space).
 */
export async function captureRepoIntegrity(options: {
  commonDir: string;
  worktreeDir?: string;
  /** Used in the quarantine folder's name. */
  id: string;
}): Promise<RepoIntegrityGuard> {
  const parts: WatchedPart[] = [];
  const commonLabel = '.git';
  for (const name of ['config', 'config.worktree', 'hooks', 'info'])
    parts.push({
      base: options.commonDir,
      label: commonLabel,
      name,
      restore: true,
      ...(name === 'info' ? { generated: GIT_WRITTEN_INFO } : {}),
    });
  if (options.worktreeDir !== undefined && options.worktreeDir !== options.commonDir) {
    const label = `.git/worktrees/${options.worktreeDir.split(/[\\/]/).pop() ?? ''}`;
    parts.push({ base: options.worktreeDir, label, name: 'HEAD', restore: false });
    for (const name of ['commondir', 'gitdir', 'config.worktree', 'info'])
      parts.push({ base: options.worktreeDir, label, name, restore: true });
  }
  const baseline = await collect(parts, true);
  return {
    check: (checkOptions = {}) =>
      checkAgainst(parts, baseline, checkOptions.revert ?? true, options.id),
  };
}

/** Key: `<part index>\0<relative path>`; the relative path is '' for the part itself. */
type Entries = Map<string, Entry>;

async function collect(parts: readonly WatchedPart[], copy: boolean): Promise<Entries> {
  const entries: Entries = new Map();
  for (const [index, part] of parts.entries()) {
    await walk(join(part.base, part.name), `${index}\0`, 0, entries, copy, part.generated);
  }
  return entries;
}

async function walk(
  path: string,
  key: string,
  depth: number,
  entries: Entries,
  copy: boolean,
  generated?: ReadonlySet<string>,
): Promise<void> {
  if (entries.size >= MAX_ENTRIES) return;
  let stats;
  try {
    stats = await lstat(path);
  } catch {
    return; // Absent: recorded by its absence.
  }
  if (stats.isSymbolicLink()) {
    entries.set(key, { type: 'link', target: await readlink(path) });
  } else if (stats.isDirectory()) {
    entries.set(key, { type: 'dir', mode: stats.mode & 0o7777 });
    if (depth >= MAX_DEPTH) return;
    for (const name of (await readdir(path)).sort()) {
      if (depth === 0 && generated?.has(name) === true) continue;
      await walk(
        join(path, name),
        key.endsWith('\0') ? `${key}${name}` : `${key}/${name}`,
        depth + 1,
        entries,
        copy,
      );
    }
  } else if (stats.isFile()) {
    const entry: Entry = {
      type: 'file',
      mode: stats.mode & 0o7777,
      size: stats.size,
      ctimeMs: stats.ctimeMs,
      mtimeMs: stats.mtimeMs,
      ino: stats.ino,
    };
    if (copy) {
      const content = await readFile(path);
      entry.hash = sha(content);
      if (content.length <= MAX_COPY_BYTES) entry.content = content;
    }
    entries.set(key, entry);
  } else {
    entries.set(key, { type: 'other' });
  }
}

function sha(content: Buffer): string {
  return createHash('sha256').update(content).digest('hex');
}

async function sameEntry(before: Entry, now: Entry, path: string): Promise<boolean> {
  if (before.type !== now.type) return false;
  if (before.type === 'link' && now.type === 'link') return before.target === now.target;
  if (before.type === 'dir' && now.type === 'dir') return before.mode === now.mode;
  if (before.type === 'file' && now.type === 'file') {
    if (before.mode !== now.mode || before.size !== now.size) return false;
    // Fast path: nothing touched the inode since the baseline.
    if (before.ino === now.ino && before.mtimeMs === now.mtimeMs && before.ctimeMs === now.ctimeMs)
      return true;
    try {
      return sha(await readFile(path)) === before.hash;
    } catch {
      return false;
    }
  }
  return true;
}

function pathOf(
  parts: readonly WatchedPart[],
  key: string,
): { part: WatchedPart; abs: string; shown: string } {
  const [index, rel = ''] = key.split('\0');
  const part = parts[Number(index)]!;
  const inner = rel === '' ? part.name : `${part.name}/${rel}`;
  return { part, abs: join(part.base, ...inner.split('/')), shown: `${part.label}/${inner}` };
}

async function checkAgainst(
  parts: readonly WatchedPart[],
  baseline: Entries,
  revert: boolean,
  id: string,
): Promise<RepoIntegrityReport> {
  const current = await collect(parts, false);
  // A part whose folder is gone as a whole (the worktree was removed or pruned, the repo was
  // deleted) can no longer be used to run anything: not a change to report or revert.
  const gone = new Set<number>();
  for (const [index, part] of parts.entries()) {
    if (
      !(await lstat(part.base).then(
        (s) => s.isDirectory(),
        () => false,
      ))
    )
      gone.add(index);
  }
  const diffs: { key: string; change: RepoIntegrityChange['change'] }[] = [];
  for (const [key, before] of baseline) {
    if (gone.has(Number(key.split('\0')[0]))) continue;
    const now = current.get(key);
    if (now === undefined) diffs.push({ key, change: 'removed' });
    else if (!(await sameEntry(before, now, pathOf(parts, key).abs)))
      diffs.push({ key, change: 'modified' });
  }
  for (const key of current.keys()) if (!baseline.has(key)) diffs.push({ key, change: 'added' });
  if (diffs.length === 0) return { changes: [] };

  const report: RepoIntegrityReport = { changes: [] };
  if (revert) {
    // Save what we found before writing anything back: the change may be the user's own.
    const toSave = diffs.filter(
      (d) => d.change !== 'removed' && current.get(d.key)?.type === 'file',
    );
    if (toSave.length > 0) {
      const quarantine = await mkdtemp(join(tmpdir(), `agents-quarantine-${id}-`));
      for (const { key } of toSave) {
        const { abs, shown } = pathOf(parts, key);
        try {
          const target = join(quarantine, ...shown.split('/'));
          await mkdir(dirname(target), { recursive: true });
          await writeFile(target, await readFile(abs));
        } catch {
          // Vanished meanwhile: nothing to save.
        }
      }
      report.quarantine = quarantine;
    }
  }
  // Remove added things deepest first, then write back removed/modified ones shallowest first.
  const ordered = [...diffs].sort((a, b) =>
    a.change === 'added' && b.change === 'added'
      ? b.key.length - a.key.length
      : a.change === 'added'
        ? -1
        : b.change === 'added'
          ? 1
          : a.key.length - b.key.length,
  );
  const reverted = new Map<string, boolean>();
  for (const { key, change } of ordered) {
    const { part, abs } = pathOf(parts, key);
    let done = false;
    if (revert && part.restore) {
      try {
        done = await revertEntry(abs, baseline.get(key), change);
      } catch {
        done = false;
      }
    }
    reverted.set(key, done);
  }
  for (const { key, change } of diffs)
    report.changes.push({
      path: pathOf(parts, key).shown,
      change,
      reverted: reverted.get(key) ?? false,
    });
  report.changes.sort((a, b) => a.path.localeCompare(b.path));
  return report;
}

/** Puts one path back to its baseline entry; false when the baseline holds no copy to restore. */
async function revertEntry(
  abs: string,
  before: Entry | undefined,
  change: RepoIntegrityChange['change'],
): Promise<boolean> {
  if (change === 'added' || before === undefined) {
    await rm(abs, { recursive: true, force: true });
    return true;
  }
  if (before.type === 'dir') {
    const now = await lstat(abs).catch(() => undefined);
    if (now !== undefined && !now.isDirectory()) await rm(abs, { force: true });
    await mkdir(abs, { recursive: true });
    await chmod(abs, before.mode);
    return true;
  }
  if (before.type === 'link') {
    await rm(abs, { recursive: true, force: true });
    await symlink(before.target, abs);
    return true;
  }
  if (before.type === 'file' && before.content !== undefined) {
    const now = await lstat(abs).catch(() => undefined);
    if (now?.isDirectory() === true) await rm(abs, { recursive: true, force: true });
    // Temp file + rename: a crash leaves the old or the restored file, never half of one.
    const temp = `${abs}.agents-restore-${process.pid}`;
    await writeFile(temp, before.content, { mode: before.mode });
    await chmod(temp, before.mode);
    await rename(temp, abs);
    return true;
  }
  return false;
}

/**
 * The typed error for a non-empty report: `SANDBOX_FAILED`, naming what changed, what was
 * reverted and where the changed files were saved.
 */
export function repoIntegrityError(
  sandboxId: string,
  gitDir: string,
  report: RepoIntegrityReport,
): AgentsError {
  const list = report.changes
    .map((c) => `${c.path} (${c.change}${c.reverted ? ', reverted' : ', NOT reverted'})`)
    .join(', ');
  const allReverted = report.changes.every((c) => c.reverted);
  return new AgentsError(
    AgentsErrorCode.SandboxFailed,
    `Sandbox "${sandboxId}" run changed git metadata outside the sandbox (${gitDir}): ${list}. ` +
      (allReverted
        ? 'Everything was put back as it was when the sandbox was made'
        : 'Some of it could not be put back; check it by hand') +
      (report.quarantine === undefined
        ? ''
        : `; the changed files were saved to ${report.quarantine}`) +
      '. A tool (e.g. a git-capable MCP server) escaped the sandbox: review it before running again.',
    {
      details: {
        sandboxId,
        gitDir,
        changes: report.changes,
        ...(report.quarantine === undefined ? {} : { quarantine: report.quarantine }),
      },
    },
  );
}

/** Formats an unexpected failure of the check itself (e.g. permission denied) as a typed error. */
export function repoIntegrityCheckFailed(sandboxId: string, error: unknown): AgentsError {
  return new AgentsError(
    AgentsErrorCode.SandboxFailed,
    `Could not check the git metadata of sandbox "${sandboxId}": ${errorMessage(error)}`,
    { cause: error, details: { sandboxId } },
  );
}
