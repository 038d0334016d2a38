/**
 * `agents checkpoints` without LangGraph (issue 29): the same entries as {@link listCheckpoints},
 * read straight from the SQLite saver's tables of an actor thread. The state each checkpoint
 * holds is rebuilt as LangGraph rebuilds it (the `messages` and `changeLog` delta channels by
 * replaying ancestors' writes from the nearest stored value), and `next` is computed from the
 * actor graph's shape as LangGraph's `_prepareNextTasks` does. Whatever it does not fully
 * understand makes it return `undefined`, and the command asks LangGraph instead.
 * `test/cli/checkpoints-fast.int.test.ts` holds both to the same output on real threads.
 */
import { createHash } from 'node:crypto';
import type { ChangeRecord, ChangedPath, SkippedPath } from '../core/change-record.js';
import type { RollbackRecord, SandboxState } from '../core/sandbox-state.js';
import type { Sandbox } from '../sandbox/types.js';
import {
  DeltaSnapshotValue,
  NotUnderstood,
  openSqliteCheckpointTables,
  SerializedMessage,
} from '../checkpoint/sqlite-tables.js';
import type {
  CheckpointRow,
  SqliteCheckpointTables,
  WriteRow,
} from '../checkpoint/sqlite-tables.js';
import { buildCheckpointEntries } from './checkpoint-entries.js';
import type { CheckpointEntry, CheckpointView } from './checkpoint-entries.js';

/**
 * The actor graph's nodes and the channel that triggers each (`compileActorStateGraph`), in the
 * order LangGraph lists them; the equality test checks them against the compiled graph.
 */
export const ACTOR_GRAPH_TRIGGERS: ReadonlyArray<readonly [node: string, trigger: string]> = [
  ['__start__', '__start__'],
  ['agent', 'branch:to:agent'],
  ['tools', 'branch:to:tools'],
];
/** The actor graph's state and control channels (null-task writes to them change a state). */
export const ACTOR_GRAPH_CHANNELS: readonly string[] = [
  'messages',
  'changeLog',
  'sandboxHead',
  'rollbacks',
  'activeSkill',
  'runTurns',
  '__start__',
  '__pregel_tasks',
  'branch:to:agent',
  'branch:to:tools',
];
const TASKS = '__pregel_tasks';
const NULL_TASK_ID = '00000000-0000-0000-0000-000000000000';

/** What {@link listSqliteCheckpoints} returns: the entries and the thread's current rollbacks. */
export interface SqliteCheckpointList {
  /** As `listCheckpoints` gives them, without `config`. */
  entries: Array<Omit<CheckpointEntry, 'config'>>;
  /** The `rollbacks` of the thread's current state (`graph.getState(thread)`). */
  rollbacks: RollbackRecord[];
}

/** Options of {@link listSqliteCheckpoints}, as those of `listCheckpoints`. */
export interface ListSqliteCheckpointsOptions {
  /** The SQLite checkpoint file of the thread's actor. */
  file: string;
  threadId: string;
  sandbox?: Sandbox | undefined;
  limit?: number | undefined;
  signal?: AbortSignal | undefined;
}

const isSqliteError = (error: unknown): boolean =>
  error instanceof Error && error.name === 'SqliteError';

/** LangGraph's `uuid5(name, namespace)` (task ids). */
function uuid5(name: string, namespace: string): string {
  const hex = namespace.replace(/-/g, '');
  if (!/^[0-9a-f]{32}$/i.test(hex)) throw new NotUnderstood('checkpoint id format');
  const hash = createHash('sha1').update(Buffer.from(hex, 'hex')).update(name, 'utf8').digest();
  hash[6] = (hash[6]! & 0x0f) | 0x50;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const out = hash.subarray(0, 16).toString('hex');
  return `${out.slice(0, 8)}-${out.slice(8, 12)}-${out.slice(12, 16)}-${out.slice(16, 20)}-${out.slice(20)}`;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function numberVersion(value: unknown): number | undefined {
  if (value === undefined) return undefined;
  // Versions of other savers are strings (compared as such by LangGraph): not read here.
  if (typeof value !== 'number') throw new NotUnderstood('channel version');
  return value;
}

/** The nodes LangGraph would run next from `row` (`StateSnapshot.next` of a stored checkpoint). */
function nextOf(row: CheckpointRow, writes: readonly WriteRow[]): string[] {
  const {
    channel_values: values,
    channel_versions: versions,
    versions_seen: seen,
  } = row.checkpoint;
  const next: string[] = [];
  // Sends first, in their order (one task each), then the nodes their triggers fire.
  const sends = values[TASKS];
  if (sends !== undefined) {
    if (!Array.isArray(sends)) throw new NotUnderstood('pending sends');
    for (const send of sends) {
      const node = isObject(send) ? send['node'] : undefined;
      if (
        typeof node !== 'string' ||
        (send as Record<string, unknown>)['args'] === undefined ||
        !ACTOR_GRAPH_TRIGGERS.some(([name]) => name === node)
      )
        throw new NotUnderstood('pending send');
      next.push(node);
    }
  }
  const versionList = Object.values(versions);
  // Versions of other savers are strings (compared as such by LangGraph): not read here.
  if (versionList.some((version) => typeof version !== 'number'))
    throw new NotUnderstood('channel version');
  // No channel written yet: no node is triggered.
  if (versionList.length === 0) return next;
  const nullVersion = 0;
  const stored = row.metadata['step'] ?? -1;
  if (typeof stored !== 'number') throw new NotUnderstood('checkpoint step');
  // LangGraph's task ids name the step that runs from here.
  const step = stored + 1;
  for (const [node, trigger] of ACTOR_GRAPH_TRIGGERS) {
    if (writes.length > 0) {
      // A node whose task already wrote under its node-named id is not run again.
      const doneId = uuid5(
        JSON.stringify([node, String(step), node, '__pregel_pull', node]),
        row.checkpointId,
      );
      if (writes.some((write) => write.taskId === doneId && write.channel !== '__error__'))
        continue;
    }
    // An ephemeral trigger channel is available when the checkpoint stores a value for it.
    if (!Object.hasOwn(values, trigger) || values[trigger] === undefined) continue;
    const seenVersions = seen[node];
    if (seenVersions !== undefined && !isObject(seenVersions))
      throw new NotUnderstood('versions seen');
    const current = numberVersion(versions[trigger]) ?? nullVersion;
    const read = numberVersion(seenVersions?.[trigger]) ?? nullVersion;
    if (current > read) next.push(node);
  }
  return next;
}

function isOverwrite(value: unknown): boolean {
  return (
    isObject(value) &&
    ('__overwrite__' in value || (value['type'] === '__overwrite__' && 'value' in value))
  );
}

/** `messagesDeltaReducer` over decoded messages (replace by id, append the rest). */
function reduceMessages(state: readonly unknown[], writes: readonly unknown[]): unknown[] {
  const result = [...state];
  const index = new Map<string, number>();
  result.forEach((message, at) => {
    if (!(message instanceof SerializedMessage)) throw new NotUnderstood('message in state');
    if (message.id !== undefined) index.set(message.id, at);
  });
  for (const write of writes) {
    for (const message of Array.isArray(write) ? write : [write]) {
      // Message-likes LangChain would coerce, removals: not read here.
      if (!(message instanceof SerializedMessage)) throw new NotUnderstood('message write');
      if (message.id === undefined) result.push(message);
      else if (index.has(message.id)) result[index.get(message.id)!] = message;
      else {
        index.set(message.id, result.length);
        result.push(message);
      }
    }
  }
  return result;
}

/** The `changeLog` channel's batch reducer (append, flattening arrays). */
function reduceChangeLog(state: readonly unknown[], writes: readonly unknown[]): unknown[] {
  const result = [...state];
  for (const write of writes) {
    if (write === undefined) continue;
    if (Array.isArray(write)) result.push(...(write as unknown[]));
    else result.push(write);
  }
  return result;
}

const DELTA_CHANNELS = { messages: reduceMessages, changeLog: reduceChangeLog } as const;
type DeltaChannel = keyof typeof DELTA_CHANNELS;

/** A delta channel's value from what a checkpoint stores for it (`DeltaChannel.fromCheckpoint`). */
function storedDeltaValue(stored: unknown): unknown[] {
  if (stored === undefined) return [];
  const value = stored instanceof DeltaSnapshotValue ? stored.value : stored;
  if (!Array.isArray(value)) throw new NotUnderstood('delta channel value');
  return value;
}

/**
 * Rebuilds delta channels as `channelsFromCheckpoint` + `getDeltaChannelHistory` do: the nearest
 * ancestor that stores the channel gives the base, and the writes of every ancestor from there
 * on (all their tasks, in replay order) go through the reducer. Each ancestor's value is
 * remembered, so listing a thread reads each row once.
 */
function deltaReader(tables: SqliteCheckpointTables, threadId: string) {
  // The value the ancestor walk gives each row (before its own version is looked at).
  const walked = new Map<string, unknown[]>();
  const writesOf = (channel: DeltaChannel, row: CheckpointRow): unknown[] => {
    const writes = tables
      .writes(threadId, row.checkpointId)
      .filter((write) => write.channel === channel)
      .map((write) => write.value);
    if (writes.some(isOverwrite)) throw new NotUnderstood('overwrite write');
    return writes;
  };
  const walk = (channel: DeltaChannel, row: CheckpointRow): unknown[] => {
    // Up to a row whose value is known or stored, or whose parent is not there.
    const chain: CheckpointRow[] = [];
    const parents: Array<CheckpointRow | undefined> = [];
    let value: unknown[] = [];
    for (let at = row; ;) {
      const known = walked.get(`${channel}\0${at.checkpointId}`);
      if (known !== undefined) {
        value = known;
        break;
      }
      if (Object.hasOwn(at.checkpoint.channel_values, channel)) {
        value = storedDeltaValue(at.checkpoint.channel_values[channel]);
        walked.set(`${channel}\0${at.checkpointId}`, value);
        break;
      }
      const parent =
        at.parentCheckpointId === undefined
          ? undefined
          : tables.get(threadId, at.parentCheckpointId);
      chain.push(at);
      parents.push(parent);
      if (parent === undefined) break;
      at = parent;
    }
    // Oldest first: a row's value is its parent's and the parent's writes (all its tasks).
    for (let index = chain.length - 1; index >= 0; index -= 1) {
      const parent = parents[index];
      if (parent === undefined) value = [];
      else {
        const writes = writesOf(channel, parent);
        if (writes.length > 0) value = DELTA_CHANNELS[channel](value, writes);
      }
      walked.set(`${channel}\0${chain[index]!.checkpointId}`, value);
    }
    return value;
  };
  return (channel: DeltaChannel, row: CheckpointRow): unknown[] => {
    const { channel_values: values, channel_versions: versions } = row.checkpoint;
    if (Object.hasOwn(values, channel)) return storedDeltaValue(values[channel]);
    // A branch that versions every delta write: no version means never written.
    if (row.metadata['delta_writes_versioned'] === true && versions[channel] === undefined)
      return [];
    return walk(channel, row);
  };
}

/** Reads fields as zod's `z.object` does (known keys, in schema order; unknown ones dropped). */
function field<T>(record: Record<string, unknown>, key: string, check: (value: unknown) => T): T {
  return check(record[key]);
}
const str = (value: unknown): string => {
  if (typeof value !== 'string') throw new NotUnderstood('record field');
  return value;
};
const optional =
  <T>(check: (value: unknown) => T) =>
  (value: unknown): T | undefined =>
    value === undefined ? undefined : check(value);
const oneOf =
  <T extends string>(...allowed: T[]) =>
  (value: unknown): T => {
    if (!allowed.includes(value as T)) throw new NotUnderstood('record field');
    return value as T;
  };
const listOf =
  <T>(check: (value: unknown) => T) =>
  (value: unknown): T[] => {
    if (!Array.isArray(value)) throw new NotUnderstood('record list');
    return value.map(check);
  };
const objectOf =
  <T>(read: (record: Record<string, unknown>) => T) =>
  (value: unknown): T => {
    if (!isObject(value)) throw new NotUnderstood('record');
    return read(value);
  };
/** Drops the keys whose value is absent. */
function compact<T extends object>(record: T): T {
  return Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined)) as T;
}

const changedPath = objectOf<ChangedPath>((record) => ({
  status: field(record, 'status', str),
  path: field(record, 'path', str),
}));
const skippedPath = objectOf<SkippedPath>((record) =>
  compact({
    path: field(record, 'path', str),
    reason: field(
      record,
      'reason',
      oneOf('size-cap', 'nested-repo', 'git-name', 'empty-repo', 'special-file'),
    ),
    size: field(
      record,
      'size',
      optional((value) => {
        if (typeof value !== 'number') throw new NotUnderstood('record field');
        return value;
      }),
    ),
  }),
);
const changeRecord = objectOf<ChangeRecord>((record) =>
  compact({
    toolCallId: field(record, 'toolCallId', optional(str)),
    toolId: field(record, 'toolId', str),
    snapshot: field(record, 'snapshot', str),
    parent: field(record, 'parent', str),
    changed: field(record, 'changed', listOf(changedPath)),
    skipped: field(record, 'skipped', optional(listOf(skippedPath))),
    scan: field(record, 'scan', optional(oneOf('watched', 'full'))),
    scanReason: field(record, 'scanReason', optional(str)),
  }),
);
const rollbackRecord = objectOf<RollbackRecord>((record) => ({
  kind: field(record, 'kind', oneOf('rollback', 'undo')),
  safety: field(record, 'safety', str),
  from: field(record, 'from', str),
  to: field(record, 'to', str),
  sandboxHead: field(record, 'sandboxHead', str),
  time: field(record, 'time', str),
}));

/** A stored (non-delta) reducer channel's value; rebuilt by LangGraph when missing: not here. */
function storedValue(row: CheckpointRow, channel: string): unknown {
  const { channel_values: values, channel_versions: versions } = row.checkpoint;
  if (!Object.hasOwn(values, channel) && versions[channel] !== undefined)
    throw new NotUnderstood(`${channel} without a stored value`);
  return values[channel];
}

/** `readSandboxState` of the row's values (a malformed field, which zod would drop, is not read). */
function sandboxStateOf(row: CheckpointRow, changeLog: unknown[]): SandboxState {
  const head = storedValue(row, 'sandboxHead');
  const rollbacks = storedValue(row, 'rollbacks');
  return {
    changeLog: changeLog.map(changeRecord),
    ...(typeof head === 'string' && head !== '' ? { sandboxHead: head } : {}),
    rollbacks: rollbacks === undefined ? [] : listOf(rollbackRecord)(rollbacks),
  };
}

/**
 * Lists a thread's checkpoints from the SQLite file of its actor, as `listCheckpoints` over the
 * actor graph does, or returns `undefined` when the file holds something this reader does not
 * fully understand (or no checkpoint of the thread): the caller then asks LangGraph.
 */
export async function listSqliteCheckpoints(
  options: ListSqliteCheckpointsOptions,
): Promise<SqliteCheckpointList | undefined> {
  const { file, threadId, sandbox, limit, signal } = options;
  signal?.throwIfAborted();
  let tables: SqliteCheckpointTables | undefined;
  try {
    tables = await openSqliteCheckpointTables(file);
  } catch (error) {
    if (isSqliteError(error)) return undefined;
    throw error;
  }
  if (tables === undefined) return undefined;
  try {
    // One more than asked: the oldest listed entry's parent, usually the next one in history.
    const rows = tables.list(threadId, limit === undefined ? undefined : limit + 1);
    if (rows.length === 0) return undefined;
    const deltaValue = deltaReader(tables, threadId);
    const view = (row: CheckpointRow): CheckpointView => {
      const writes = tables.writes(threadId, row.checkpointId);
      // Writes outside any task are applied to the state LangGraph shows: not read here.
      if (
        writes.some(
          (write) => write.taskId === NULL_TASK_ID && ACTOR_GRAPH_CHANNELS.includes(write.channel),
        )
      )
        throw new NotUnderstood('null-task write');
      const messages = deltaValue('messages', row);
      const ts = row.checkpoint.ts;
      return {
        checkpointId: row.checkpointId,
        ...(row.parentCheckpointId === undefined
          ? {}
          : { parentCheckpointId: row.parentCheckpointId }),
        metadata: row.metadata,
        ...(typeof ts === 'string' ? { createdAt: ts } : {}),
        next: nextOf(row, writes),
        values: { messages },
        state: sandboxStateOf(row, deltaValue('changeLog', row)),
        config: { configurable: { thread_id: threadId, checkpoint_id: row.checkpointId } },
      };
    };
    const views = rows.map(view);
    const byId = new Map(views.map((item) => [item.checkpointId, item]));
    const entries = await buildCheckpointEntries(
      limit === undefined ? views : views.slice(0, limit),
      {
        byId,
        loadParent: async (parentCheckpointId) => {
          const row = tables.get(threadId, parentCheckpointId);
          if (row !== undefined) return view(row);
          // As `getState` of a checkpoint that is not there: empty values.
          return {
            checkpointId: parentCheckpointId,
            next: [],
            values: {},
            state: { changeLog: [], rollbacks: [] },
            config: {},
          };
        },
        sandbox,
        signal,
      },
    );
    // The current state (`getState` of the thread) adds its pending writes: only read without.
    const latest = rows[0]!;
    if (tables.writes(threadId, latest.checkpointId).some((write) => write.channel === 'rollbacks'))
      return undefined;
    const current = byId.get(latest.checkpointId)!;
    return {
      entries: entries.map(({ config: _config, ...entry }) => entry),
      rollbacks: current.state.rollbacks,
    };
  } catch (error) {
    // A file SQLite or JSON cannot read: LangGraph's path says what is wrong, in its words.
    if (error instanceof NotUnderstood || error instanceof SyntaxError || isSqliteError(error))
      return undefined;
    throw error;
  } finally {
    tables.close();
  }
}
