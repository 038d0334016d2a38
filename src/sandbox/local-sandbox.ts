import { randomBytes } from 'node:crypto';
import {
  copyFile,
  cp,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  realpath,
  rm,
  rmdir,
  stat,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { AgentsError, AgentsErrorCode, errorMessage } from '../errors.js';
import type { ChangedPath } from '../registry/tool-descriptor.js';
import { gitEnv, porcelainGit, runGit, wrapGitError } from './git.js';
import { createPathMap, type SandboxPathMap } from './path-map.js';
import type { Sandbox, Snapshot } from './types.js';

/** Ref namespace for snapshots: `refs/agents/<sandbox id>/<sha>`. Keyed by sha so forks never overwrite. */
export const SANDBOX_REF_PREFIX = 'refs/agents';

/** Name prefix of the folder that holds one sandbox (its tree and its run dir). */
const CONTAINER_PREFIX = 'agents-sandbox-';
/** Marker written into each sandbox's run dir; prune only touches folders that carry it. */
const MARKER_FILE = 'sandbox.json';
const MARKER_KIND = 'agents-sandbox';

const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
const SHA_PATTERN = /^[0-9a-f]{4,64}$/;

/** Options for {@link createSandbox}. */
export interface CreateSandboxOptions {
  /** The user's repo or folder. It is never modified (for a repo: only `.git/worktrees/` and `refs/agents/` gain entries). */
  source: string;
  /** Revision to check out for a git source. Default `HEAD`. Ignored for a plain folder. */
  revision?: string;
  /** Sandbox id (`[A-Za-z0-9_-]`, up to 64 chars); used in refs and folder names. Default: random. */
  id?: string;
  /** Where sandbox folders are made. Default `os.tmpdir()`. */
  baseDir?: string;
  signal?: AbortSignal;
  /** Per git command timeout. Default 120 s. */
  gitTimeoutMs?: number;
}

/** A sandbox made by {@link createSandbox}; adds what this implementation knows to {@link Sandbox}. */
export interface LocalSandbox extends Sandbox {
  /** `worktree`: a detached git worktree of the source repo; `folder`: a private repo over a copy. */
  readonly kind: 'worktree' | 'folder';
  /** Private folder outside the tree holding the private index and the marker file. */
  readonly runDir: string;
  readonly paths: SandboxPathMap;
}

interface SandboxMarker {
  kind: typeof MARKER_KIND;
  version: 1;
  id: string;
  mode: 'worktree' | 'folder';
  source: string;
  root: string;
  createdAt: number;
}

/**
 * Creates a sandbox for one run.
 *
 * - Git source: `git worktree add --detach <dir> <revision>`; snapshots go to the source repo's
 *   object store under `refs/agents/<id>/<sha>`. The user's branches, index, HEAD and working
 *   tree are not touched, no hook runs, and nothing is written to `.git/info` or hooks.
 * - Plain folder: the folder is *copied* into the sandbox dir and a private repo is made over
 *   the copy, so the user's folder is never written to (not even a `.git`).
 *
 * Snapshots use a persistent private index (`GIT_INDEX_FILE` in the run dir, outside the tree),
 * seeded from the worktree's own index so the stat cache is warm. The caller owns the sandbox and
 * must `close()` it (or `await using`). Throws `SANDBOX_FAILED` when the source is missing or git
 * fails; anything half-made is removed first.
 */
export async function createSandbox(options: CreateSandboxOptions): Promise<LocalSandbox> {
  const { signal } = options;
  signal?.throwIfAborted();
  const id = options.id ?? randomBytes(6).toString('hex');
  if (!ID_PATTERN.test(id)) {
    throw new AgentsError(
      AgentsErrorCode.SandboxFailed,
      `Sandbox id "${id}" is not valid: use 1-64 letters, digits, "_" or "-", starting with a letter or digit.`,
      { details: { id } },
    );
  }
  const revision = options.revision ?? 'HEAD';
  if (revision.startsWith('-') || revision.includes('\0')) {
    throw new AgentsError(
      AgentsErrorCode.SandboxFailed,
      `Revision "${revision}" is not valid: it must name a commit.`,
      {
        details: { revision },
      },
    );
  }
  const sourceReal = await realSourceDir(options.source);
  const timeoutMs = options.gitTimeoutMs;
  const baseDir = await realpath(options.baseDir ?? tmpdir());

  const topLevel = await gitTopLevel(sourceReal, signal, timeoutMs);
  const container = await mkdtemp(join(baseDir, CONTAINER_PREFIX));
  const runDir = join(container, 'run');
  const treeDir = join(container, id);
  const indexFile = join(runDir, 'index');
  await mkdir(runDir);
  let worktreeAdded = false;
  try {
    let base: string;
    let root: string;
    let source: string;
    if (topLevel !== undefined) {
      source = topLevel;
      base = (
        await runGit(['rev-parse', '--verify', '--quiet', `${revision}^{commit}`], {
          cwd: source,
          signal,
          timeoutMs,
        }).catch((error: unknown) => {
          throw new AgentsError(
            AgentsErrorCode.SandboxFailed,
            `Revision "${revision}" does not name a commit in ${source}; pass an existing branch, tag or sha.`,
            { cause: error, details: { revision, source } },
          );
        })
      ).stdout.trim();
      try {
        await porcelainGit(source, { signal, timeoutMs }).raw([
          'worktree',
          'add',
          '--detach',
          treeDir,
          base,
        ]);
      } catch (error) {
        throw wrapGitError(error, `add a worktree for sandbox "${id}"`, source);
      }
      worktreeAdded = true;
      root = await realpath(treeDir);
      // Seed the private index from the worktree's own fresh index: same content, warm stat data,
      // so the first `add -A` does not re-hash every file.
      const ownIndex = (
        await runGit(['rev-parse', '--git-path', 'index'], { cwd: root, signal, timeoutMs })
      ).stdout.trim();
      try {
        await copyFile(isAbsolute(ownIndex) ? ownIndex : resolve(root, ownIndex), indexFile);
      } catch {
        await runGit(['read-tree', base], {
          cwd: root,
          env: gitEnv({ GIT_INDEX_FILE: indexFile }),
          signal,
          timeoutMs,
        });
      }
      await runGit(['update-ref', `${SANDBOX_REF_PREFIX}/${id}/${base}`, base], {
        cwd: root,
        signal,
        timeoutMs,
      });
    } else {
      source = sourceReal;
      // Copy, so the user's folder stays untouched; symlinks are copied as links (not followed),
      // and the path map refuses any that point outside.
      await cp(sourceReal, treeDir, {
        recursive: true,
        verbatimSymlinks: true,
        force: false,
        errorOnExist: true,
      });
      root = await realpath(treeDir);
      try {
        await porcelainGit(root, { signal, timeoutMs }).init();
      } catch (error) {
        throw wrapGitError(error, `make the private repo of sandbox "${id}"`, root);
      }
      const env = gitEnv({ GIT_INDEX_FILE: indexFile });
      await runGit(['add', '-A'], { cwd: root, env, signal, timeoutMs });
      const tree = (
        await runGit(['write-tree'], { cwd: root, env, signal, timeoutMs })
      ).stdout.trim();
      base = (
        await runGit(['commit-tree', tree, '-m', `sandbox ${id}: base`], {
          cwd: root,
          env,
          signal,
          timeoutMs,
        })
      ).stdout.trim();
      await runGit(['update-ref', `${SANDBOX_REF_PREFIX}/${id}/${base}`, base], {
        cwd: root,
        signal,
        timeoutMs,
      });
    }
    const baseTree = (
      await runGit(['rev-parse', `${base}^{tree}`], { cwd: root, signal, timeoutMs })
    ).stdout.trim();
    const marker: SandboxMarker = {
      kind: MARKER_KIND,
      version: 1,
      id,
      mode: topLevel !== undefined ? 'worktree' : 'folder',
      source,
      root,
      createdAt: Date.now(),
    };
    await writeFile(join(runDir, MARKER_FILE), JSON.stringify(marker, null, 2));
    const aliases = [...new Set([resolve(options.source), sourceReal, source])];
    return new GitSandbox({
      id,
      kind: marker.mode,
      root,
      source,
      container,
      runDir,
      indexFile,
      base,
      baseTree,
      timeoutMs,
      paths: createPathMap(root, { aliases }),
    });
  } catch (error) {
    await removeSandboxFiles({
      id,
      source: topLevel,
      root: treeDir,
      container,
      worktree: worktreeAdded,
    }).catch(() => undefined);
    if (AgentsError.isInstance(error)) throw error;
    throw new AgentsError(
      signal?.aborted === true ? AgentsErrorCode.Aborted : AgentsErrorCode.SandboxFailed,
      `Could not create sandbox "${id}" from ${sourceReal}: ${errorMessage(error)}`,
      { cause: error, details: { id, source: sourceReal } },
    );
  }
}

interface GitSandboxInit {
  id: string;
  kind: 'worktree' | 'folder';
  root: string;
  source: string;
  container: string;
  runDir: string;
  indexFile: string;
  base: string;
  baseTree: string;
  timeoutMs: number | undefined;
  paths: SandboxPathMap;
}

class GitSandbox implements LocalSandbox {
  readonly id: string;
  readonly kind: 'worktree' | 'folder';
  readonly root: string;
  readonly source: string;
  readonly runDir: string;
  readonly base: string;
  readonly paths: SandboxPathMap;
  #head: string;
  #headTree: string;
  readonly #container: string;
  readonly #env: Record<string, string>;
  readonly #timeoutMs: number | undefined;
  /** Serializes snapshot/restore/close so `head` always names the latest snapshot. */
  #queue: Promise<unknown> = Promise.resolve();
  #closing: Promise<void> | undefined;

  constructor(init: GitSandboxInit) {
    this.id = init.id;
    this.kind = init.kind;
    this.root = init.root;
    this.source = init.source;
    this.runDir = init.runDir;
    this.base = init.base;
    this.paths = init.paths;
    this.#head = init.base;
    this.#headTree = init.baseTree;
    this.#container = init.container;
    this.#timeoutMs = init.timeoutMs;
    this.#env = gitEnv({ GIT_INDEX_FILE: init.indexFile });
  }

  get head(): string {
    return this.#head;
  }

  snapshot(label: string, options: { signal?: AbortSignal } = {}): Promise<Snapshot> {
    return this.#exclusive(() => this.#snapshot(label, options.signal));
  }

  async diff(
    from: string,
    to: string,
    options: { signal?: AbortSignal } = {},
  ): Promise<ChangedPath[]> {
    this.#assertOpen();
    assertSha(from);
    assertSha(to);
    if (from === to) return [];
    const { stdout } = await this.#git(
      ['diff-tree', '-r', '-z', '--name-status', '--no-renames', from, to],
      options.signal,
    );
    return parseNameStatus(stdout);
  }

  restore(
    sha: string,
    options: { signal?: AbortSignal } = {},
  ): Promise<{ safety: Snapshot; changed: ChangedPath[] }> {
    return this.#exclusive(async () => {
      const { signal } = options;
      assertSha(sha);
      const resolved = await this.#git(
        ['rev-parse', '--verify', '--quiet', `${sha}^{commit}`],
        signal,
        [1],
      );
      const target = resolved.stdout.trim();
      if (resolved.exitCode !== 0 || target === '') {
        throw new AgentsError(
          AgentsErrorCode.CheckpointNotFound,
          `Snapshot ${sha} does not exist in sandbox "${this.id}"; list the thread's checkpoints to pick an existing one.`,
          { details: { sandboxId: this.id, sha } },
        );
      }
      const targetTree = (await this.#git(['rev-parse', `${target}^{tree}`], signal)).stdout.trim();
      // Safety snapshot first: makes the restore undoable, and puts files made since the last
      // snapshot into the private index so `read-tree --reset` removes them too.
      const safety = await this.#snapshot(
        `sandbox ${this.id}: before restore to ${target}`,
        signal,
      );
      await this.#git(['read-tree', '-u', '--reset', target], signal);
      const tree = (await this.#git(['write-tree'], signal)).stdout.trim();
      if (tree !== targetTree) {
        throw new AgentsError(
          AgentsErrorCode.RollbackFailed,
          `Restoring sandbox "${this.id}" to ${target} left tree ${tree} instead of ${targetTree}; restore ${safety.sha} to undo.`,
          { details: { sandboxId: this.id, target, safety: safety.sha } },
        );
      }
      // Keep the target reachable under our namespace (it may be the user's commit).
      await this.#git(['update-ref', `${SANDBOX_REF_PREFIX}/${this.id}/${target}`, target], signal);
      const changed = await this.#diffUnlocked(safety.sha, target, signal);
      this.#head = target;
      this.#headTree = targetTree;
      return { safety, changed };
    });
  }

  close(): Promise<void> {
    this.#closing ??= this.#queue
      .catch(() => undefined)
      .then(() =>
        removeSandboxFiles({
          id: this.id,
          source: this.kind === 'worktree' ? this.source : undefined,
          root: this.root,
          container: this.#container,
          worktree: this.kind === 'worktree',
        }),
      );
    return this.#closing;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  async #snapshot(label: string, signal: AbortSignal | undefined): Promise<Snapshot> {
    await this.#git(['add', '-A'], signal);
    const tree = (await this.#git(['write-tree'], signal)).stdout.trim();
    const parent = this.#head;
    if (tree === this.#headTree) return { sha: parent, parent, changed: [] };
    const sha = (
      await this.#git(['commit-tree', tree, '-p', parent, '-m', label || 'snapshot'], signal)
    ).stdout.trim();
    await this.#git(['update-ref', `${SANDBOX_REF_PREFIX}/${this.id}/${sha}`, sha], signal);
    const changed = await this.#diffUnlocked(parent, sha, signal);
    this.#head = sha;
    this.#headTree = tree;
    return { sha, parent, changed };
  }

  async #diffUnlocked(
    from: string,
    to: string,
    signal: AbortSignal | undefined,
  ): Promise<ChangedPath[]> {
    if (from === to) return [];
    const { stdout } = await this.#git(
      ['diff-tree', '-r', '-z', '--name-status', '--no-renames', from, to],
      signal,
    );
    return parseNameStatus(stdout);
  }

  #git(args: string[], signal: AbortSignal | undefined, okExitCodes?: number[]) {
    return runGit(args, {
      cwd: this.root,
      env: this.#env,
      signal,
      ...(this.#timeoutMs === undefined ? {} : { timeoutMs: this.#timeoutMs }),
      ...(okExitCodes === undefined ? {} : { okExitCodes }),
    });
  }

  #exclusive<T>(work: () => Promise<T>): Promise<T> {
    this.#assertOpen();
    const run = this.#queue.catch(() => undefined).then(work);
    this.#queue = run;
    return run;
  }

  #assertOpen(): void {
    if (this.#closing !== undefined) {
      throw new AgentsError(
        AgentsErrorCode.Closed,
        `Sandbox "${this.id}" is closed; create a new sandbox for a new run.`,
        {
          details: { sandboxId: this.id },
        },
      );
    }
  }
}

/** Options for {@link pruneSandboxes}. */
export interface PruneSandboxesOptions {
  /** A git repo: prune its worktree sandboxes and orphaned `refs/agents/<id>/` refs. */
  source?: string;
  /** A base dir: prune folder sandboxes (and stale containers) made there. */
  baseDir?: string;
  /** Sandboxes idle (no snapshot) for longer than this are removed. */
  olderThanMs: number;
  /** Clock, for tests. Default `Date.now()`. */
  now?: number;
  /** Ids never to remove (e.g. sandboxes of runs still active in this process). */
  keep?: readonly string[];
  signal?: AbortSignal;
}

/**
 * Bounds disk use: removes sandboxes idle for longer than `olderThanMs` (worktree, run dir and
 * refs), prunes stale worktree records, and deletes `refs/agents/<id>/` refs whose sandbox is
 * gone and whose newest snapshot is older than the cutoff. Only folders carrying our marker file
 * are touched. Never runs `git gc` (git's auto-gc reclaims the objects later).
 * Returns the ids it removed.
 */
export async function pruneSandboxes(
  options: PruneSandboxesOptions,
): Promise<{ removed: string[] }> {
  const { signal } = options;
  signal?.throwIfAborted();
  const cutoff = (options.now ?? Date.now()) - options.olderThanMs;
  const keep = new Set(options.keep ?? []);
  const removed = new Set<string>();
  const errors: unknown[] = [];

  if (options.source !== undefined) {
    const top = await gitTopLevel(await realSourceDir(options.source), signal);
    if (top === undefined) {
      throw new AgentsError(
        AgentsErrorCode.SandboxFailed,
        `${options.source} is not a git repository; pass baseDir to prune folder sandboxes.`,
      );
    }
    await runGit(['worktree', 'prune'], { cwd: top, signal });
    const listing = (await runGit(['worktree', 'list', '--porcelain', '-z'], { cwd: top, signal }))
      .stdout;
    const live = new Set<string>();
    for (const field of listing.split('\0')) {
      if (!field.startsWith('worktree ')) continue;
      const path = field.slice('worktree '.length);
      const marker = await readMarker(join(dirname(path), 'run'));
      if (marker === undefined) continue;
      live.add(marker.id);
      if (keep.has(marker.id) || (await lastActivity(join(dirname(path), 'run'), marker)) > cutoff)
        continue;
      try {
        await removeSandboxFiles({
          id: marker.id,
          source: top,
          root: path,
          container: dirname(path),
          worktree: true,
        });
        removed.add(marker.id);
        live.delete(marker.id);
      } catch (error) {
        errors.push(error);
      }
    }
    // Refs left behind by sandboxes whose folders vanished (crash, tmp cleaned on reboot).
    const refs = (
      await runGit(
        ['for-each-ref', '--format=%(refname)%00%(committerdate:unix)', `${SANDBOX_REF_PREFIX}/`],
        { cwd: top, signal },
      )
    ).stdout;
    const newest = new Map<string, number>();
    for (const line of refs.split('\n')) {
      const [ref, date] = line.split('\0');
      if (ref === undefined || date === undefined) continue;
      const id = ref.slice(SANDBOX_REF_PREFIX.length + 1).split('/')[0];
      if (id === undefined || id === '') continue;
      newest.set(id, Math.max(newest.get(id) ?? 0, Number(date) * 1000));
    }
    for (const [id, when] of newest) {
      if (live.has(id) || keep.has(id) || when > cutoff) continue;
      await deleteRefs(top, id, signal);
      removed.add(id);
    }
  }

  if (options.baseDir !== undefined) {
    const baseDir = await realpath(options.baseDir);
    for (const name of await readdir(baseDir)) {
      if (!name.startsWith(CONTAINER_PREFIX)) continue;
      const container = join(baseDir, name);
      const marker = await readMarker(join(container, 'run'));
      if (marker === undefined || marker.mode !== 'folder') continue;
      if (keep.has(marker.id) || (await lastActivity(join(container, 'run'), marker)) > cutoff)
        continue;
      try {
        await rm(container, { recursive: true, force: true });
        removed.add(marker.id);
      } catch (error) {
        errors.push(error);
      }
    }
  }
  if (errors.length > 0)
    throw new AggregateError(errors, `Pruning sandboxes failed for ${errors.length} sandbox(es).`);
  return { removed: [...removed] };
}

/** The git status letters of `diff-tree -z --name-status` → changed paths. */
function parseNameStatus(output: string): ChangedPath[] {
  const fields = output.split('\0');
  const changed: ChangedPath[] = [];
  for (let index = 0; index + 1 < fields.length; index += 2) {
    const status = fields[index]!;
    const path = fields[index + 1]!;
    if (status === '') break;
    changed.push({ status: status.charAt(0), path });
  }
  return changed;
}

function assertSha(sha: string): void {
  if (!SHA_PATTERN.test(sha)) {
    throw new AgentsError(
      AgentsErrorCode.CheckpointNotFound,
      `"${sha}" is not a snapshot sha (expected hex digits).`,
      {
        details: { sha },
      },
    );
  }
}

async function realSourceDir(source: string): Promise<string> {
  try {
    const real = await realpath(source);
    if (!(await stat(real)).isDirectory()) throw new Error('not a directory');
    return real;
  } catch (error) {
    throw new AgentsError(
      AgentsErrorCode.SandboxFailed,
      `Sandbox source ${source} is not an existing directory; pass the project's folder or git repo.`,
      { cause: error, details: { source } },
    );
  }
}

/** The realpath of the work tree top containing `dir`, or undefined when `dir` is not in a git work tree. */
async function gitTopLevel(
  dir: string,
  signal?: AbortSignal,
  timeoutMs?: number,
): Promise<string | undefined> {
  const result = await runGit(['rev-parse', '--is-inside-work-tree', '--show-toplevel'], {
    cwd: dir,
    signal,
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
    okExitCodes: [128],
  });
  const [inside, top] = result.stdout.trim().split('\n');
  if (result.exitCode !== 0 || inside !== 'true' || top === undefined || top === '')
    return undefined;
  return realpath(top);
}

async function deleteRefs(cwd: string, id: string, signal?: AbortSignal): Promise<void> {
  const refs = (
    await runGit(['for-each-ref', '--format=%(refname)', `${SANDBOX_REF_PREFIX}/${id}/`], {
      cwd,
      signal,
    })
  ).stdout
    .split('\n')
    .filter((ref) => ref !== '');
  if (refs.length > 0) {
    await runGit(['update-ref', '--stdin'], {
      cwd,
      signal,
      input: refs.map((ref) => `delete ${ref}\n`).join(''),
    });
  }
  // git leaves the empty namespace folder behind; drop it so the user's .git looks as before.
  // rmdir fails harmlessly while another sandbox still has refs there.
  try {
    const common = (await runGit(['rev-parse', '--git-common-dir'], { cwd, signal })).stdout.trim();
    await rmdir(join(isAbsolute(common) ? common : resolve(cwd, common), SANDBOX_REF_PREFIX));
  } catch {
    // Not empty, or already gone.
  }
}

/** Removes a sandbox's refs, worktree record and folders; tolerant of parts already gone. */
async function removeSandboxFiles(target: {
  id: string;
  source: string | undefined;
  root: string;
  container: string;
  worktree: boolean;
}): Promise<void> {
  const errors: unknown[] = [];
  if (target.source !== undefined) {
    await deleteRefs(target.source, target.id).catch((error: unknown) => errors.push(error));
    if (target.worktree) {
      try {
        await porcelainGit(target.source).raw([
          'worktree',
          'remove',
          '--force',
          '--force',
          target.root,
        ]);
      } catch {
        // Already removed or its folder vanished: prune below drops the stale record.
      }
      await runGit(['worktree', 'prune'], { cwd: target.source }).catch((error: unknown) =>
        errors.push(error),
      );
    }
  }
  await rm(target.container, { recursive: true, force: true }).catch((error: unknown) =>
    errors.push(error),
  );
  if (errors.length > 0) {
    throw new AgentsError(
      AgentsErrorCode.SandboxFailed,
      `Sandbox "${target.id}" was not fully removed (${target.container}): ${errors.map(errorMessage).join('; ')}`,
      { cause: errors[0], details: { sandboxId: target.id } },
    );
  }
}

async function readMarker(runDir: string): Promise<SandboxMarker | undefined> {
  try {
    const parsed: unknown = JSON.parse(await readFile(join(runDir, MARKER_FILE), 'utf8'));
    if (typeof parsed !== 'object' || parsed === null) return undefined;
    const record = parsed as Record<string, unknown>;
    if (
      record['kind'] !== MARKER_KIND ||
      typeof record['id'] !== 'string' ||
      !ID_PATTERN.test(record['id'])
    )
      return undefined;
    if (record['mode'] !== 'worktree' && record['mode'] !== 'folder') return undefined;
    return {
      kind: MARKER_KIND,
      version: 1,
      id: record['id'],
      mode: record['mode'],
      source: String(record['source']),
      root: String(record['root']),
      createdAt: typeof record['createdAt'] === 'number' ? record['createdAt'] : 0,
    };
  } catch {
    return undefined;
  }
}

/** Last time the sandbox did anything: its private index changes on every snapshot. */
async function lastActivity(runDir: string, marker: SandboxMarker): Promise<number> {
  try {
    return Math.max(marker.createdAt, (await stat(join(runDir, 'index'))).mtimeMs);
  } catch {
    return marker.createdAt;
  }
}
