import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { AgentsError, AgentsErrorCode, errorMessage } from '../errors.js';
import {
  THREAD_RECORD_FILE,
  THREAD_SANDBOX_FOLDER,
  THREADS_FOLDER,
  workspaceStateDir,
} from '../sandbox/state-dir.js';
import type {
  ReopenedSandbox,
  SandboxBackend,
  SnapshotReplica,
  SnapshotStore,
} from '../sandbox/backend.js';
import { DEFAULT_SANDBOX_BACKEND, sandboxBackendNamed } from '../runtime/agents-runtime.js';
import { writeFileAtomic } from '../core/atomic-write.js';
import type { SandboxFrom, SandboxWarning } from '../sandbox/base-origin.js';
import { parseThreadConfigFacts, type ThreadConfigFacts } from './thread-config.js';

const RECORD_KIND = 'agents-thread';
/** A thread id used as a folder name as is; anything else is hashed. */
const SAFE_SEGMENT = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$/;

/** What the workspace records about a thread's sandbox (`thread.json`). */
export interface ThreadSandboxRecord {
  kind: typeof RECORD_KIND;
  version: 1;
  /** The actor that ran the thread (its graph reads and forks the thread's state). */
  actor: string;
  threadId: string;
  /** Sandbox id (names its tree's folder). */
  sandboxId: string;
  /** The sandbox backend that made it (`sandbox.backend`); absent in older records: `git`. */
  backend?: string;
  /** The folder the sandbox was made from, as configured. */
  source: string;
  /** What the sandbox was made from, as configured (`worktree`, `head` or a revision). */
  revision: string;
  /** Folder holding the sandbox (its tree and private run dir). */
  sandboxDir: string;
  /** The project folder the run resolved relative paths against (e.g. the SQLite checkpoint file). */
  projectDir?: string;
  createdAt: number;
  /**
   * What the thread's read-only commands need from the actor's config, with the fingerprint of
   * the config file it was read from (see `thread-config.ts`): refreshed by every run, used only
   * while the file is unchanged. Absent in records of older versions.
   */
  config?: ThreadConfigFacts;
}

/** A thread's sandbox location in the state folder, with its record when one exists. */
export interface ThreadSandboxLocation {
  /** `<state>/workspaces/<workspace key>/threads/<actor>/<thread>`. */
  dir: string;
  /** `<dir>/sandbox`: what `openSandbox({ dir })` opens. */
  sandboxDir: string;
  record: ThreadSandboxRecord | undefined;
}

function segment(name: string, what: string): string {
  if (SAFE_SEGMENT.test(name) && !name.includes('..')) return name;
  if (name === '') {
    throw new AgentsError(AgentsErrorCode.InvalidArguments, `The ${what} must not be empty.`);
  }
  // Not usable as a folder name (slashes, spaces, very long): a stable hash keeps it unique.
  return `${what}-${createHash('sha256').update(name).digest('hex').slice(0, 24)}`;
}

/** The sandbox id for a thread: stable, valid in ref names, and unique per (actor, thread). */
export function threadSandboxId(actor: string, threadId: string): string {
  return `t-${createHash('sha256').update(`${actor}\0${threadId}`).digest('hex').slice(0, 20)}`;
}

/**
 * Where the sandbox of (actor, thread) of a workspace lives: in the workspace's folder of the
 * per-user state folder (see `workspaceStateDir`), outside the user's project, so a tool's
 * relative path can never climb from the sandbox into the user's files. Nothing is read or made.
 */
export function threadSandboxDir(
  workspaceRoot: string,
  actor: string,
  threadId: string,
  options: { stateDir?: string } = {},
): string {
  return join(
    threadsDir(workspaceRoot, options.stateDir),
    segment(actor, 'actor'),
    segment(threadId, 'thread'),
  );
}

function threadsDir(workspaceRoot: string, stateDir: string | undefined): string {
  return join(
    workspaceStateDir(workspaceRoot, stateDir === undefined ? {} : { stateDir }),
    THREADS_FOLDER,
  );
}

async function readRecord(dir: string): Promise<ThreadSandboxRecord | undefined> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(join(dir, THREAD_RECORD_FILE), 'utf8'));
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const record = parsed as Record<string, unknown>;
  const strings = ['actor', 'threadId', 'sandboxId', 'source', 'revision', 'sandboxDir'] as const;
  if (record['kind'] !== RECORD_KIND || strings.some((key) => typeof record[key] !== 'string')) {
    return undefined;
  }
  return {
    kind: RECORD_KIND,
    version: 1,
    actor: String(record['actor']),
    threadId: String(record['threadId']),
    sandboxId: String(record['sandboxId']),
    source: String(record['source']),
    revision: String(record['revision']),
    sandboxDir: String(record['sandboxDir']),
    ...(typeof record['backend'] === 'string' ? { backend: record['backend'] } : {}),
    ...(typeof record['projectDir'] === 'string' ? { projectDir: record['projectDir'] } : {}),
    createdAt: typeof record['createdAt'] === 'number' ? record['createdAt'] : 0,
    // A field that does not have the writer's shape is dropped (the commands read the config).
    ...withConfig(parseThreadConfigFacts(record['config'])),
  };
}

function withConfig(config: ThreadConfigFacts | undefined): { config?: ThreadConfigFacts } {
  return config === undefined ? {} : { config };
}

/**
 * Records in a thread's `thread.json` (in `dir`, see {@link threadSandboxDir}) what its actor's
 * config says, as `describe` derives it from the record (undefined: nothing trustworthy, and
 * any older facts are dropped). Rewrites the record only when the facts changed. The caller holds
 * the thread's run lock. Returns false when there is no record to update.
 */
export async function recordThreadConfig(
  dir: string,
  describe: (record: ThreadSandboxRecord) => Promise<ThreadConfigFacts | undefined>,
): Promise<boolean> {
  const record = await readRecord(dir);
  if (record === undefined) return false;
  const config = await describe(record);
  if (JSON.stringify(config) === JSON.stringify(record.config)) return true;
  const rest: ThreadSandboxRecord = { ...record };
  delete rest.config;
  await writeFileAtomic(
    join(dir, THREAD_RECORD_FILE),
    `${JSON.stringify({ ...rest, ...withConfig(config) }, null, 2)}\n`,
  );
  return true;
}

/** Options of {@link openThreadSandbox}. */
export interface OpenThreadSandboxOptions {
  /** Absolute workspace folder (`.agents`). */
  workspaceRoot: string;
  /**
   * The backend that opens it: the runtime's (`runtime.sandboxBackend`); default the recorded
   * one, else `git`.
   */
  backend?: SandboxBackend;
  /** The per-user state folder; default `agentsStateDir()` (`$AGENTS_STATE_DIR`, …). */
  stateDir?: string;
  actor: string;
  threadId: string;
  /** Source folder or repo (absolute); needed on first use, checked on reopen. */
  source: string;
  /**
   * What the sandbox is made from on the thread's first run (default `worktree`; see
   * `CreateSandboxOptions.from`). A reopened thread keeps the base it recorded then: resuming
   * never takes the user's files again.
   */
  from?: SandboxFrom;
  /** Older spelling of `from` for a revision. */
  revision?: string;
  /** Warnings about the base, on the first run only (see `CreateSandboxOptions.onSandboxWarning`). */
  onSandboxWarning?: (warning: SandboxWarning) => void;
  /** The project folder of the run, recorded so later commands resolve the same checkpoint file. */
  projectDir?: string;
  /** Make it when missing (default true). */
  create?: boolean;
  /** Hold its run lock until close (see `openSandbox`). Default true. */
  lock?: boolean;
  /** Snapshot size cap (see `CreateSandboxOptions.maxFileBytes`); omitted keeps the recorded one. */
  maxFileBytes?: number;
  /** Extra snapshot excludes; omitted keeps the recorded ones. */
  exclude?: readonly string[];
  /**
   * The thread's shared snapshot store: a missing sandbox is rebuilt from the history there
   * (when the store has the thread), and every snapshot is queued for it (see `SnapshotReplica`).
   */
  replica?: SnapshotReplica;
  signal?: AbortSignal;
}

/**
 * Opens the sandbox of (actor, thread) at {@link threadSandboxDir}: made on the first run of the
 * thread, reopened (same tree and snapshot store, continuing from the latest snapshot) on later
 * runs and by later processes. Writes `thread.json`, which records
 * which actor ran the thread. The caller closes the sandbox: `close({ remove: false })` keeps
 * it for the thread's later runs and rollbacks.
 */
export async function openThreadSandbox(
  options: OpenThreadSandboxOptions,
): Promise<ReopenedSandbox> {
  const dir = threadSandboxDir(
    options.workspaceRoot,
    options.actor,
    options.threadId,
    options.stateDir === undefined ? {} : { stateDir: options.stateDir },
  );
  const sandboxDir = join(dir, THREAD_SANDBOX_FOLDER);
  const existing = await readRecord(dir);
  if (existing !== undefined && existing.threadId !== options.threadId) {
    throw new AgentsError(
      AgentsErrorCode.SandboxFailed,
      `${dir} holds the sandbox of thread "${existing.threadId}", not "${options.threadId}"; remove that folder or pick another thread id.`,
      { details: { dir, threadId: options.threadId } },
    );
  }
  const notFound = (): AgentsError =>
    new AgentsError(
      AgentsErrorCode.CheckpointNotFound,
      `Actor "${options.actor}" has no sandbox for thread "${options.threadId}" in ${options.workspaceRoot}${options.replica === undefined ? '' : ' nor in its shared snapshot store'}.`,
      { details: { actor: options.actor, threadId: options.threadId } },
    );
  // With a shared store, a thread this worker never ran may still be rebuilt from the store.
  const rebuildOnly = existing === undefined && options.create === false;
  if (rebuildOnly && options.replica === undefined) throw notFound();
  // The first folder this call makes, so a failed first run (a bad revision) leaves none.
  const madeDir = await mkdir(dir, { recursive: true });
  const sandboxId = threadSandboxId(options.actor, options.threadId);
  const replica = options.replica;
  const backend = options.backend ?? backendOf(existing);
  const sandbox = await backend
    .open({
      dir: sandboxDir,
      source: options.source,
      ...(options.from === undefined ? {} : { from: options.from }),
      ...(options.revision === undefined ? {} : { revision: options.revision }),
      ...(options.onSandboxWarning === undefined
        ? {}
        : { onSandboxWarning: options.onSandboxWarning }),
      id: sandboxId,
      lock: options.lock ?? true,
      ...(options.create === undefined || rebuildOnly ? {} : { create: options.create }),
      ...(options.maxFileBytes === undefined ? {} : { maxFileBytes: options.maxFileBytes }),
      ...(options.exclude === undefined ? {} : { exclude: options.exclude }),
      ...(options.signal === undefined ? {} : { signal: options.signal }),
      ...(replica === undefined
        ? {}
        : {
            seed: async (store: SnapshotStore, signal: AbortSignal | undefined) => {
              const meta = await replica.fetchInto(store, signal);
              if (meta === undefined && rebuildOnly) throw notFound();
              return meta;
            },
          }),
    })
    .catch(async (error: unknown) => {
      if (existing === undefined && madeDir !== undefined)
        await rm(madeDir, { recursive: true, force: true }).catch(() => undefined);
      throw error;
    });
  if (replica !== undefined) {
    try {
      await replica.attach(sandbox, options.signal);
    } catch (error) {
      await sandbox.close({ remove: !sandbox.reopened }).catch(() => undefined);
      throw error;
    }
  }
  if (existing === undefined) {
    const record: ThreadSandboxRecord = {
      kind: RECORD_KIND,
      version: 1,
      actor: options.actor,
      threadId: options.threadId,
      sandboxId,
      backend: backend.name,
      source: options.source,
      revision: options.from ?? options.revision ?? 'worktree',
      sandboxDir,
      ...(options.projectDir === undefined ? {} : { projectDir: options.projectDir }),
      createdAt: Date.now(),
    };
    try {
      await writeFileAtomic(join(dir, THREAD_RECORD_FILE), `${JSON.stringify(record, null, 2)}\n`);
    } catch (error) {
      await sandbox.close({ remove: !sandbox.reopened }).catch(() => undefined);
      throw new AgentsError(
        AgentsErrorCode.SandboxFailed,
        `Cannot record the sandbox of thread "${options.threadId}" in ${dir}: ${errorMessage(error)}`,
        { cause: error, details: { dir } },
      );
    }
  }
  return sandbox;
}

/**
 * Finds the recorded sandboxes of a thread of a workspace (one per actor that ran it; usually
 * one). Returns an empty list when the thread never ran with a kept sandbox.
 */
export async function findThreadSandboxes(
  workspaceRoot: string,
  threadId: string,
  options: { stateDir?: string } = {},
): Promise<Array<ThreadSandboxLocation & { record: ThreadSandboxRecord }>> {
  const root = threadsDir(workspaceRoot, options.stateDir);
  let actors: string[];
  try {
    actors = (await readdir(root, { withFileTypes: true }))
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name)
      .sort();
  } catch {
    return [];
  }
  const threadFolder = segment(threadId, 'thread');
  const found: Array<ThreadSandboxLocation & { record: ThreadSandboxRecord }> = [];
  for (const actorFolder of actors) {
    const dir = join(root, actorFolder, threadFolder);
    const record = await readRecord(dir);
    if (record === undefined || record.threadId !== threadId) continue;
    found.push({ dir, sandboxDir: join(dir, THREAD_SANDBOX_FOLDER), record });
  }
  return found;
}

/**
 * Deletes a thread's sandbox (tree, snapshot store, run dir) and its record. Refuses with
 * `RUN_ACTIVE` while a process holds it. The thread's checkpoints are left alone. Returns false
 * when there was nothing to remove.
 */
export async function removeThreadSandbox(location: ThreadSandboxLocation): Promise<boolean> {
  const removed = await backendOf(location.record).remove(location.sandboxDir);
  if (!removed && location.record === undefined) return false;
  await rm(location.dir, { recursive: true, force: true });
  return true;
}

/** The backend a thread's record names (`git` for records older than the field). */
function backendOf(record: ThreadSandboxRecord | undefined): SandboxBackend {
  return sandboxBackendNamed(record?.backend ?? DEFAULT_SANDBOX_BACKEND, 'thread record');
}
