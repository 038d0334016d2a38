/**
 * `withTaskHandles(transport)`: the decorator a client connects over so 2026 task answers reach
 * this library. Over the SDK's own InMemoryTransport: everything but a `"task"` result passes
 * through unchanged (messages, sends, close, errors, members the SDK sniffs), and a real SDK v2
 * client, which refuses a task answer on a bare transport, hands the handle through on a
 * decorated one.
 */
import { Client, type JSONRPCMessage, type Transport } from '@modelcontextprotocol/client';
import { InMemoryTransport, McpServer } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { afterEach, describe, expect, it } from 'vitest';
import {
  hasTaskHandles,
  TASK_HANDLE_META_KEY,
  TASKS_EXTENSION,
  taskHandleOf,
  withTaskHandles,
} from '../../src/mcp/task-handles.js';

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

const TASK = { taskId: 'task-1', status: 'working', pollIntervalMilliseconds: 50 };

function linked(): { decorated: InMemoryTransport; other: InMemoryTransport; seen: unknown[] } {
  const [mine, other] = InMemoryTransport.createLinkedPair();
  const decorated = withTaskHandles(mine);
  const seen: unknown[] = [];
  decorated.onmessage = (message) => seen.push(message);
  closers.push(() => decorated.close());
  return { decorated, other, seen };
}

describe('withTaskHandles over the SDK InMemoryTransport', () => {
  it('passes every message through as the same object, except a task answer', async () => {
    const { decorated, other, seen } = linked();
    await decorated.start();
    const plain: JSONRPCMessage = { jsonrpc: '2.0', id: 1, result: { content: [] } };
    const request: JSONRPCMessage = { jsonrpc: '2.0', id: 7, method: 'ping' };
    const notification: JSONRPCMessage = { jsonrpc: '2.0', method: 'notifications/x' };
    const failure: JSONRPCMessage = { jsonrpc: '2.0', id: 2, error: { code: -1, message: 'no' } };
    for (const message of [plain, request, notification, failure]) await other.send(message);
    await other.send({ jsonrpc: '2.0', id: 3, result: { resultType: 'task', ...TASK } });
    expect(seen.slice(0, 4)).toEqual([plain, request, notification, failure]);
    expect(seen[0]).toBe(plain);
    expect(seen[4]).toEqual({
      jsonrpc: '2.0',
      id: 3,
      result: {
        resultType: 'complete',
        content: [],
        isError: true,
        _meta: { [TASK_HANDLE_META_KEY]: TASK },
      },
    });
    expect(taskHandleOf((seen[4] as { result: unknown }).result)).toEqual(TASK);
  });

  it('sends, closes and reports errors exactly as the transport does', async () => {
    const { decorated, other } = linked();
    const received: unknown[] = [];
    other.onmessage = (message) => received.push(message);
    let closed = 0;
    decorated.onclose = () => closed++;
    const errors: Error[] = [];
    decorated.onerror = (error) => errors.push(error);
    const sent: JSONRPCMessage = { jsonrpc: '2.0', id: 9, result: { resultType: 'task', ...TASK } };
    await decorated.send(sent);
    // Outgoing messages are never rewritten (a server-side transport may be decorated too).
    expect(received).toEqual([sent]);
    const boom = new Error('boom');
    decorated.onerror?.(boom);
    expect(errors).toEqual([boom]);
    await decorated.close();
    expect(closed).toBe(1);
    // The same refusal as the bare transport's, after close.
    const refusal = await decorated.send(sent).catch((error: unknown) => error);
    const bare = await other.send(sent).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(Error);
    expect(String(refusal)).toBe(String(bare));
  });

  it('keeps what the SDK reads of a transport: class, members, `in`, session id', () => {
    const [mine] = InMemoryTransport.createLinkedPair();
    mine.sessionId = 'session-1';
    const decorated = withTaskHandles(mine);
    expect(decorated).toBeInstanceOf(InMemoryTransport);
    expect(decorated.sessionId).toBe('session-1');
    expect('setProtocolVersion' in decorated).toBe('setProtocolVersion' in mine);
    expect(hasTaskHandles(decorated)).toBe(true);
    expect(hasTaskHandles(mine)).toBe(false);
    expect(withTaskHandles(decorated)).toBe(decorated);
  });

  it('runs methods on the transport itself, so a class with #private fields works', async () => {
    const versions: string[] = [];
    class PrivateFieldTransport implements Transport {
      #started = false;
      onmessage?: Transport['onmessage'];
      async start(): Promise<void> {
        this.#started = true;
      }
      async send(): Promise<void> {
        if (!this.#started) throw new Error('not started');
      }
      async close(): Promise<void> {}
      setProtocolVersion(version: string): void {
        versions.push(version);
      }
    }
    const decorated = withTaskHandles(new PrivateFieldTransport());
    await decorated.start();
    await decorated.send();
    decorated.setProtocolVersion('2026-07-28');
    expect(versions).toEqual(['2026-07-28']);
  });
});

describe('an SDK v2 client on a 2026 connection', () => {
  /** A server that answers `tools/call` with a task, as one with its own Tasks runtime does. */
  async function connect(decorate: boolean): Promise<Client> {
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const send = serverSide.send.bind(serverSide);
    serverSide.send = (message, options) => {
      const meta = (message as { result?: { _meta?: Record<string, unknown> } }).result?._meta;
      const handle = meta?.['test/task'];
      return send(
        handle === undefined
          ? message
          : { ...message, result: { resultType: 'task', ...(handle as object) } },
        options,
      );
    };
    const handle = serveStdio(
      () => {
        const server = new McpServer(
          { name: 'task-handles-unit', version: '1.0.0' },
          { capabilities: { tools: {}, extensions: { [TASKS_EXTENSION]: {} } } },
        );
        server.registerTool('slow', { description: 'Becomes a task.' }, () => ({
          content: [],
          _meta: { 'test/task': TASK },
        }));
        return server;
      },
      { legacy: 'serve', transport: serverSide },
    );
    const client = new Client(
      { name: 'task-handles-client', version: '1.0.0' },
      { capabilities: {}, versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    await client.connect(decorate ? withTaskHandles(clientSide) : clientSide);
    closers.push(async () => {
      await client.close();
      await handle.close();
    });
    expect(client.getProtocolEra()).toBe('modern');
    return client;
  }

  it('refuses a task answer on a bare transport (why the decorator exists)', async () => {
    const client = await connect(false);
    await expect(client.callTool({ name: 'slow', arguments: {} })).rejects.toThrow();
  });

  it('hands the task handle through on a decorated one', async () => {
    const client = await connect(true);
    const result = await client.callTool({ name: 'slow', arguments: {} });
    expect(taskHandleOf(result)).toEqual(TASK);
  });
});
