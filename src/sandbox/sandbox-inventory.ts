import { lstat, readdir, readFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { CONTAINER_PREFIX } from './git/local-sandbox.js';
import { lastActivity, lockHolder, readMarker } from './sandbox-marker.js';
import { gitTopLevel, realSourceDir, SANDBOXES_FOLDER } from './source-dir.js';
import {
  agentsStateDir,
  PROJECTS_FOLDER,
  projectStateDir,
  THREAD_RECORD_FILE,
  THREAD_SANDBOX_FOLDER,
  THREADS_FOLDER,
  WORKSPACES_FOLDER,
  workspaceStateDir,
} from './state-dir.js';

/**
 * One sandbox in the per-user state folder, as `agents sandbox list` shows it.
 *
 * `status`: `ok`; `no-sandbox`, a thread's record whose sandbox is gone (removed by hand, or a
 * start that failed half-way); `incomplete`, a folder of ours without a finished record (a
 * process killed while making it); `legacy`, a sandbox of the first design (a worktree of the
 * user's repo), listed but never pruned, since removing it needs `git worktree prune` in the
 * user's repo.
 */
export interface SandboxEntry {
  kind: 'run' | 'thread';
  /** The folder a prune deletes, with everything in it (a thread's whole folder, record included). */
  dir: string;
  /** The project's or workspace's folder name in the state folder (`<name>-<hash>`). */
  project: string;
  status: 'ok' | 'no-sandbox' | 'incomplete' | 'legacy';
  sandboxId?: string;
  /** The folder the sandbox was made from. */
  source?: string;
  actor?: string;
  threadId?: string;
  /** Disk use in bytes (allocated blocks, each hard-linked file once). */
  sizeBytes: number;
  /** When the sandbox (or the thread's record) was made, ms since the epoch. */
  createdAt: number;
  /** The last snapshot, head move or run start (see `lastActivity`), ms since the epoch. */
  lastUsedAt: number;
  /** The live process holding the sandbox's run lock (a run or a rollback), when one does. */
  activePid?: number;
}

/** Which sandboxes {@link listSandboxes} looks at. */
export interface ListSandboxesOptions {
  /** The per-user state folder; default `agentsStateDir()`. */
  stateDir?: string;
  /**
   * Every project and workspace in the state folder. Otherwise only the run sandboxes made
   * from `sources` and the thread sandboxes of `workspaceRoots`.
   */
  all?: boolean;
  /** Project folders (or folders inside them): their run sandboxes. */
  sources?: readonly string[];
  /** Workspace folders (`.agents`): their thread sandboxes. */
  workspaceRoots?: readonly string[];
  /** Folders given as `createSandbox({ baseDir })`: the run sandboxes made there. */
  baseDirs?: readonly string[];
  signal?: AbortSignal;
}

/**
 * Lists the sandboxes kept on disk: run sandboxes (`projects/<p>/sandboxes/...`) and thread
 * sandboxes (`workspaces/<w>/threads/<actor>/<thread>`) of the per-user state folder, with their
 * size, age, last use and whether a live process holds them. Reads only; folders that are not
 * ours (no `agents-sandbox-` prefix, no marker, no thread record) are left out. Sorted by last
 * use, oldest first.
 */
export async function listSandboxes(options: ListSandboxesOptions = {}): Promise<SandboxEntry[]> {
  const { signal } = options;
  signal?.throwIfAborted();
  const stateDir = options.stateDir ?? agentsStateDir();
  const runFolders = new Set<string>(options.baseDirs ?? []);
  const threadFolders = new Set<string>();
  if (options.all === true) {
    for (const name of await subfolders(join(stateDir, PROJECTS_FOLDER))) {
      runFolders.add(join(stateDir, PROJECTS_FOLDER, name, SANDBOXES_FOLDER));
    }
    for (const name of await subfolders(join(stateDir, WORKSPACES_FOLDER))) {
      threadFolders.add(join(stateDir, WORKSPACES_FOLDER, name, THREADS_FOLDER));
    }
  } else {
    for (const source of options.sources ?? []) {
      let real: string;
      try {
        real = await realSourceDir(source);
      } catch {
        continue;
      }
      const project = (await gitTopLevel(real, signal)) ?? real;
      runFolders.add(join(projectStateDir(project, { stateDir }), SANDBOXES_FOLDER));
    }
    for (const root of options.workspaceRoots ?? []) {
      threadFolders.add(join(workspaceStateDir(root, { stateDir }), THREADS_FOLDER));
    }
  }
  const entries: SandboxEntry[] = [];
  for (const folder of runFolders) {
    for (const name of await subfolders(folder)) {
      signal?.throwIfAborted();
      if (!name.startsWith(CONTAINER_PREFIX)) continue;
      entries.push(await describeRunSandbox(join(folder, name), projectName(folder)));
    }
  }
  for (const folder of threadFolders) {
    for (const actorFolder of await subfolders(folder)) {
      for (const threadFolder of await subfolders(join(folder, actorFolder))) {
        signal?.throwIfAborted();
        const entry = await describeThreadFolder(
          join(folder, actorFolder, threadFolder),
          projectName(folder),
        );
        if (entry !== undefined) entries.push(entry);
      }
    }
  }
  return entries.sort((a, b) => a.lastUsedAt - b.lastUsedAt || a.dir.localeCompare(b.dir));
}

/** `<state>/projects/<name>-<hash>/sandboxes` → `<name>-<hash>`. */
function projectName(folder: string): string {
  return basename(join(folder, '..'));
}

async function describeRunSandbox(container: string, project: string): Promise<SandboxEntry> {
  const sandbox = await describeSandbox(container);
  return { kind: 'run', dir: container, project, ...sandbox, sizeBytes: await diskUse(container) };
}

/** A thread's folder: its record (`thread.json`) and its sandbox; undefined when neither is ours. */
async function describeThreadFolder(
  dir: string,
  project: string,
): Promise<SandboxEntry | undefined> {
  const record = await readThreadRecord(dir);
  const sandbox = await describeSandbox(join(dir, THREAD_SANDBOX_FOLDER));
  if (record === undefined && sandbox.status === 'incomplete') {
    // Not even a record: ours only when the folder sits where threads go and holds our files.
    const names = await subfolders(dir, { files: true });
    if (!names.every((name) => name === THREAD_SANDBOX_FOLDER || name.startsWith('.thread')))
      return undefined;
  }
  const status =
    sandbox.status === 'incomplete' && record !== undefined ? 'no-sandbox' : sandbox.status;
  return {
    kind: 'thread',
    dir,
    project,
    ...sandbox,
    status,
    sizeBytes: await diskUse(dir),
    ...(record === undefined
      ? {}
      : {
          actor: record.actor,
          threadId: record.threadId,
          ...(sandbox.source === undefined ? { source: record.source } : {}),
        }),
    ...(sandbox.status === 'incomplete' && record !== undefined
      ? { createdAt: record.createdAt, lastUsedAt: Math.max(record.createdAt, sandbox.lastUsedAt) }
      : {}),
  };
}

/** What a sandbox folder (`run/` plus its tree) says about itself. */
async function describeSandbox(
  container: string,
): Promise<Omit<SandboxEntry, 'kind' | 'dir' | 'project' | 'sizeBytes'>> {
  const runDir = join(container, 'run');
  const marker = await readMarker(runDir);
  if (marker === undefined || marker === 'legacy') {
    const modified = await mtime(container);
    return {
      status: marker === 'legacy' ? 'legacy' : 'incomplete',
      createdAt: modified,
      lastUsedAt: modified,
    };
  }
  const activePid = await lockHolder(runDir);
  return {
    status: 'ok',
    sandboxId: marker.id,
    source: marker.source,
    createdAt: marker.createdAt,
    lastUsedAt: await lastActivity(runDir, marker),
    ...(activePid === undefined ? {} : { activePid }),
  };
}

/** The fields of a thread's record the listing shows; undefined when missing or not ours. */
async function readThreadRecord(
  dir: string,
): Promise<{ actor: string; threadId: string; source?: string; createdAt: number } | undefined> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(join(dir, THREAD_RECORD_FILE), 'utf8'));
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const record = parsed as Record<string, unknown>;
  const { actor, threadId, source, createdAt } = record;
  if (record['kind'] !== 'agents-thread' || typeof actor !== 'string') return undefined;
  if (typeof threadId !== 'string') return undefined;
  return {
    actor,
    threadId,
    ...(typeof source === 'string' ? { source } : {}),
    createdAt: typeof createdAt === 'number' ? createdAt : await mtime(dir),
  };
}

async function subfolders(dir: string, options: { files?: boolean } = {}): Promise<string[]> {
  try {
    return (await readdir(dir, { withFileTypes: true }))
      .filter((entry) => options.files === true || entry.isDirectory())
      .map((entry) => entry.name)
      .sort();
  } catch {
    return [];
  }
}

async function mtime(path: string): Promise<number> {
  try {
    return (await lstat(path)).mtimeMs;
  } catch {
    return 0;
  }
}

/**
 * Bytes a folder takes on disk: allocated blocks of everything under it, symlinks not followed,
 * each inode counted once (hard links). Entries that vanish meanwhile count as nothing.
 */
export async function diskUse(dir: string): Promise<number> {
  const seen = new Set<string>();
  let total = 0;
  const visit = async (path: string): Promise<void> => {
    let info;
    try {
      info = await lstat(path);
    } catch {
      return;
    }
    const key = `${info.dev}:${info.ino}`;
    if (seen.has(key)) return;
    seen.add(key);
    // `blocks` is what the file takes on disk (sparse files, small files in one block).
    total += Number.isFinite(info.blocks) && info.blocks > 0 ? info.blocks * 512 : info.size;
    if (!info.isDirectory()) return;
    let names: string[];
    try {
      names = await readdir(path);
    } catch {
      return;
    }
    for (const name of names) await visit(join(path, name));
  };
  await visit(dir);
  return total;
}
