/** The audit file: appending JSON lines to it and reading them back. */
import { mkdir, open, readFile, type FileHandle } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { AgentsError, AgentsErrorCode, errorMessage } from '../errors.js';
import type { AuditEntry } from './audit-entry.js';
import { safeJsonLine } from './audit-escape.js';

/** The default audit file name inside a workspace folder. */
export const DEFAULT_AUDIT_FILE = 'audit.jsonl';

/** The audit file of a workspace (`<workspace>/audit.jsonl`). */
export function auditLogPath(workspace: string): string {
  return join(workspace, DEFAULT_AUDIT_FILE);
}
/** An append-only JSON-lines audit file. */
export interface AuditLog extends AsyncDisposable {
  readonly file: string;
  /** Appends one entry; appends are written in call order. */
  append(entry: AuditEntry): Promise<void>;
  /** Waits for pending appends. Idempotent; appending after close throws `CLOSED`. */
  close(): Promise<void>;
}

/**
 * Opens an audit log that appends JSON lines to `file` (created with its folder on first write).
 * Several processes may append to the same file: each write is one O_APPEND write of whole lines.
 * Appends made while a write is in flight go out together in the next write (a turn of parallel
 * calls appends two lines per call; one thread-pool round trip each made the last call of a turn
 * wait for all the others' lines before it could start). Each append still resolves only once
 * its own line is written.
 */
export function createAuditLog(file: string): AuditLog {
  let queue: Promise<void> = Promise.resolve();
  let closed = false;
  let handle: Promise<FileHandle> | undefined;
  /** The lines of the write not started yet, and its promise: later appends join it. */
  let waiting: { lines: string[]; written: Promise<void> } | undefined;
  const log: AuditLog = {
    file,
    append(entry) {
      if (closed) {
        return Promise.reject(
          new AgentsError(
            AgentsErrorCode.Closed,
            `The audit log ${file} is closed; open a new one with createAuditLog().`,
          ),
        );
      }
      // Escaped: no field can end the line early or put a control character in the file.
      const line = `${safeJsonLine(entry)}\n`;
      if (waiting !== undefined) {
        waiting.lines.push(line);
        return waiting.written;
      }
      const lines = [line];
      const write = async (): Promise<void> => {
        // From here on, appends start the next write.
        if (waiting?.lines === lines) waiting = undefined;
        // One O_APPEND handle kept open, instead of open + write + close on every tool call.
        if (handle === undefined) {
          const opening = mkdir(dirname(file), { recursive: true }).then(() => open(file, 'a'));
          handle = opening;
          // A failed open is retried by the next append rather than cached.
          opening.catch(() => {
            if (handle === opening) handle = undefined;
          });
        }
        await (await handle).write(lines.length === 1 ? line : lines.join(''), null, 'utf8');
      };
      const written = queue.then(write, write);
      waiting = { lines, written };
      queue = written.catch(() => undefined);
      return written;
    },
    async close() {
      closed = true;
      await queue;
      const opened = handle;
      handle = undefined;
      if (opened !== undefined) await (await opened.catch(() => undefined))?.close();
    },
    [Symbol.asyncDispose]() {
      return log.close();
    },
  };
  return log;
}

/** Filters for {@link readAuditLog}. */
export interface ReadAuditOptions {
  threadId?: string;
  /** Keep only the last N matching entries. */
  limit?: number;
  /**
   * Keep every line as written. By default a `tool-call-start` entry is dropped once its call
   * has an ending entry, so what remains of them are calls that never ended.
   */
  raw?: boolean;
}

/**
 * Reads an audit file. A missing file reads as empty; lines that are not JSON entries (a torn
 * last line after a crash) are skipped and counted in `skipped`.
 */
export async function readAuditLog(
  file: string,
  options: ReadAuditOptions = {},
): Promise<{ entries: AuditEntry[]; skipped: number }> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if (typeof error === 'object' && error !== null && 'code' in error && error.code === 'ENOENT')
      return { entries: [], skipped: 0 };
    throw new AgentsError(
      AgentsErrorCode.ConfigNotFound,
      `Cannot read the audit log ${file}: ${errorMessage(error)}.`,
      { cause: error, details: { file } },
    );
  }
  const entries: AuditEntry[] = [];
  let skipped = 0;
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      skipped++;
      continue;
    }
    if (!isAuditEntry(value)) {
      skipped++;
      continue;
    }
    if (options.threadId !== undefined && value.thread !== options.threadId) continue;
    entries.push(value);
  }
  const ended = new Set(
    entries.flatMap((entry) =>
      (entry.event === 'tool-call' || entry.event === 'approval-requested') &&
      entry.callId !== undefined
        ? [entry.callId]
        : [],
    ),
  );
  const kept =
    options.raw === true
      ? entries
      : entries.filter(
          (entry) =>
            entry.event !== 'tool-call-start' ||
            entry.callId === undefined ||
            !ended.has(entry.callId),
        );
  return {
    entries: options.limit === undefined ? kept : kept.slice(-options.limit),
    skipped,
  };
}

function isAuditEntry(value: unknown): value is AuditEntry {
  if (typeof value !== 'object' || value === null) return false;
  const record = value as Record<string, unknown>;
  return (
    typeof record['time'] === 'string' &&
    typeof record['toolId'] === 'string' &&
    typeof record['event'] === 'string'
  );
}
