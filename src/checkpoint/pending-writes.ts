import type { CheckpointTuple } from '@langchain/langgraph-checkpoint';
import { compareWritesSortKeys, writesSortKey } from '@langchain/langgraph-checkpoint';

/** One task's stored path (the `task_path` column both subclassed savers add). */
export interface TaskPathRow {
  task_id: string;
  task_path: string;
}

/**
 * `tuple` with its pending writes in the order LangGraph replays them, (task path, task id,
 * index): the upstream SQLite and Postgres savers drop the path and return them by task id
 * (random), so the results of parallel calls came back out of order. `taskPaths` reads the
 * checkpoint's stored paths (asked only when there are two writes or more); a task without
 * one sorts first, as LangGraph specifies for older rows.
 */
export async function withOrderedPendingWrites(
  tuple: CheckpointTuple | undefined,
  taskPaths: (configurable: {
    thread_id: unknown;
    checkpoint_ns: unknown;
    checkpoint_id: unknown;
  }) => TaskPathRow[] | Promise<TaskPathRow[]>,
): Promise<CheckpointTuple | undefined> {
  const writes = tuple?.pendingWrites;
  if (tuple === undefined || writes === undefined || writes.length < 2) return tuple;
  const { thread_id, checkpoint_ns = '', checkpoint_id } = tuple.config.configurable ?? {};
  const rows = await taskPaths({ thread_id, checkpoint_ns, checkpoint_id });
  const pathOf = new Map(rows.map((row) => [row.task_id, row.task_path]));
  // Stable sort: a task's own writes keep their stored (idx) order.
  const keyed = writes.map((write, index) => ({
    write,
    key: writesSortKey(pathOf.get(write[0]) ?? '', write[0], index),
  }));
  keyed.sort((left, right) => compareWritesSortKeys(left.key, right.key));
  return { ...tuple, pendingWrites: keyed.map((item) => item.write) };
}
