import { access } from 'node:fs/promises';
import { AgentsError, AgentsErrorCode } from '../errors.js';
import { storedThreadIdOf, type ThreadScope } from '../checkpoint/thread-namespace.js';
import { projectIdOf } from './project-id.js';
import { threadSandboxDir } from './thread-sandbox.js';

/** Postgres's SQLSTATE for a table that does not exist. */
const UNDEFINED_TABLE = '42P01';

/** Another project's or actor's thread of the same id, in a database several share. */
export interface ForeignThread {
  project: string;
  actor: string;
}

/**
 * The owners of thread `threadId` in a shared Postgres database other than `scope`, or `[]`
 * when `scope` has the thread itself (then it is not new, and nothing is foreign about it).
 * Thread ids are stored as `<project>/<actor>/<thread>` (see `withThreadNamespace`): the rows
 * ending in `/<thread>` are that id's owners. Asked only when a worker opens a thread it has
 * no local record of, so the one extra connection is not paid by every run.
 */
export async function foreignThreadsOf(
  url: string,
  scope: ThreadScope,
  threadId: string,
): Promise<ForeignThread[]> {
  const pg = await import('pg');
  const client = new pg.default.Client({ connectionString: url });
  await client.connect();
  try {
    const suffix = `/${threadId}`;
    const pattern = `%${suffix.replace(/[\\%_]/g, (match) => `\\${match}`)}`;
    const found = await client
      .query<{ thread_id: string }>(
        "SELECT DISTINCT thread_id FROM checkpoints WHERE thread_id LIKE $1 ESCAPE '\\' LIMIT 20",
        [pattern],
      )
      .catch((error: unknown) => {
        // A fresh database: the checkpointer makes its tables after this check; no thread yet.
        if ((error as { code?: unknown }).code === UNDEFINED_TABLE) return { rows: [] };
        throw error;
      });
    const { rows } = found;
    const stored = rows.map((row) => row.thread_id);
    if (stored.includes(storedThreadIdOf(scope, threadId))) return [];
    return stored.flatMap((id) => {
      // `<project>/<actor>`: the actor has no `/` (a file name), a project id may.
      const owner = id.slice(0, -suffix.length);
      const slash = owner.lastIndexOf('/');
      return slash <= 0 ? [] : [{ project: owner.slice(0, slash), actor: owner.slice(slash + 1) }];
    });
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * Says what a thread id already names elsewhere in the shared database, before a run starts a
 * new, empty thread under it: another actor of this project owns it (refused: one thread, one
 * actor, as on one worker), or other projects use the same id (a warning: namespaced, so a
 * separate thread, but a user who meant that one should know).
 */
export function checkForeignThreads(
  foreign: readonly ForeignThread[],
  scope: ThreadScope,
  threadId: string,
  warn: ((message: string) => void) | undefined,
): void {
  const sameProject = foreign.filter((owner) => owner.project === scope.project);
  const owner = sameProject[0];
  if (owner !== undefined) {
    throw new AgentsError(
      AgentsErrorCode.InvalidArguments,
      `Thread "${threadId}" belongs to actor "${owner.actor}" in this project (its checkpoints are in the shared database; one thread, one actor); use \`agents actor resume ${owner.actor} --thread ${threadId}\` to go on with it, or run actor "${scope.actor}" with another --thread.`,
      { details: { threadId, actor: scope.actor, owner: owner.actor, project: scope.project } },
    );
  }
  if (foreign.length === 0) return;
  const others = foreign.map((item) => `project ${item.project} (actor ${item.actor})`);
  warn?.(
    `Thread "${threadId}" is new for actor "${scope.actor}" in this project (${scope.project}); the shared database also holds a thread "${threadId}" of ${others.join(', ')}, a separate thread. Run from that project's checkout to go on with it.`,
  );
}

/** What {@link refuseForeignThread} needs. */
export interface ForeignThreadCheck {
  /** The actor's `checkpointer` setting: only a Postgres one is shared. */
  checkpointer: { type: string; url?: string } | undefined;
  projectDir: string;
  workspaceRoot: string;
  actor: string;
  threadId: string;
  warn?: (message: string) => void;
}

/**
 * On a worker that has never opened thread `threadId` of this actor (no local folder), with a
 * Postgres checkpointer: refuses another actor's thread of this project and warns of other
 * projects' threads of that id ({@link checkForeignThreads}). Free otherwise.
 */
export async function refuseForeignThread(check: ForeignThreadCheck): Promise<void> {
  const url = check.checkpointer?.type === 'postgres' ? check.checkpointer.url : undefined;
  if (url === undefined) return;
  const known = await access(threadSandboxDir(check.workspaceRoot, check.actor, check.threadId))
    .then(() => true)
    .catch(() => false);
  if (known) return;
  const scope = { project: await projectIdOf(check.projectDir), actor: check.actor };
  checkForeignThreads(
    await foreignThreadsOf(url, scope, check.threadId),
    scope,
    check.threadId,
    check.warn,
  );
}
