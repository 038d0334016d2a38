import type { Client, ClientCapabilities } from '@modelcontextprotocol/client';

/**
 * The SDK's `CLIENT_CAPABILITIES_META_KEY` (2026 capabilities travel in each request's `_meta`),
 * without loading the SDK on import; `test/mcp/tasks.test.ts` keeps it equal to the SDK's.
 */
export const CLIENT_CAPABILITIES_META_KEY = 'io.modelcontextprotocol/clientCapabilities';

/**
 * The Tasks extension of MCP 2026-07-28 (SEP-2663, `io.modelcontextprotocol/tasks`) on the client
 * side: a server may answer `tools/call` with a task handle (`resultType: "task"`) instead of
 * the result; the client polls `tasks/get` (honouring the server's poll interval) until the task
 * is `completed` (the tool's `CallToolResult` inlined), `failed` (a JSON-RPC error) or
 * `cancelled`, and cancels it with `tasks/cancel`. Callers see the ordinary result.
 *
 * The SDK v2 client (2.4.0) has the 2025-era task schemas only: its 2026 decoder refuses a
 * `"task"` result before anyone sees it. {@link receiveTaskHandles} therefore turns such an
 * answer into a result carrying the handle under {@link TASK_HANDLE_META_KEY}, on the way in.
 */

/** The extension identifier, declared in a request's client capabilities and in `server/discover`. */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/** Where a rewritten `tools/call` answer carries the task handle (see {@link receiveTaskHandles}). */
export const TASK_HANDLE_META_KEY = 'agents/task-handle';

/** A tool's `execution.taskSupport` (as listed; absent means the server decides). */
export type TaskSupport = 'required' | 'optional' | 'forbidden';

/** Poll-interval bounds: a hint is honoured inside them (an untrusted server cannot make us spin or stall). */
export const TASK_POLL_LIMITS = { defaultMs: 500, minMs: 10, maxMs: 60_000 } as const;

/**
 * Store namespace of the noted tasks of one thread (`tasks.ts` notes them, a resume plan reads
 * them: here, so reading costs no zod or SDK load).
 */
export const TASK_LEDGER_NAMESPACE = ['agents', 'mcp-tasks'] as const;

/** The task-capable view of one tool: what its listing says and what the server advertises. */
export function declaresTasks(client: Client, taskSupport: TaskSupport | undefined): boolean {
  if (client.getProtocolEra() !== 'modern' || taskSupport === 'forbidden') return false;
  // A tool that requires a task gets one even from a server that forgot to advertise the extension.
  if (taskSupport === 'required') return true;
  const extensions = client.getServerCapabilities()?.extensions;
  return extensions?.[TASKS_EXTENSION] !== undefined;
}

/** `capabilities` with the Tasks extension declared. */
export function withTasksExtension(capabilities: ClientCapabilities): ClientCapabilities {
  return {
    ...capabilities,
    extensions: { ...capabilities.extensions, [TASKS_EXTENSION]: {} },
  };
}

/**
 * The `_meta` of a `tools/call` that declares the Tasks extension on top of the capabilities the
 * client declares on every request (2026 capabilities travel per request; the SDK replaces the
 * whole key with ours, so the client's own are merged in).
 */
export function tasksMeta(client: Client): Record<string, unknown> {
  // The SDK keeps the constructor's capabilities here; it has no public getter for them.
  const own = (client as unknown as { _capabilities?: ClientCapabilities })._capabilities ?? {};
  return { [CLIENT_CAPABILITIES_META_KEY]: withTasksExtension(own) };
}

type MessageHandler = (message: unknown, extra?: unknown) => void;
const receiving = new WeakSet<object>();

/**
 * Makes this client's connection hand task answers through: a `tools/call` result with
 * `resultType: "task"` becomes `{ content: [], isError: true, _meta: { [TASK_HANDLE_META_KEY]:
 * task } }` before the SDK decodes it (`isError` so no output-schema check runs on it;
 * {@link taskHandleOf} picks it up first). Idempotent per transport; a reconnect brings a new
 * transport, wrapped on its first task-capable call.
 */
export function receiveTaskHandles(client: Client): void {
  const transport = client.transport as { onmessage?: MessageHandler } | undefined;
  if (transport === undefined || receiving.has(transport)) return;
  const inner = transport.onmessage;
  if (inner === undefined) return;
  receiving.add(transport);
  transport.onmessage = (message, extra) => inner.call(transport, asHandle(message), extra);
}

function asHandle(message: unknown): unknown {
  if (typeof message !== 'object' || message === null || !('result' in message)) return message;
  const result = (message as { result?: unknown }).result;
  if (typeof result !== 'object' || result === null) return message;
  const { resultType, ...task } = result as Record<string, unknown>;
  if (resultType !== 'task') return message;
  return {
    ...message,
    result: {
      resultType: 'complete',
      content: [],
      isError: true,
      _meta: { [TASK_HANDLE_META_KEY]: task },
    },
  };
}

/** The task handle a rewritten `tools/call` answer carries, if it is one. */
export function taskHandleOf(result: unknown): unknown {
  if (typeof result !== 'object' || result === null) return undefined;
  const meta = (result as { _meta?: unknown })._meta;
  if (typeof meta !== 'object' || meta === null) return undefined;
  return (meta as Record<string, unknown>)[TASK_HANDLE_META_KEY];
}
