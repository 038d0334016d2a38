import { readdir, rm, rmdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { AgentsError, AgentsErrorCode } from '../errors.js';
import { auditLogPath } from '../policy/audit-log.js';
import { removeAuditEntries } from '../policy/audit-rewrite.js';
import { diskUse } from '../sandbox/sandbox-inventory.js';
import { acquireRunLock, lockHolder, readMarker } from '../sandbox/sandbox-marker.js';
import type { WorkspaceStore } from '../workspace/workspace-types.js';
import { checkpointStores } from '../runtime/agents-runtime.js';
import { findThreadSandboxes } from './thread-sandbox.js';
import { sharedThreadScope } from './thread-scope.js';

/** Options of {@link removeThread}. */
export interface RemoveThreadOptions {
  store: WorkspaceStore;
  threadId: string;
  /** The audit file the thread's runs wrote to; default `<workspace>/audit.jsonl`. */
  auditFile?: string;
  /** The per-user state folder; default `agentsStateDir()`. */
  stateDir?: string;
  /** Count what would go, remove nothing. */
  dryRun?: boolean;
  signal?: AbortSignal;
}

/** What {@link removeThread} removed (or, with `dryRun`, would remove). */
export interface RemoveThreadResult {
  threadId: string;
  /** The thread's folders in the state folder (record and sandbox), one per actor that ran it. */
  sandboxes: Array<{ actor: string; dir: string; sizeBytes: number }>;
  /** Checkpoints of the thread, per checkpoint store (SQLite file or redacted Postgres URL). */
  checkpoints: Array<{ store: string; count: number }>;
  /** Audit log lines of the thread. */
  auditEntries: number;
  auditFile: string;
}

/**
 * Removes everything kept of one thread: its checkpoints (`saver.deleteThread`, in the store of
 * the actor that ran it, or of every actor when no record names one), its audit log entries and
 * its sandbox with its record. Refuses with `RUN_ACTIVE` while a run or rollback holds the
 * thread (and holds the thread's lock itself meanwhile, so none starts), or while another
 * process has the audit log open. Checkpoints go first and the sandbox last, so a failure
 * leaves the thread's files in place. Throws `CHECKPOINT_NOT_FOUND` when nothing is kept of it.
 */
export async function removeThread(options: RemoveThreadOptions): Promise<RemoveThreadResult> {
  const { store, threadId, signal } = options;
  signal?.throwIfAborted();
  const stateOptions = options.stateDir === undefined ? {} : { stateDir: options.stateDir };
  const locations = await findThreadSandboxes(store.root, threadId, stateOptions);
  for (const location of locations) {
    const holder = await lockHolder(join(location.sandboxDir, 'run'));
    if (holder !== undefined) {
      throw new AgentsError(
        AgentsErrorCode.RunActive,
        `Thread "${threadId}" is in use by process ${holder} (a run or a rollback); wait for it to end, or stop it, before removing the thread.`,
        { details: { threadId, pid: holder } },
      );
    }
  }
  const locks: string[] = [];
  try {
    if (options.dryRun !== true) {
      for (const location of locations) {
        const runDir = join(location.sandboxDir, 'run');
        const marker = await readMarker(runDir);
        if (marker !== undefined && marker !== 'legacy')
          locks.push(await acquireRunLock(runDir, marker.id));
      }
    }
    const sandboxes = await Promise.all(
      locations.map(async (location) => ({
        actor: location.record.actor,
        dir: location.dir,
        sizeBytes: await diskUse(location.dir),
      })),
    );
    const checkpoints = await deleteCheckpoints(
      options,
      [...new Set(locations.map((location) => location.record.actor))],
      locations[0]?.record.projectDir,
    );
    const auditFile = options.auditFile ?? auditLogPath(store.root);
    const auditEntries = await removeAuditEntries(auditFile, threadId, {
      ...(options.dryRun === undefined ? {} : { dryRun: options.dryRun }),
    });
    if (
      sandboxes.length === 0 &&
      auditEntries === 0 &&
      checkpoints.every((item) => item.count === 0)
    ) {
      throw new AgentsError(
        AgentsErrorCode.CheckpointNotFound,
        `Nothing is kept of thread "${threadId}" in workspace ${store.root}: no sandbox, no checkpoints, no audit entries. Check the thread id (\`agents sandbox list\` shows the kept threads).`,
        { details: { threadId } },
      );
    }
    if (options.dryRun !== true) {
      for (const location of locations) {
        await rm(location.dir, { recursive: true, force: true });
        await removeIfEmpty(dirname(location.dir));
      }
    }
    return { threadId, sandboxes, checkpoints, auditEntries, auditFile };
  } finally {
    // Gone with their folders when removed; released when something failed first.
    for (const lock of locks) await rm(lock, { force: true }).catch(() => undefined);
  }
}

/**
 * Deletes the thread's checkpoints from each distinct store of `actors` (all actors of the
 * workspace when none is known, plus the default SQLite file when it exists), counting them
 * first. Stores that do not exist yet are not made.
 */
async function deleteCheckpoints(
  options: RemoveThreadOptions,
  actors: string[],
  recordedProjectDir: string | undefined,
): Promise<Array<{ store: string; count: number }>> {
  const { store, threadId, signal } = options;
  const projectDir = recordedProjectDir ?? store.projectDir;
  // Each store with the actor that used it: a store several projects share (Postgres) keeps a
  // thread per project and actor (see `withThreadNamespace`), so it is asked once per actor.
  const stores = await checkpointStores();
  const settings: Array<{ setting: { type: string }; actor: string | undefined }> = [];
  if (actors.length > 0) {
    for (const actor of actors) {
      // An actor whose file was removed since: its thread was kept in the default store.
      settings.push({
        setting: (await store.has('actor', actor))
          ? (await store.get('actor', actor)).checkpointer
          : { type: stores.defaultType },
        actor,
      });
    }
  } else {
    const listing = await store.list('actor');
    settings.push(
      ...listing.records.map((record) => ({
        setting: record.value.checkpointer,
        actor: record.name,
      })),
    );
    settings.push({ setting: { type: stores.defaultType }, actor: undefined });
  }
  const seen = new Set<string>();
  const results: Array<{ store: string; count: number }> = [];
  for (const { setting, actor } of settings) {
    const { backend, settings: resolved } = stores.resolve(setting);
    // An ephemeral store died with its process: there is nothing left to remove.
    if (backend.ephemeral) continue;
    const { name, exists } = backend.locate(resolved, projectDir);
    const scope =
      actor === undefined ? undefined : await sharedThreadScope(backend, projectDir, actor);
    const key = scope === undefined ? name : `${name}\0${scope.actor}`;
    if (seen.has(key)) continue;
    seen.add(key);
    if (!exists) continue;
    const checkpointer = await backend.open(resolved, {
      cwd: projectDir,
      ...(scope === undefined ? {} : { threadScope: scope }),
      ...(signal === undefined ? {} : { signal }),
    });
    try {
      let count = 0;
      for await (const _checkpoint of checkpointer.saver.list({
        configurable: { thread_id: threadId },
      })) {
        count++;
      }
      if (count > 0 && options.dryRun !== true) await checkpointer.saver.deleteThread(threadId);
      results.push({ store: name, count });
    } finally {
      await checkpointer.close();
    }
  }
  return results;
}

async function removeIfEmpty(dir: string): Promise<void> {
  try {
    if ((await readdir(dir)).length === 0) await rmdir(dir);
  } catch {
    // Gone already, or a thread was added meanwhile.
  }
}
