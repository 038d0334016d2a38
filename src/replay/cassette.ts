/**
 * The cassette: a recorded run as JSON lines. The first line is the header (format name and
 * version), every other line one entry: a model turn, an MCP exchange (request with its answer
 * and what the server sent while answering), or a notification a server sent between exchanges.
 * Text a diff can read, one file a person can attach to a bug report. The format and its
 * stability promise are described in docs/replay.md; change them together.
 */
import { readFile } from 'node:fs/promises';
import { AgentsError, AgentsErrorCode } from '../errors.js';

/** The `format` value of a cassette's header line. */
export const CASSETTE_FORMAT = 'agents-cassette';

/**
 * The format version this copy writes and reads. Bump it whenever a reader of the previous
 * version would misread a new cassette (a renamed field, a changed meaning); adding an optional
 * field that old readers may ignore does not bump it.
 */
export const CASSETTE_FORMAT_VERSION = 3;

/**
 * The oldest version this copy reads. Version 1 has model turns and MCP exchanges only: the
 * library replay reads it, `agents thread replay` (which needs the file side) refuses it saying
 * to record the run again. Version 2 is version 3 without `thread` entries (every recording
 * started on a fresh thread): it replays as it is.
 */
export const CASSETTE_OLDEST_VERSION = 1;

/** The first line of a cassette. */
export interface CassetteHeader {
  format: typeof CASSETTE_FORMAT;
  version: number;
  /** The package and version that wrote it, for bug reports. */
  createdBy?: string;
  /** ISO time the recording started. */
  createdAt?: string;
}

/** A chat message as recorded: what a model sees of it, nothing more. */
export interface RecordedMessage {
  type: string;
  content: unknown;
  name?: string;
  tool_calls?: Array<{ id?: string; name: string; args: Record<string, unknown> }>;
  tool_call_id?: string;
}

/** One model turn: the messages in and the AI message out. */
export interface ModelTurnEntry {
  kind: 'model';
  /** 1-based, in the order the turns were made. */
  turn: number;
  input: RecordedMessage[];
  output: RecordedMessage;
}

/** One JSON-RPC request the client made and how the server answered it. */
export interface McpExchangeEntry {
  kind: 'mcp';
  /** The server's name as the recording named it. */
  server: string;
  /**
   * 1-based per server, in the order the requests were sent (lines are written in the order the
   * answers arrived, so parallel calls may appear out of `seq` order).
   */
  seq: number;
  method: string;
  params?: unknown;
  /**
   * The answer's `result`, or its `error`; neither when the request was still open when the
   * connection closed (a `subscriptions/listen` stream): a replay never answers it either.
   */
  result?: unknown;
  error?: unknown;
  /** Notifications and requests the server sent while answering, in order. */
  serverMessages?: unknown[];
  /**
   * (v3) The request was answered with an HTTP error instead of JSON-RPC (a 2025 server's 4xx
   * to the `server/discover` probe, say): a replay fails the send the same way.
   */
  httpError?: { status: number; statusText?: string; text?: string; code?: unknown };
}

/** A message a server sent when no request was in flight (a tool list change, say). */
export interface McpNotificationEntry {
  kind: 'mcp-notification';
  server: string;
  /**
   * The `seq` of the last request sent to that server before it arrived (0: before any); a
   * replay delivers it once it has handled that request.
   */
  after: number;
  message: unknown;
}

/**
 * A file as a cassette holds it: UTF-8 `text`, or `base64` for bytes that are not UTF-8.
 * `redacted` when the text had a secret or a machine path replaced: a replay writes what is
 * here as a placeholder, and `id` (the content id of the real bytes, as tree ids use it) stands
 * for it in the trees it compares.
 */
export interface RecordedFile {
  path: string;
  /** Git-style mode: `100644`, `100755`, `120000` (a symlink: its target is the text). */
  mode: string;
  text?: string;
  base64?: string;
  redacted?: true;
  /** (redacted files) The snapshot store's content id of the real bytes. */
  id?: string;
}

/** One path a call changed: its new content, or `deleted`. */
export type RecordedChange = RecordedFile | { path: string; deleted: true };

/** (v2) The actor the run was recorded with: what `agents thread replay` rebuilds it from. */
export interface ActorEntry {
  kind: 'actor';
  name: string;
  /** The actor's config file as parsed (redacted), its `model` replaced on replay. */
  config: Record<string, unknown>;
  /** The configs of the servers and skills it uses, by name (redacted). */
  servers: Record<string, Record<string, unknown>>;
  skills: Record<string, Record<string, unknown>>;
}

/** (v2) A run (or resume) of the thread: the input a replay starts it with. */
export interface RunEntry {
  kind: 'run';
  /** `run`: a new input; `continue`: `actor resume --continue` (no input). */
  mode: 'run' | 'continue';
  input?: string;
}

/** A file known by its content id only (a large project's base: see {@link BaseEntry}). */
export interface ListedFile {
  path: string;
  mode: string;
  /** The snapshot store's content id (git's blob id with the default sandbox). */
  id: string;
}

/**
 * (v2) The sandbox's files when the recording started, and their tree id. (v3) A base larger
 * than the recorder's budget is a `listing` instead (path, mode, content id of every file) and
 * `files` is empty: the cassette stays small; a cassette replay needs no base content (the
 * servers are answered from it), a replay with live tools asks for the project (`--base DIR`).
 */
export interface BaseEntry {
  kind: 'base';
  tree: string;
  files: RecordedFile[];
  listing?: ListedFile[];
}

/**
 * (v2) One tool call as the pipeline finished it: the policy's decision (and who approved),
 * whether it failed, what it changed in the sandbox (as content) and the tree after it.
 */
export interface CallEntry {
  kind: 'call';
  /** 1-based, in the order calls finished. */
  call: number;
  toolCallId?: string;
  toolId: string;
  policy?: {
    outcome: string;
    decision?: string;
    rule?: string;
    decidedBy?: string;
    message?: string;
    editedArgs?: unknown;
  };
  isError?: true;
  /** Absent for a call that was not tracked (read-only); `[]` for a write that changed nothing. */
  changes?: RecordedChange[];
  /** The sandbox's tree id right after the call (tracked calls only). */
  tree?: string;
  /**
   * (v3, optional) The answers given to the server's questions (`input_required` rounds), in
   * round order, each as sent (`responses` by question key): a replay answers with these, and
   * the call sent again must then match the recorded retry, so an answer edited here or in the
   * retry diverges. Absent in cassettes written before: the answer is taken from the retry.
   */
  answers?: RecordedAnswer[];
}

/** One `input_required` round's answers as a {@link CallEntry} records them. */
export interface RecordedAnswer {
  round: number;
  responses: Record<string, unknown>;
}

/**
 * (v3) The thread's state when the recording started on a thread that had run before (a run
 * after a rollback, `actor resume`): a replay seeds a fresh thread with it.
 */
export interface ThreadEntry {
  kind: 'thread';
  /** The thread's messages (redacted, logical paths), in order. */
  messages: RecordedMessage[];
  /** Model turns of the run so far (what the turn limit counts). */
  runTurns: number;
  /** The Agent Skill active then (its `allowed-tools` are enforced). */
  activeSkill?: unknown;
  /** The nodes about to run: `[]` finished, `['agent']` a model turn, `['tools']` tool calls. */
  next: string[];
  /**
   * What the thread waited for: `approval` (a call's approval), `limit` (the turn limit or a
   * budget), `question` (a server's `input_required` question); absent: nothing.
   */
  waiting?: 'approval' | 'limit' | 'question';
  /** (`question`) The questions waiting, as the interrupt showed them (redacted). */
  questions?: unknown[];
  /** Calls of the pending step that had finished (results saved) when the recording started. */
  finishedCalls?: string[];
}

/** (v2) The end of the recording: the sandbox's tree id and the thread's checkpoint count. */
export interface EndEntry {
  kind: 'end';
  tree?: string;
  checkpoints?: number;
}

/** One line after the header. */
export type CassetteEntry =
  | ModelTurnEntry
  | McpExchangeEntry
  | McpNotificationEntry
  | ActorEntry
  | RunEntry
  | BaseEntry
  | CallEntry
  | ThreadEntry
  | EndEntry;

/** A parsed cassette. */
export interface Cassette {
  header: CassetteHeader;
  entries: CassetteEntry[];
}

const ENTRY_KINDS = new Set<string>([
  'model',
  'mcp',
  'mcp-notification',
  'actor',
  'run',
  'base',
  'call',
  'thread',
  'end',
]);

function invalid(source: string, message: string, details: Record<string, unknown> = {}): never {
  throw new AgentsError(AgentsErrorCode.CassetteInvalid, `Cassette ${source}: ${message}`, {
    details: { source, ...details },
  });
}

/** Refuses a header this copy cannot read, saying how to get a copy (or a cassette) that can. */
function checkHeader(value: unknown, source: string): CassetteHeader {
  if (
    typeof value !== 'object' ||
    value === null ||
    (value as { format?: unknown }).format !== CASSETTE_FORMAT
  ) {
    invalid(
      source,
      `line 1 is not a cassette header (expected {"format":"${CASSETTE_FORMAT}","version":N}). ` +
        'Record the run again with `--record` or createRecordingTransport.',
      { line: 1 },
    );
  }
  const version = (value as { version?: unknown }).version;
  if (typeof version !== 'number' || !Number.isInteger(version)) {
    invalid(source, 'the header has no integer "version".', { line: 1 });
  }
  if (version > CASSETTE_FORMAT_VERSION) {
    invalid(
      source,
      `format version ${version} is newer than this copy reads (${CASSETTE_FORMAT_VERSION}). ` +
        'Upgrade @agents/langgraph-mcp (npm install @agents/langgraph-mcp@latest) to replay it.',
      { line: 1, version, supported: CASSETTE_FORMAT_VERSION },
    );
  }
  if (version < CASSETTE_OLDEST_VERSION) {
    invalid(
      source,
      `format version ${version} predates version ${CASSETTE_OLDEST_VERSION}, the oldest this copy ` +
        'reads. Record the run again with this version (`agents actor run … --record`, or ' +
        'createRecordingTransport in code), or replay it with the package version that wrote it' +
        ((value as CassetteHeader).createdBy ? ` (${(value as CassetteHeader).createdBy})` : '') +
        '.',
      { line: 1, version, supported: CASSETTE_OLDEST_VERSION },
    );
  }
  return value as CassetteHeader;
}

/** Parses a cassette's text; throws `CASSETTE_INVALID` naming the line that is wrong. */
export function parseCassette(text: string, source = '<cassette>'): Cassette {
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  if (lines.length === 0) invalid(source, 'the file is empty.');
  const parsed = lines.map((line, index) => {
    try {
      return JSON.parse(line) as unknown;
    } catch (error) {
      return invalid(source, `line ${index + 1} is not JSON (${(error as Error).message}).`, {
        line: index + 1,
      });
    }
  });
  const header = checkHeader(parsed[0], source);
  const entries = parsed.slice(1).map((value, index) => {
    const kind = (value as { kind?: unknown } | null)?.kind;
    if (typeof kind !== 'string' || !ENTRY_KINDS.has(kind)) {
      invalid(
        source,
        `line ${index + 2} has an unknown kind ${JSON.stringify(kind)} for format version ` +
          `${header.version} (known: ${[...ENTRY_KINDS].join(', ')}).`,
        { line: index + 2 },
      );
    }
    return value as CassetteEntry;
  });
  return { header, entries };
}

/** Reads and parses a cassette file. */
export async function readCassette(path: string): Promise<Cassette> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new AgentsError(
      AgentsErrorCode.CassetteInvalid,
      `Cassette ${path} cannot be read: ${(error as Error).message}.`,
      { cause: error, details: { source: path } },
    );
  }
  return parseCassette(text, path);
}

/** A cassette as its text: the header line, then one line per entry. */
export function formatCassette(cassette: Cassette): string {
  return (
    [cassette.header, ...cassette.entries].map((line) => JSON.stringify(line)).join('\n') + '\n'
  );
}
