import type { CheckpointBackend } from '../checkpoint/backend.js';
import type { ThreadScope } from '../checkpoint/thread-namespace.js';
import { projectIdOf } from './project-id.js';

/**
 * Whose threads an actor's checkpoints are, for a store several projects share (one whose
 * backend leases threads: Postgres): the project id and the actor. Undefined for a store one
 * project owns (SQLite, memory) or a saver the caller passed in (no backend).
 */
export async function sharedThreadScope(
  backend: CheckpointBackend | undefined,
  projectDir: string,
  actor: string,
): Promise<ThreadScope | undefined> {
  if (backend?.lease === undefined) return undefined;
  return { project: await projectIdOf(projectDir), actor };
}
