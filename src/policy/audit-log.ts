/** The audit file: appending JSON lines to it and reading them back. */
import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
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
 * Several processes may append to the same file: each entry is one O_APPEND write of one line.
 * The write is synchronous: a line of a few hundred bytes into the page cache (no fsync) takes
 * microseconds, while an async write took a thread-pool round trip per line, and a turn of
 * parallel calls (two lines each) queued its calls behind each other's lines.
 */
export function createAuditLog(file: string): AuditLog {
  let closed = false;
  /** One O_APPEND descriptor kept open, instead of open + write + close on every tool call. */
  let fd: number | undefined;
  const log: AuditLog = {
    file,
    append(entry) {
      try {
        if (closed) {
          throw new AgentsError(
            AgentsErrorCode.Closed,
            `The audit log ${file} is closed; open a new one with createAuditLog().`,
          );
        }
        // A failed open leaves `fd` unset, so the next append tries again.
        if (fd === undefined) {
          mkdirSync(dirname(file), { recursive: true });
          fd = openSync(file, 'a');
        }
        // Escaped: no field can end the line early or put a control character in the file.
        writeSync(fd, `${safeJsonLine(entry)}\n`);
        return Promise.resolve();
      } catch (error) {
        return Promise.reject(error as Error);
      }
    },
    close() {
      closed = true;
      if (fd !== undefined) closeSync(fd);
      fd = undefined;
      return Promise.resolve();
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

/** The text of an audit file, undefined when there is none; `CONFIG_NOT_FOUND` when unreadable. */
export async function readAuditText(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new AgentsError(
      AgentsErrorCode.ConfigNotFound,
      `Cannot read the audit log ${file}: ${errorMessage(error)}.`,
      { cause: error, details: { file } },
    );
  }
}

/**
 * Reads an audit file. A missing file reads as empty; lines that are not JSON entries (a torn
 * last line after a crash) are skipped and counted in `skipped`.
 */
export async function readAuditLog(
  file: string,
  options: ReadAuditOptions = {},
): Promise<{ entries: AuditEntry[]; skipped: number }> {
  const text = await readAuditText(file);
  if (text === undefined) return { entries: [], skipped: 0 };
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
      (entry.event === 'tool-call' ||
        entry.event === 'approval-requested' ||
        entry.event === 'pause-deferred') &&
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
