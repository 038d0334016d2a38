/** The audit middleware: one JSON line per tool call, approval and client request. */
import { randomUUID } from 'node:crypto';
import { errorMessage } from '../errors.js';
import { summarizeClientRequest } from '../core/client-requests.js';
import type { ToolMiddleware } from '../core/tool-middleware.js';
import { ResultMetaKey } from '../core/tool-descriptor.js';
import type { ChangeRecord } from '../core/change-record.js';
import type { ToolResult } from '../core/tool-descriptor.js';
import type { BudgetRecord } from './output-budget.js';
import type { PolicyRecord } from './policy-middleware.js';
import type { AuditEntry, AuditVerdict } from './audit-entry.js';
import type { AuditLog } from './audit-log.js';
import { isPauseDeferred } from './pause-deferral.js';

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
  return capped(
    (Array.isArray(result.content) ? result.content : [])
      .map((item) => (item.type === 'text' ? item.text : ''))
      .join('\n'),
  );
}

/** An error text as the log keeps it: at most `MAX_ERROR_CHARS`. */
function capped(text: string): string {
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
      const thread = request.context.threadId;
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
      // Recorded too: the requests the upstream server makes of the MCP client during this call,
      // refusals included, and a 2026 server's questions (input_required) with who answered or
      // refused each (a person, the model, the policy, or the client itself).
      const prior = request.capabilities;
      const forwarder = prior?.clientRequests;
      request = {
        ...request,
        capabilities: {
          ...prior,
          ...(forwarder === undefined
            ? {}
            : {
                clientRequests: forwarder.withObserver((outcome) => {
                  const result = outcome.result as Record<string, unknown> | undefined;
                  const message =
                    outcome.error === undefined ? undefined : errorMessage(outcome.error);
                  void record({
                    ...base,
                    time: new Date(now() - outcome.durationMs).toISOString(),
                    event: 'client-request',
                    args: summarizeClientRequest(outcome.request),
                    durationMs: outcome.durationMs,
                    isError: outcome.outcome !== 'forwarded',
                    ...(message === undefined ? {} : { error: capped(message) }),
                    clientRequest: {
                      method: outcome.request.method,
                      serverName: outcome.serverName,
                      outcome: outcome.outcome,
                      ...(typeof result?.['action'] === 'string'
                        ? { action: result['action'] }
                        : {}),
                      ...(typeof result?.['model'] === 'string' ? { model: result['model'] } : {}),
                    },
                  });
                }),
              }),
          inputObserver: (outcome) => {
            prior?.inputObserver?.(outcome);
            const reason = outcome.reason;
            void record({
              ...base,
              time: new Date(now()).toISOString(),
              event: 'input-request',
              args: outcome.summary,
              durationMs: 0,
              // A refusal, or a decline that ended the call (it carries the reason).
              isError: outcome.outcome === 'refused' || reason !== undefined,
              ...(reason === undefined ? {} : { error: capped(reason) }),
              inputRequest: {
                method: outcome.method,
                serverName: outcome.serverName,
                key: outcome.key,
                round: outcome.round,
                outcome: outcome.outcome,
                by: outcome.source.by,
                ...(outcome.source.name === undefined ? {} : { name: outcome.source.name }),
                ...(outcome.action === undefined ? {} : { action: outcome.action }),
                ...(outcome.model === undefined ? {} : { model: outcome.model }),
              },
            });
          },
        },
      };
      let result: ToolResult;
      try {
        result = await next(request);
      } catch (error) {
        if (isPauseDeferred(error)) {
          // Not a pause yet: the call runs again alone after its group, with its own entries.
          await record({ ...base, event: 'pause-deferred', durationMs: now() - started });
        } else if (isInterrupt(error)) {
          await record({ ...base, event: 'approval-requested', durationMs: now() - started });
        } else {
          const message = errorMessage(error);
          await record({
            ...base,
            event: 'tool-call',
            durationMs: now() - started,
            isError: true,
            error: capped(message),
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
