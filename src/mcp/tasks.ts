import { setTimeout as sleep } from 'node:timers/promises';
import type { Client } from '@modelcontextprotocol/client';
import { isSpecType, type CallToolResult } from '@modelcontextprotocol/client';
import { z } from 'zod';
import {
  AgentsErrorCode,
  ServerError,
  errorMessage,
  withoutMcpErrorPrefix,
  type ServerErrorDetails,
} from '../errors.js';
import { createHash } from 'node:crypto';
import type { ToolCallContext } from '../core/tool-descriptor.js';
import { jsonRpcErrorCode } from './mcp-client.js';
import { killPoint } from '../core/kill-point.js';

import { TASK_LEDGER_NAMESPACE, TASK_POLL_LIMITS } from './task-handles.js';
import type { SendToolCallOptions } from './call-options.js';

/** Following a task to its end (polling, cancelling, the resume ledger): loaded on the first task, see `task-handles.ts`. */

const TaskSchema = z.looseObject({
  taskId: z.string().min(1).max(1024),
  status: z.string(),
  statusMessage: z.string().optional(),
  requestState: z
    .string()
    .max(256 * 1024)
    .optional(),
  pollIntervalMilliseconds: z.number().optional(),
  pollIntervalMs: z.number().optional(),
  pollInterval: z.number().optional(),
  result: z.unknown().optional(),
  error: z.unknown().optional(),
});
type TaskState = z.infer<typeof TaskSchema>;

const TERMINAL = new Set(['completed', 'failed', 'cancelled']);

/** Tasks answer `tasks/get`; the SDK checks nothing more than that it is an object. */
const AnyResultSchema = z.looseObject({});

/** Options of {@link awaitTask}. */
export interface AwaitTaskOptions {
  serverName: string;
  toolName: string;
  /** Timeout of each `tasks/get`. */
  callMs: number;
  /** Cap on the whole wait, from the task's creation. */
  maxCallMs: number;
  /** The caller's abort signal: fires → `tasks/cancel`, then an `ABORTED` error. */
  signal?: AbortSignal;
  /** Each answered poll (restarts a caller-kept no-answer deadline). */
  onPoll?: () => void;
  /** The task's `requestState` changed (to note it where a resumed run finds it). */
  onRequestState?: (requestState: string | undefined) => Promise<void>;
  /** Extra error details (the target, a stdio server's stderr tail). */
  details?: () => Partial<ServerErrorDetails>;
}

/**
 * Follows the task a `tools/call` was answered with until it ends and returns the tool's
 * result: `tasks/get` every `pollIntervalMilliseconds` (bounded by {@link TASK_POLL_LIMITS}),
 * echoing the latest `requestState`.
 * @throws ServerError phase `call`: `TOOL_CALL_FAILED` for a failed or cancelled task (details
 *   name the task id and status), `ABORTED` / `TIMEOUT` after sending `tasks/cancel`,
 *   `PROTOCOL_ERROR` for a handle or final result that is not what the extension defines.
 */
export async function awaitTask(
  client: Client,
  rawHandle: unknown,
  options: AwaitTaskOptions,
): Promise<CallToolResult> {
  const where = `Tool "${options.toolName}" on server "${options.serverName}"`;
  const parsed = TaskSchema.safeParse(rawHandle);
  if (!parsed.success) {
    throw failure(
      options,
      AgentsErrorCode.ProtocolError,
      `${where} answered with a task handle that is not a valid Task (${parsed.error.issues[0]?.message ?? 'invalid'}). Report it to the server's authors.`,
      {},
    );
  }
  let task: TaskState = parsed.data;
  const taskId = task.taskId;
  const cap = new AbortController();
  const capTimer = setTimeout(() => cap.abort(), options.maxCallMs);
  capTimer.unref();
  const stop =
    options.signal === undefined ? cap.signal : AbortSignal.any([options.signal, cap.signal]);
  let requestState = task.requestState;
  try {
    for (;;) {
      const ended = endOf(task, where, options);
      if (ended !== undefined) return ended;
      await sleep(pollDelay(task), undefined, { signal: stop });
      const answer = await client.request(
        {
          method: 'tasks/get',
          params: { taskId, ...(requestState === undefined ? {} : { requestState }) },
        } as never,
        AnyResultSchema as never,
        { signal: stop, timeout: options.callMs },
      );
      options.onPoll?.();
      const next = TaskSchema.safeParse(answer);
      if (!next.success || next.data.taskId !== taskId) {
        throw failure(
          options,
          AgentsErrorCode.ProtocolError,
          `${where} ran as task ${taskId}, and tasks/get answered with something that is not that task. Report it to the server's authors.`,
          { taskId },
        );
      }
      task = next.data;
      // The spec: always echo the latest value; none in the latest message means none sent.
      if (task.requestState !== requestState) {
        requestState = task.requestState;
        await options.onRequestState?.(requestState);
      }
    }
  } catch (error) {
    if (error instanceof ServerError) {
      if (!TERMINAL.has(task.status)) await cancelTask(client, taskId, requestState, options);
      throw error;
    }
    if (stop.aborted) {
      await cancelTask(client, taskId, requestState, options);
      if (options.signal?.aborted === true) {
        throw failure(
          options,
          AgentsErrorCode.Aborted,
          `${where} was cancelled while it ran as task ${taskId}; tasks/cancel was sent.`,
          { taskId },
          options.signal.reason ?? error,
        );
      }
      throw failure(
        options,
        AgentsErrorCode.Timeout,
        `${where} ran as task ${taskId} for longer than its maximum of ${options.maxCallMs} ms; tasks/cancel was sent. Raise timeouts.maxCallMs if the tool needs longer.`,
        { taskId },
        error,
      );
    }
    const code = jsonRpcErrorCode(error);
    throw failure(
      options,
      AgentsErrorCode.ToolCallFailed,
      `${where} ran as task ${taskId}, and following it failed: ${withoutMcpErrorPrefix(errorMessage(error))}`,
      { taskId, ...(code === undefined ? {} : { mcpErrorCode: code }) },
      error,
    );
  } finally {
    clearTimeout(capTimer);
  }
}

/** The tool's result when the task is over, or undefined while it still runs. */
function endOf(
  task: TaskState,
  where: string,
  options: AwaitTaskOptions,
): CallToolResult | undefined {
  const { taskId, status } = task;
  const because = task.statusMessage === undefined ? '' : ` (${task.statusMessage.slice(0, 500)})`;
  switch (status) {
    case 'working':
      return undefined;
    case 'completed': {
      if (isSpecType.CallToolResult(task.result)) return task.result as CallToolResult;
      throw failure(
        options,
        AgentsErrorCode.ProtocolError,
        `${where} completed task ${taskId} with a result that is not a valid CallToolResult. Report it to the server's authors.`,
        { taskId, taskStatus: status },
      );
    }
    case 'failed': {
      const error = (typeof task.error === 'object' && task.error !== null ? task.error : {}) as {
        code?: unknown;
        message?: unknown;
      };
      const message =
        typeof error.message === 'string' ? error.message.slice(0, 1000) : 'no error given';
      const code = typeof error.code === 'number' ? error.code : undefined;
      throw failure(
        options,
        AgentsErrorCode.ToolCallFailed,
        `${where} ran as task ${taskId}, which failed${code === undefined ? '' : ` with MCP error ${code}`}: ${message}${because}`,
        { taskId, taskStatus: status, ...(code === undefined ? {} : { mcpErrorCode: code }) },
      );
    }
    case 'cancelled':
      throw failure(
        options,
        AgentsErrorCode.ToolCallFailed,
        `${where} ran as task ${taskId}, which the server cancelled${because}; the tool may have done part of its work.`,
        { taskId, taskStatus: status },
      );
    case 'input_required':
      // Answering needs tasks/update with the questions put to a person: not built yet.
      throw failure(
        options,
        AgentsErrorCode.ToolCallFailed,
        `${where} ran as task ${taskId}, which asks for input (tasks/update), and this client does not answer questions inside a task yet; the task was cancelled.`,
        { taskId, taskStatus: status },
      );
    default:
      throw failure(
        options,
        AgentsErrorCode.ProtocolError,
        `${where} ran as task ${taskId}, which reports the unknown status "${status.slice(0, 40)}"; the task was cancelled. Report it to the server's authors.`,
        { taskId },
      );
  }
}

function pollDelay(task: TaskState): number {
  const hint = task.pollIntervalMilliseconds ?? task.pollIntervalMs ?? task.pollInterval;
  if (hint === undefined || !Number.isFinite(hint)) return TASK_POLL_LIMITS.defaultMs;
  return Math.min(Math.max(hint, TASK_POLL_LIMITS.minMs), TASK_POLL_LIMITS.maxMs);
}

/** Best effort: the server acknowledges any id; a dead connection only means nothing to cancel. */
async function cancelTask(
  client: Client,
  taskId: string,
  requestState: string | undefined,
  options: AwaitTaskOptions,
): Promise<void> {
  try {
    await client.request(
      {
        method: 'tasks/cancel',
        params: { taskId, ...(requestState === undefined ? {} : { requestState }) },
      } as never,
      AnyResultSchema as never,
      { timeout: Math.min(options.callMs, 5_000) },
    );
  } catch {
    // Nothing more to do: the task ends with its TTL on the server.
  }
}

function failure(
  options: AwaitTaskOptions,
  code: AgentsErrorCode,
  message: string,
  extra: Record<string, unknown>,
  cause?: unknown,
): ServerError {
  return new ServerError(
    code,
    message,
    {
      serverName: options.serverName,
      phase: 'call',
      ...options.details?.(),
      toolName: options.toolName,
      ...extra,
    },
    cause === undefined ? {} : { cause },
  );
}

/** The task a call became, as noted for a resumed run. */
export interface NotedTask {
  taskId: string;
  requestState?: string;
}

/** Where one call notes its task: the run's store, under its thread and tool call id. */
export interface TaskLedger {
  /** The task this same call (same server, tool and arguments) became before, if any. */
  recall(): Promise<NotedTask | undefined>;
  note(task: NotedTask): Promise<void>;
}

export { TASK_LEDGER_NAMESPACE };

/**
 * The ledger of one call, when the run has a store and names the thread and the tool call
 * (LangGraph's ToolNode does); otherwise undefined. Records are small and kept (no deletion): a
 * finished task answers `tasks/get` with its result again until the server's TTL, so a step
 * replayed after a pause gets the same result; the digest of server, tool and arguments guards
 * against a reused tool call id meaning another call.
 */
export function taskLedger(
  context: ToolCallContext,
  serverName: string,
  toolName: string,
  args: Record<string, unknown>,
): TaskLedger | undefined {
  const store = context.taskStore;
  const { threadId, toolCallId } = context;
  if (store === undefined || threadId === undefined || toolCallId === undefined) return undefined;
  const namespace = [...TASK_LEDGER_NAMESPACE, threadId];
  const call = createHash('sha256')
    .update(JSON.stringify([serverName, toolName, args]))
    .digest('hex');
  return {
    async recall() {
      let item;
      try {
        item = await bounded(store.get(namespace, toolCallId));
      } catch {
        return undefined;
      }
      const value = item?.value;
      if (value?.['call'] !== call || typeof value['taskId'] !== 'string') return undefined;
      const requestState = value['requestState'];
      return {
        taskId: value['taskId'],
        ...(typeof requestState === 'string' ? { requestState } : {}),
      };
    },
    async note(task) {
      try {
        await bounded(store.put(namespace, toolCallId, { call, serverName, toolName, ...task }));
        killPoint('task-noted');
      } catch {
        // Without the note a resumed run calls again, as it would without a store.
      }
    },
  };
}

/** A store that does not answer within this long is treated as absent (the call goes on). */
export const TASK_LEDGER_WAIT_MS = 5_000;

async function bounded<T>(work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error('store did not answer')), TASK_LEDGER_WAIT_MS);
  });
  work.catch(() => undefined);
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Notes the task in the run's ledger (if it has one), then follows it to the tool's result
 * within the call's timeouts and signal (`tool-call.ts` loads this module on the first task: a plain call never pays for zod).
 */
export async function followTask(
  client: Client,
  handle: unknown,
  name: string,
  args: Record<string, unknown>,
  context: ToolCallContext,
  options: SendToolCallOptions,
  signal: AbortSignal | undefined,
): Promise<CallToolResult> {
  const ledger = taskLedger(context, options.serverName, name, args);
  const taskId = (handle as { taskId?: unknown }).taskId;
  if (ledger !== undefined && typeof taskId === 'string') {
    const state = (handle as { requestState?: unknown }).requestState;
    await ledger.note({ taskId, ...(typeof state === 'string' ? { requestState: state } : {}) });
  }
  const idle = options.idleDeadline;
  return awaitTask(client, handle, {
    serverName: options.serverName,
    toolName: name,
    callMs: options.callMs,
    maxCallMs: options.maxCallMs,
    ...(signal === undefined ? {} : { signal }),
    ...(idle === undefined ? {} : { onPoll: () => idle.touch() }),
    ...(options.details === undefined ? {} : { details: options.details }),
    ...(ledger === undefined || typeof taskId !== 'string'
      ? {}
      : {
          onRequestState: (requestState) =>
            ledger.note({ taskId, ...(requestState === undefined ? {} : { requestState }) }),
        }),
  });
}
