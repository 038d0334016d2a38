import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

// Over stdio the opening message picks the revision for the whole connection: `initialize` (or
// anything without the per-request `_meta` envelope) is a 2025-era client, served by the v1
// server with its session features; a message carrying the envelope is a 2026-07-28 client,
// served by the SDK v2 `serveStdio`. The transport is ours either way (ServeStdioTransport, with
// its per-message cap); the first message is replayed to whichever side takes the connection.

const PROTOCOL_VERSION_KEY = 'io.modelcontextprotocol/protocolVersion';

/** True when a message carries the 2026-07-28 per-request envelope. */
export function isModernMessage(message: JSONRPCMessage): boolean {
  if (!('method' in message)) return false;
  const meta = (message.params as { _meta?: Record<string, unknown> } | undefined)?._meta;
  return typeof meta?.[PROTOCOL_VERSION_KEY] === 'string';
}

/** Resolves with the first message on a started transport (undefined if it closes first). */
export function firstMessage(transport: Transport): Promise<JSONRPCMessage | undefined> {
  return new Promise((resolve) => {
    transport.onmessage = (message) => {
      transport.onmessage = undefined;
      transport.onclose = undefined;
      resolve(message);
    };
    transport.onclose = () => resolve(undefined);
  });
}

/**
 * A started transport handed on with its first message replayed: `start()` wires the inner
 * transport's events to this one and delivers the buffered message. Works for the v1 `connect`
 * and the v2 `serveStdio({ transport })` alike (same Transport shape).
 */
export class ReplayingTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  /** Called when the inner transport closes, whoever owns `onclose` by then. */
  onInnerClose?: () => void;

  constructor(
    private readonly inner: Transport,
    private readonly first: JSONRPCMessage,
  ) {}

  async start(): Promise<void> {
    this.inner.onmessage = (message) => this.onmessage?.(message);
    // The owner's error log stays; the server taking over hears errors too.
    const ownerOnError = this.inner.onerror;
    this.inner.onerror = (error) => {
      ownerOnError?.(error);
      this.onerror?.(error);
    };
    this.inner.onclose = () => {
      this.onclose?.();
      this.onInnerClose?.();
    };
    queueMicrotask(() => this.onmessage?.(this.first));
  }

  send(message: JSONRPCMessage): Promise<void> {
    return this.inner.send(message);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
