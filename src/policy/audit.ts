import { randomUUID } from 'node:crypto';
import { mkdir, open, readFile, type FileHandle } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { AgentsError, AgentsErrorCode, errorMessage } from '../errors.js';
import { summarizeClientRequest } from '../core/client-requests.js';
import type { ClientRequestOutcome } from '../core/client-requests.js';
import type { ToolCallRequest, ToolMiddleware } from '../core/tool-middleware.js';
import { ResultMetaKey } from '../core/tool-descriptor.js';
import type { CapabilitySource, ChangeRecord, ToolResult } from '../core/tool-descriptor.js';
import type { BudgetRecord } from './output-budget.js';
import type { PolicyRecord } from './policy-middleware.js';

/** The default audit file name inside a workspace folder. */
export const DEFAULT_AUDIT_FILE = 'audit.jsonl';

/** The audit file of a workspace (`<workspace>/audit.jsonl`). */
export function auditLogPath(workspace: string): string {
  return join(workspace, DEFAULT_AUDIT_FILE);
}

/** One capability verdict as recorded: value and where it came from. */
export interface AuditVerdict {
  value: boolean;
  source: CapabilitySource;
}

/** One line of the audit log. */
export interface AuditEntry {
  /** ISO time the call started. */
  time: string;
  /**
   * `tool-call-start` when a call starts (written before it runs, so a call whose process was
   * killed still has one); `tool-call` when it finished (or failed); `approval-requested` when it
   * paused for a human; `client-request` for a request the call's upstream server made of the
   * MCP client (sampling, elicitation), forwarded or refused: `args` then holds its summary;
   * `unattributed-changes` for file changes found when a thread was reopened that no recorded
   * call made (a call killed before its snapshot).
   */
  event:
    | 'tool-call'
    | 'tool-call-start'
    | 'approval-requested'
    | 'client-request'
    | 'unattributed-changes';
  /** Links a call's `tool-call-start` entry to its other entries. */
  callId?: string;
  actor?: string;
  thread?: string;
  toolCallId?: string;
  toolId: string;
  toolName: string;
  serverName?: string;
  fingerprint: string;
  capabilities: {
    readOnly: AuditVerdict;
    writes: AuditVerdict;
    destructive: AuditVerdict;
    openWorld: AuditVerdict;
    /** Claims that were overruled (e.g. a `readOnlyHint` on a tool named like a write); absent when none. */
    disagreements?: string[];
  };
  /** Arguments as the model (or the editing human) gave them, capped. */
  args: unknown;
  /** The policy decision and who decided (absent when no policy middleware ran). */
  policy?: PolicyRecord;
  durationMs: number;
  /** Bytes of the result the model sees (text and JSON). */
  resultBytes?: number;
  isError?: boolean;
  /** Error text: the thrown error, or the text of an `isError` result (capped). */
  error?: string;
  /** Snapshot sha when the call changed files. */
  snapshot?: string;
  changed?: number;
  budget?: Pick<BudgetRecord, 'originalBytes' | 'cutBytes' | 'spilledTo'>;
  /** For `event: 'client-request'`: what was asked and how it ended. */
  clientRequest?: {
    method: string;
    /** The upstream server that asked. */
    serverName: string;
    outcome: ClientRequestOutcome['outcome'];
    /** The client's answer to an elicitation: accept, decline or cancel. */
    action?: string;
    /** The model that answered a sampling request. */
    model?: string;
  };
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
 */
export function createAuditLog(file: string): AuditLog {
  let queue: Promise<void> = Promise.resolve();
  let closed = false;
  let handle: Promise<FileHandle> | undefined;
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
      const line = `${JSON.stringify(entry)}\n`;
      const write = async (): Promise<void> => {
        // One O_APPEND handle kept open: each entry is a single write() of one line (atomic
        // for other appending processes), instead of open + write + close on every tool call.
        if (handle === undefined) {
          const opening = mkdir(dirname(file), { recursive: true }).then(() => open(file, 'a'));
          handle = opening;
          // A failed open is retried by the next append rather than cached.
          opening.catch(() => {
            if (handle === opening) handle = undefined;
          });
        }
        await (await handle).write(line, null, 'utf8');
      };
      const next = queue.then(write, write);
      queue = next.catch(() => undefined);
      return next;
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

/** Options of {@link createAuditMiddleware}. */
export interface AuditMiddlewareOptions {
  log: AuditLog;
  /** Actor name recorded in every entry. */
  actor?: string;
  /** Max bytes of JSON arguments kept per entry. Default 4 KiB. */
  maxArgsBytes?: number;
  /** Called when an append fails; the call's result is returned anyway. Default: a process warning. */
  onError?: (error: unknown) => void;
  /** Clock (tests). */
  now?: () => number;
}

const MAX_ERROR_CHARS = 2_000;

function threadOf(request: ToolCallRequest): string | undefined {
  if (request.context.threadId !== undefined) return request.context.threadId;
  const config = request.context.config;
  if (typeof config !== 'object' || config === null || !('configurable' in config))
    return undefined;
  const configurable = config.configurable;
  if (typeof configurable !== 'object' || configurable === null || !('thread_id' in configurable))
    return undefined;
  return typeof configurable.thread_id === 'string' ? configurable.thread_id : undefined;
}

function cappedArgs(args: unknown, maxBytes: number): unknown {
  const json = JSON.stringify(args) ?? 'null';
  if (Buffer.byteLength(json, 'utf8') <= maxBytes) return args;
  return { truncated: true, bytes: Buffer.byteLength(json, 'utf8'), head: json.slice(0, maxBytes) };
}

function resultSize(result: ToolResult): number {
  let bytes = 0;
  for (const item of Array.isArray(result.content) ? result.content : []) {
    if (item.type === 'text') bytes += Buffer.byteLength(item.text, 'utf8');
    else if (item.type === 'image' || item.type === 'audio')
      bytes += Math.floor((item.data.length * 3) / 4);
    else if (item.type === 'resource')
      bytes +=
        'text' in item.resource
          ? Buffer.byteLength(item.resource.text, 'utf8')
          : Math.floor((item.resource.blob.length * 3) / 4);
  }
  if (result.structuredContent !== undefined)
    bytes += Buffer.byteLength(JSON.stringify(result.structuredContent), 'utf8');
  return bytes;
}

function errorText(result: ToolResult): string {
  const text = (Array.isArray(result.content) ? result.content : [])
    .map((item) => (item.type === 'text' ? item.text : ''))
    .join('\n');
  return text.length > MAX_ERROR_CHARS ? `${text.slice(0, MAX_ERROR_CHARS)}…` : text;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

function asPolicyRecord(value: unknown): PolicyRecord | undefined {
  return isObject(value) &&
    typeof value['decision'] === 'string' &&
    typeof value['outcome'] === 'string'
    ? (value as unknown as PolicyRecord)
    : undefined;
}

function asChangeRecord(value: unknown): ChangeRecord | undefined {
  return isObject(value) && typeof value['snapshot'] === 'string' && Array.isArray(value['changed'])
    ? (value as unknown as ChangeRecord)
    : undefined;
}

function asBudgetRecord(value: unknown): BudgetRecord | undefined {
  return isObject(value) &&
    typeof value['cutBytes'] === 'number' &&
    Array.isArray(value['spilledTo'])
    ? (value as unknown as BudgetRecord)
    : undefined;
}

/**
 * Records every tool call in the audit log: time, actor, thread, tool, capability verdicts, the
 * policy decision and who approved (from `_meta['agents/policy']`), duration, result size, error,
 * and the snapshot sha (from `_meta['agents/change']`). A `tool-call-start` entry is written
 * before the call runs and the ending entry (same `callId`) after, so a call whose process was
 * killed still shows. A call paused for approval ends as `approval-requested`. Place it
 * outermost so it sees refusals and every other layer's records.
 */
export function createAuditMiddleware(options: AuditMiddlewareOptions): ToolMiddleware {
  const now = options.now ?? Date.now;
  const maxArgsBytes = options.maxArgsBytes ?? 4 * 1024;
  const onError =
    options.onError ??
    ((error: unknown) =>
      process.emitWarning(`Audit log write failed: ${errorMessage(error)}`, 'AgentsAuditWarning'));

  const record = async (entry: AuditEntry): Promise<void> => {
    try {
      await options.log.append(entry);
    } catch (error) {
      onError(error);
    }
  };

  return {
    name: 'audit',
    async wrap(request, next) {
      const started = now();
      const { descriptor } = request;
      const caps = descriptor.capabilities;
      const verdict = (key: 'readOnly' | 'writes' | 'destructive' | 'openWorld'): AuditVerdict => ({
        value: caps?.[key]?.value ?? key !== 'readOnly',
        source: caps?.[key]?.source ?? 'default',
      });
      const thread = threadOf(request);
      const base = {
        time: new Date(started).toISOString(),
        ...(options.actor === undefined ? {} : { actor: options.actor }),
        ...(thread === undefined ? {} : { thread }),
        ...(request.context.toolCallId === undefined
          ? {}
          : { toolCallId: request.context.toolCallId }),
        toolId: descriptor.id,
        toolName: descriptor.name,
        ...(descriptor.serverName === undefined ? {} : { serverName: descriptor.serverName }),
        fingerprint: descriptor.fingerprint,
        capabilities: {
          readOnly: verdict('readOnly'),
          writes: verdict('writes'),
          destructive: verdict('destructive'),
          openWorld: verdict('openWorld'),
          ...(caps?.disagreements === undefined || caps.disagreements.length === 0
            ? {}
            : { disagreements: caps.disagreements }),
        },
        args: cappedArgs(request.args, maxArgsBytes),
        callId: randomUUID(),
      };
      await record({ ...base, event: 'tool-call-start', durationMs: 0 });
      // Requests the upstream server makes of the MCP client during this call are recorded too,
      // refusals (by the policy or for a missing capability) included.
      const forwarder = request.context.clientRequests;
      if (forwarder !== undefined) {
        request = {
          ...request,
          context: {
            ...request.context,
            clientRequests: forwarder.withObserver((outcome) => {
              const result = outcome.result as Record<string, unknown> | undefined;
              const message = outcome.error === undefined ? undefined : errorMessage(outcome.error);
              void record({
                ...base,
                time: new Date(now() - outcome.durationMs).toISOString(),
                event: 'client-request',
                args: summarizeClientRequest(outcome.request),
                durationMs: outcome.durationMs,
                isError: outcome.outcome !== 'forwarded',
                ...(message === undefined
                  ? {}
                  : {
                      error:
                        message.length > MAX_ERROR_CHARS
                          ? `${message.slice(0, MAX_ERROR_CHARS)}…`
                          : message,
                    }),
                clientRequest: {
                  method: outcome.request.method,
                  serverName: outcome.serverName,
                  outcome: outcome.outcome,
                  ...(typeof result?.['action'] === 'string' ? { action: result['action'] } : {}),
                  ...(typeof result?.['model'] === 'string' ? { model: result['model'] } : {}),
                },
              });
            }),
          },
        };
      }
      let result: ToolResult;
      try {
        result = await next(request);
      } catch (error) {
        if (isInterrupt(error)) {
          await record({ ...base, event: 'approval-requested', durationMs: now() - started });
        } else {
          const message = errorMessage(error);
          await record({
            ...base,
            event: 'tool-call',
            durationMs: now() - started,
            isError: true,
            error:
              message.length > MAX_ERROR_CHARS ? `${message.slice(0, MAX_ERROR_CHARS)}…` : message,
          });
        }
        throw error;
      }
      const meta = result._meta;
      const policy = asPolicyRecord(meta?.[ResultMetaKey.Policy]);
      const change = asChangeRecord(meta?.[ResultMetaKey.Change]);
      const budget = asBudgetRecord(meta?.[ResultMetaKey.Budget]);
      await record({
        ...base,
        event: 'tool-call',
        ...(policy === undefined ? {} : { policy }),
        durationMs: now() - started,
        resultBytes: resultSize(result),
        isError: result.isError === true,
        ...(result.isError === true ? { error: errorText(result) } : {}),
        ...(change === undefined
          ? {}
          : { snapshot: change.snapshot, changed: change.changed.length }),
        ...(budget === undefined
          ? {}
          : {
              budget: {
                originalBytes: budget.originalBytes,
                cutBytes: budget.cutBytes,
                spilledTo: budget.spilledTo,
              },
            }),
      });
      return result;
    },
  };
}

/**
 * LangGraph's `isGraphInterrupt`, by the same test (the error's name), without importing
 * LangGraph: `agents audit` reads this module and must start fast.
 */
function isInterrupt(error: unknown): boolean {
  const name = (error as { name?: unknown } | undefined)?.name;
  return name === 'GraphInterrupt' || name === 'NodeInterrupt';
}
