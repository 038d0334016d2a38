/**
 * Reading the tables of LangGraph's `SqliteSaver` (as `openOrderedSqliteSaver` writes them)
 * without loading LangGraph or LangChain: `agents checkpoints` lists a thread from them and
 * starts in a fraction of the time (issue 29: start-up is module count).
 *
 * The rows are decoded as LangGraph's `JsonPlusSerializer` decodes them, for the closed set of
 * shapes the actor graph stores: plain JSON, `undefined` and `DeltaSnapshot` records, and the
 * four LangChain message classes the actor writes. Anything else (another serde type, a `Set`,
 * another LangChain class, a message in a newer format) throws {@link NotUnderstood}, and the
 * caller falls back to LangGraph: a wrong answer is worse than a slow one.
 */

/** A row or value this reader does not fully understand; the caller falls back to LangGraph. */
export class NotUnderstood extends Error {
  override name = 'NotUnderstood';
}

/** The value of a delta channel stored whole in a checkpoint (LangGraph's `DeltaSnapshot`). */
export class DeltaSnapshotValue {
  constructor(readonly value: unknown) {}
}

/** A LangChain message as the listing reads it (the fields `stepActivity` looks at). */
export class SerializedMessage {
  declare type: 'human' | 'ai' | 'tool' | 'system';
  declare id?: string;
  declare content: unknown;
  /** The tool's name (tool messages). */
  declare name?: unknown;
  /** The calls the model asked for (AI messages). */
  declare tool_calls?: unknown[];
  constructor(fields: Pick<SerializedMessage, 'type' | 'id' | 'content' | 'name' | 'tool_calls'>) {
    Object.assign(this, fields);
  }
}

/** One checkpoint row, decoded. */
export interface CheckpointRow {
  checkpointId: string;
  parentCheckpointId?: string;
  checkpoint: {
    ts?: unknown;
    channel_values: Record<string, unknown>;
    channel_versions: Record<string, unknown>;
    versions_seen: Record<string, Record<string, unknown> | undefined>;
  };
  metadata: Record<string, unknown>;
}

/** One pending write of a checkpoint, decoded. */
export interface WriteRow {
  taskId: string;
  channel: string;
  value: unknown;
}

/** The saver's tables of one file, opened read-only. */
export interface SqliteCheckpointTables {
  /** The root-namespace checkpoints of a thread, newest first (at most `limit`). */
  list(threadId: string, limit?: number): CheckpointRow[];
  /** One checkpoint, or `undefined` when it does not exist (read once, then remembered). */
  get(threadId: string, checkpointId: string): CheckpointRow | undefined;
  /** A checkpoint's pending writes in the order LangGraph replays them (remembered). */
  writes(threadId: string, checkpointId: string): WriteRow[];
  close(): void;
}

/** The few better-sqlite3 calls used here (its type package is not a dependency). */
interface Statement {
  all(...params: unknown[]): unknown[];
}
interface Database {
  prepare(sql: string): Statement;
  close(): void;
}

const MESSAGE_TYPES: Record<string, SerializedMessage['type']> = {
  HumanMessage: 'human',
  AIMessage: 'ai',
  ToolMessage: 'tool',
  SystemMessage: 'system',
};

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** True when `value` holds a record a LangChain `load` would revive (lc 1 or 2) anywhere. */
function holdsRevivable(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(holdsRevivable);
  if (!isObject(value)) return false;
  if (value['lc'] === 1 || value['lc'] === 2) return true;
  return Object.values(value).some(holdsRevivable);
}

/** A serialized LangChain message (`{lc:1,type:"constructor",id,kwargs}`) as a record. */
function decodeMessage(id: unknown[], kwargs: unknown): SerializedMessage {
  const className =
    id.length === 3 && id[0] === 'langchain_core' && id[1] === 'messages' ? id[2] : undefined;
  const type = typeof className === 'string' ? MESSAGE_TYPES[className] : undefined;
  if (type === undefined || !isObject(kwargs))
    throw new NotUnderstood(`LangChain class ${id.join('.')}`);
  // Nested LangChain records are revived by `load` (secrets, other classes): not read here.
  if (holdsRevivable(kwargs)) throw new NotUnderstood('nested LangChain record in a message');
  const { content, id: messageId } = kwargs;
  if (typeof content !== 'string' && !Array.isArray(content))
    throw new NotUnderstood('message content');
  if (messageId !== undefined && messageId !== null && typeof messageId !== 'string')
    throw new NotUnderstood('message id');
  const fields: ConstructorParameters<typeof SerializedMessage>[0] = {
    type,
    content,
    ...(typeof messageId === 'string' ? { id: messageId } : {}),
  };
  if (type === 'tool') fields.name = kwargs['name'];
  if (type === 'ai') {
    // The AIMessage constructor derives tool calls from these when `tool_calls` is missing, and
    // rewrites content in the v1 output format: only the plain shape is read here.
    const responseMetadata = kwargs['response_metadata'];
    const additional = kwargs['additional_kwargs'];
    if (
      'contentBlocks' in kwargs ||
      (isObject(responseMetadata) && 'output_version' in responseMetadata) ||
      (kwargs['tool_calls'] === undefined &&
        isObject(additional) &&
        additional['tool_calls'] != null)
    )
      throw new NotUnderstood('AI message format');
    const calls = kwargs['tool_calls'] ?? [];
    if (!Array.isArray(calls)) throw new NotUnderstood('AI message tool calls');
    fields.tool_calls = calls as unknown[];
  }
  return new SerializedMessage(fields);
}

/**
 * Decodes one serialized value as `JsonPlusSerializer.loadsTyped` does (bottom-up revival), for
 * the shapes described in the module comment.
 */
export function decodeSerialized(type: unknown, text: unknown): unknown {
  if ((type !== 'json' && type !== null) || typeof text !== 'string')
    throw new NotUnderstood(`serde type ${String(type)}`);
  const revive = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(revive);
    if (!isObject(value)) return value;
    if (value['lc'] === 1 && value['type'] === 'constructor' && Array.isArray(value['id']))
      return decodeMessage(value['id'], value['kwargs']);
    const revived: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) revived[key] = revive(item);
    if (revived['lc'] === 2) {
      if (revived['type'] === 'undefined') return undefined;
      if (revived['type'] === 'delta_snapshot' && Object.hasOwn(revived, 'value'))
        return new DeltaSnapshotValue(revived['value']);
      if (revived['type'] === 'constructor') throw new NotUnderstood('lc 2 constructor record');
    }
    return revived;
  };
  return revive(JSON.parse(text));
}

function decodeCheckpointRow(row: Record<string, unknown>): CheckpointRow {
  const checkpoint = decodeSerialized(row['type'], row['checkpoint']);
  const metadata = decodeSerialized(row['type'], row['metadata']);
  if (
    !isObject(checkpoint) ||
    checkpoint['v'] !== 4 ||
    !isObject(checkpoint['channel_values']) ||
    !isObject(checkpoint['channel_versions']) ||
    !isObject(checkpoint['versions_seen']) ||
    !isObject(metadata)
  )
    throw new NotUnderstood('checkpoint format');
  const parent = row['parent_checkpoint_id'];
  return {
    checkpointId: String(row['checkpoint_id']),
    // As SqliteSaver: an empty parent id is no parent.
    ...(typeof parent === 'string' && parent !== '' ? { parentCheckpointId: parent } : {}),
    checkpoint: checkpoint as CheckpointRow['checkpoint'],
    metadata,
  };
}

const CHECKPOINT_COLUMNS =
  'checkpoint_id, parent_checkpoint_id, type, CAST(checkpoint AS TEXT) AS checkpoint, CAST(metadata AS TEXT) AS metadata';

/**
 * Opens the saver's tables in `file` read-only; `undefined` when the file or its tables are not
 * there (nothing to list: the caller lets LangGraph say so).
 */
export async function openSqliteCheckpointTables(
  file: string,
): Promise<SqliteCheckpointTables | undefined> {
  // better-sqlite3 only (native, a few files); the specifier is a variable: no type package.
  const specifier = 'better-sqlite3';
  const { default: Sqlite } = (await import(specifier)) as {
    default: new (path: string, options: object) => Database;
  };
  let db: Database;
  try {
    db = new Sqlite(file, { readonly: true, fileMustExist: true });
  } catch {
    return undefined;
  }
  try {
    const tables = new Set(
      (
        db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as Array<{
          name: string;
        }>
      ).map((row) => row.name),
    );
    if (!tables.has('checkpoints') || !tables.has('writes')) {
      db.close();
      return undefined;
    }
    const writeColumns = db.prepare('PRAGMA table_info(writes)').all() as Array<{ name: string }>;
    // Files written by the plain SqliteSaver have no task path: LangGraph then sorts by task id.
    const taskPath = writeColumns.some((column) => column.name === 'task_path')
      ? 'task_path'
      : "''";
    const one = db.prepare(
      `SELECT ${CHECKPOINT_COLUMNS} FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = '' AND checkpoint_id = ?`,
    );
    const writes = db.prepare(
      `SELECT task_id, channel, type, CAST(value AS TEXT) AS value FROM writes WHERE thread_id = ? AND checkpoint_ns = '' AND checkpoint_id = ? ORDER BY ${taskPath}, task_id, idx`,
    );
    const rows = new Map<string, CheckpointRow | undefined>();
    const pending = new Map<string, WriteRow[]>();
    return {
      list(threadId, limit) {
        const found = db
          .prepare(
            `SELECT ${CHECKPOINT_COLUMNS} FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = '' ORDER BY checkpoint_id DESC${limit === undefined ? '' : ` LIMIT ${Math.floor(limit)}`}`,
          )
          .all(threadId) as Array<Record<string, unknown>>;
        return found.map((item) => {
          const row = decodeCheckpointRow(item);
          rows.set(`${threadId}\0${row.checkpointId}`, row);
          return row;
        });
      },
      get(threadId, checkpointId) {
        const key = `${threadId}\0${checkpointId}`;
        if (!rows.has(key)) {
          const found = one.all(threadId, checkpointId)[0] as Record<string, unknown> | undefined;
          rows.set(key, found === undefined ? undefined : decodeCheckpointRow(found));
        }
        return rows.get(key);
      },
      writes(threadId, checkpointId) {
        const key = `${threadId}\0${checkpointId}`;
        let found = pending.get(key);
        if (found === undefined) {
          found = (writes.all(threadId, checkpointId) as Array<Record<string, unknown>>).map(
            (row) => ({
              taskId: String(row['task_id']),
              channel: String(row['channel']),
              value: decodeSerialized(row['type'], row['value'] ?? ''),
            }),
          );
          pending.set(key, found);
        }
        return found;
      },
      close() {
        db.close();
      },
    };
  } catch (error) {
    db.close();
    throw error;
  }
}
