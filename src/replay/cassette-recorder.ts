/**
 * Collects a run's entries in the order they happened and writes them as one cassette. The
 * recording transports and the recording chat model hold one recorder between them, so model
 * turns and MCP exchanges of one run land in one file, redacted the same way.
 */
import { writeFileAtomic } from '../core/atomic-write.js';
import {
  CASSETTE_FORMAT,
  CASSETTE_FORMAT_VERSION,
  formatCassette,
  type Cassette,
  type CassetteEntry,
  type McpExchangeEntry,
  type ModelTurnEntry,
  type RecordedMessage,
} from './cassette.js';
import { createFileSideRecorder, type FileSideRecorder } from './file-recorder.js';
import {
  createCassetteRedactor,
  type CassetteRedactOptions,
  type PathAlias,
} from './cassette-redact.js';

/** Options of {@link createCassetteRecorder}. */
export type CassetteRecorderOptions = CassetteRedactOptions & {
  /** Written into the header as `createdBy` (default `@agents/langgraph-mcp`). */
  createdBy?: string;
};

/** The entries of one recording; hand it to the recording transports and model. */
export interface CassetteRecorder {
  /** Records one model turn (messages in, message out), redacted. */
  recordModelTurn(input: RecordedMessage[], output: RecordedMessage): void;
  /**
   * The next exchange number on `server`, taken when its request is sent (so a notification can
   * say which request it followed, answered or not).
   */
  nextSeq(server: string): number;
  /** Records one exchange on `server` under the `seq` taken for it. */
  recordExchange(server: string, exchange: Omit<McpExchangeEntry, 'kind' | 'server'>): void;
  /** Records a message `server` sent between exchanges, after request `after` was sent. */
  recordNotification(server: string, message: unknown, after: number): void;
  /**
   * Writes `path` as `as` in the entries recorded from now on (a sandbox known only once the run
   * has started).
   */
  addPathAlias(alias: PathAlias): void;
  /**
   * Appends an entry as it is (the caller redacted it with {@link CassetteRecorder.redact}); an
   * entry object may still be filled in by work handed to {@link CassetteRecorder.defer}.
   */
  record(entry: CassetteEntry): void;
  /** Work that fills in recorded entries (reading a snapshot's files); `save` waits for it. */
  defer(work: Promise<unknown>): void;
  /** Redacts a value as this recording does (secrets masked, machine paths logical). */
  redact(value: unknown): unknown;
  /** The machine paths written as logical ones so far (a replay matches requests with them). */
  pathAliases(): PathAlias[];
  /** Waits for deferred work; the first failure of it is thrown. */
  settled(): Promise<void>;
  /**
   * The file side (v2): give it the run's sandbox and put its middleware outermost in the tool
   * pipeline, and each call's change set, policy decision and tree id are recorded.
   */
  readonly files: FileSideRecorder;
  /** The cassette so far (header and entries). */
  cassette(): Cassette;
  /** Writes the cassette to `path` atomically (JSON lines), once deferred work is done. */
  save(path: string): Promise<void>;
}

/** Creates an empty recorder. */
export function createCassetteRecorder(options: CassetteRecorderOptions = {}): CassetteRecorder {
  const given = options.pathAliases;
  const aliases = [...((typeof given === 'function' ? given() : given) ?? [])];
  let redact = createCassetteRedactor({ pathAliases: aliases });
  const header = {
    format: CASSETTE_FORMAT,
    version: CASSETTE_FORMAT_VERSION,
    createdBy: options.createdBy ?? '@agents/langgraph-mcp',
    createdAt: new Date().toISOString(),
  } as const;
  const entries: CassetteEntry[] = [];
  const deferred: Array<Promise<unknown>> = [];
  const settled = async (): Promise<void> => {
    // Work may defer more work while it runs: wait until nothing new was added.
    for (let done = 0; done < deferred.length;) {
      const batch = deferred.slice(done);
      done = deferred.length;
      await Promise.all(batch);
    }
  };
  const seqByServer = new Map<string, number>();
  let turns = 0;
  const recorder: Omit<CassetteRecorder, 'files'> = {
    recordModelTurn(input, output) {
      const entry: ModelTurnEntry = {
        kind: 'model',
        turn: ++turns,
        input: redact(input) as RecordedMessage[],
        output: redact(output) as RecordedMessage,
      };
      entries.push(entry);
    },
    nextSeq(server) {
      const seq = (seqByServer.get(server) ?? 0) + 1;
      seqByServer.set(server, seq);
      return seq;
    },
    recordExchange(server, exchange) {
      const { seq, ...rest } = exchange;
      entries.push({
        kind: 'mcp',
        server,
        seq,
        ...(redact(rest) as Omit<McpExchangeEntry, 'kind' | 'server' | 'seq'>),
      });
    },
    recordNotification(server, message, after) {
      entries.push({ kind: 'mcp-notification', server, after, message: redact(message) });
    },
    addPathAlias(alias) {
      aliases.push(alias);
      redact = createCassetteRedactor({ pathAliases: aliases });
    },
    record(entry) {
      entries.push(entry);
    },
    defer(work) {
      // Kept as is for `settled`; a rejection is handled there, not reported unhandled here.
      work.catch(() => undefined);
      deferred.push(work);
    },
    redact: (value) => redact(value),
    pathAliases: () => [...aliases],
    settled,
    cassette: () => ({ header: { ...header }, entries: [...entries] }),
    save: async (path) => {
      await settled();
      await writeFileAtomic(path, formatCassette({ header, entries }));
    },
  };
  const full = recorder as CassetteRecorder;
  (full as { files: FileSideRecorder }).files = createFileSideRecorder(full);
  return full;
}
