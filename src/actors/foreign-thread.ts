import { access } from 'node:fs/promises';
import { AgentsError, AgentsErrorCode } from '../errors.js';
import type { ThreadScope } from '../checkpoint/thread-namespace.js';
import { checkpointStores } from '../runtime/agents-runtime.js';
import { projectIdOf } from './project-id.js';
import { threadSandboxDir } from './thread-sandbox.js';

/**
 * Says what a thread id already names elsewhere in the shared database, before a run starts a
 * new, empty thread under it: another actor of this project owns it (refused: one thread, one
 * actor, as on one worker), or other projects use the same id (a warning: namespaced, so a
 * separate thread, but a user who meant that one should know).
 */
export function checkForeignThreads(
  foreign: readonly ThreadScope[],
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
  /** The actor's `checkpointer` setting: only a store several projects share has owners. */
  checkpointer: { type: string } | undefined;
  projectDir: string;
  workspaceRoot: string;
  actor: string;
  threadId: string;
  warn?: (message: string) => void;
}

/**
 * On a worker that has never opened thread `threadId` of this actor (no local folder), with a
 * store several projects share (its backend has `threadOwners`): refuses another actor's thread
 * of this project and warns of other projects' threads of that id ({@link checkForeignThreads}).
 * Free otherwise.
 */
export async function refuseForeignThread(check: ForeignThreadCheck): Promise<void> {
  if (check.checkpointer === undefined) return;
  const { backend, settings } = (await checkpointStores()).resolve(check.checkpointer);
  if (backend.threadOwners === undefined) return;
  const known = await access(threadSandboxDir(check.workspaceRoot, check.actor, check.threadId))
    .then(() => true)
    .catch(() => false);
  if (known) return;
  const scope = { project: await projectIdOf(check.projectDir), actor: check.actor };
  const owners = await backend.threadOwners(settings, check.threadId);
  // The scope has the thread itself: it is not new, and nothing is foreign about it.
  if (owners.some((owner) => owner.project === scope.project && owner.actor === scope.actor))
    return;
  checkForeignThreads(owners, scope, check.threadId, check.warn);
}
