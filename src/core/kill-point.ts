/*
 * Test-only crash injection (issue 38): `AGENTS_TEST_KILL_AT=<name>[:<n>]` makes the process
 * SIGKILL itself the n-th time (default 1st) it passes the named boundary, so a test can kill a
 * run at a point it chooses instead of racing a timer. The variable is read once, on load: when
 * it is unset every boundary is one comparison against `undefined`.
 */

/** The boundaries a run passes, in the order one tool step passes them. */
export type KillPointName =
  /** Making a sandbox in a given folder, its store and tree made, before its marker is written. */
  | 'sandbox-create'
  /**
   * The agent node, before the model is called: the n-th pass is between steps (the previous
   * tools step's checkpoint is durable by then; the run's input too, on the first).
   */
  | 'before-model'
  /** A tool call, before `tools/call` is sent to the server. */
  | 'before-send'
  /** A tool call answered with an MCP task, right after the task is noted in the run's store. */
  | 'task-noted'
  /** A tool call, after the server answered, before the snapshot of its changes. */
  | 'after-answer'
  /**
   * A snapshot's git writes half done: its commit object is written, the sandbox's head and the
   * snapshot ref are not moved to it, and no shared store has been told of it.
   */
  | 'mid-snapshot'
  /** A tool call, after its snapshot is stored, before its result reaches any checkpoint. */
  | 'after-snapshot'
  /**
   * A push to a shared snapshot store (the n-th of the process): its keep commit is made
   * locally, the store's ref not yet moved (pushes run in the background of a run; the checkpoint
   * that names their snapshots waits for them).
   */
  | 'during-push'
  /** The checkpointer, before a checkpoint is written (the n-th `put` of the process). */
  | 'checkpoint-write';

interface KillAt {
  name: string;
  nth: number;
}

function parseKillAt(value: string | undefined): KillAt | undefined {
  if (value === undefined || value === '') return undefined;
  const [name = '', count] = value.split(':');
  const nth = count === undefined ? 1 : Number.parseInt(count, 10);
  return { name, nth: Number.isInteger(nth) && nth > 0 ? nth : 1 };
}

const killAt = parseKillAt(process.env['AGENTS_TEST_KILL_AT']);
let passed = 0;

/** SIGKILLs this process when `AGENTS_TEST_KILL_AT` names this boundary and its count is reached. */
export function killPoint(name: KillPointName): void {
  if (killAt === undefined || killAt.name !== name) return;
  passed += 1;
  if (passed === killAt.nth) process.kill(process.pid, 'SIGKILL');
}
