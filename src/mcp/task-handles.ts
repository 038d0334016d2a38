import type { Client, ClientCapabilities, Transport } from '@modelcontextprotocol/client';

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
 * `"task"` result before anyone sees it. {@link withTaskHandles} therefore turns such an answer
 * into a result carrying the handle under {@link TASK_HANDLE_META_KEY}, on the way in.
 */

/** The extension identifier, declared in a request's client capabilities and in `server/discover`. */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/** Where a rewritten `tools/call` answer carries the task handle (see {@link withTaskHandles}). */
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

/**
 * The task-capable view of one tool: what its listing says, what the server advertises, and
 * whether the client's transport hands task answers through ({@link withTaskHandles}; without
 * it the SDK refuses a task answer, so nothing is declared).
 */
export function declaresTasks(client: Client, taskSupport: TaskSupport | undefined): boolean {
  if (client.getProtocolEra() !== 'modern' || taskSupport === 'forbidden') return false;
  if (!hasTaskHandles(client.transport)) return false;
  // A tool that requires a task gets one even from a server that forgot to advertise the extension.
  if (taskSupport === 'required') return true;
  const extensions = client.getServerCapabilities()?.extensions;
  return extensions?.[TASKS_EXTENSION] !== undefined;
}

/** `capabilities` with the Tasks extension declared. */
export function withTasksExtension(capabilities: ClientCapabilities = {}): ClientCapabilities {
  return {
    ...capabilities,
    extensions: { ...capabilities.extensions, [TASKS_EXTENSION]: {} },
  };
}

const decorated = new WeakSet<object>();
const ownHandlers = new WeakSet<object>();
/** Read as they are: the class (the SDK constructs a sibling from it) and the callbacks. */
const UNBOUND = new Set<string | symbol>(['constructor', 'onmessage', 'onclose', 'onerror']);

/**
 * The same transport, handing `tools/call` task answers through to this library: apply it before
 * `client.connect()` (`client.connect(withTaskHandles(transport))`). A result with
 * `resultType: "task"` becomes `{ content: [], isError: true, _meta: { [TASK_HANDLE_META_KEY]:
 * task } }` before the SDK decodes it (`isError` so no output-schema check runs on it;
 * {@link taskHandleOf} picks it up first). Everything else passes through unchanged.
 *
 * A proxy rather than a wrapper class: the SDK reads more of a transport than its six members
 * (`"stderr" in transport && "pid" in transport` makes a stdio probe fall back to 2025 instead of
 * failing; the base `StdioClientTransport`'s prototype and `_serverParams` let it probe on a
 * disposable sibling process), so every member, the prototype and `in` stay the transport's own.
 * Methods run on the transport itself (`this` is never the proxy, so `#private` fields work).
 */
export function withTaskHandles<T extends Transport>(transport: T): T {
  if (decorated.has(transport)) return transport;
  const methods = new WeakMap<object, unknown>();
  const proxy = new Proxy(transport, {
    get(target, key) {
      const value: unknown = Reflect.get(target, key, target);
      if (typeof value !== 'function' || UNBOUND.has(key)) return value;
      let bound = methods.get(value);
      if (bound === undefined) methods.set(value, (bound = value.bind(target)));
      return bound;
    },
    set(target, key, value: unknown) {
      // The handler lives on the transport itself, which calls its own `onmessage`.
      if (key === 'onmessage' && typeof value === 'function' && !ownHandlers.has(value)) {
        const handler = value as MessageHandler;
        const rewriting: MessageHandler = (message, extra) => handler(asHandle(message), extra);
        ownHandlers.add(rewriting);
        value = rewriting;
      }
      return Reflect.set(target, key, value, target);
    },
  });
  decorated.add(proxy);
  return proxy;
}

/** True for a transport made by {@link withTaskHandles}. */
export function hasTaskHandles(transport: Transport | undefined): boolean {
  return transport !== undefined && decorated.has(transport);
}

type MessageHandler = (message: unknown, extra?: unknown) => void;

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
