import type { Readable, Writable } from 'node:stream';
import { isSpecType, ProtocolErrorCode } from '@modelcontextprotocol/server';
import type { JSONRPCMessage, RequestId, Transport } from '@modelcontextprotocol/server';
import { errorMessage } from '../errors.js';

/** Default cap on one stdio message (bytes): the SDK's own stdio buffer limit. */
export const DEFAULT_MAX_STDIO_MESSAGE_BYTES = 10 * 1024 * 1024;

/** How much of an oversized line is kept to find its request id (start and end). */
const SNIFF_BYTES = 4 * 1024;

/** Options of {@link ServeStdioTransport}. */
export interface ServeStdioTransportOptions {
  /** Largest message line accepted (default {@link DEFAULT_MAX_STDIO_MESSAGE_BYTES}). */
  maxMessageBytes?: number;
  /** Called once the transport has closed, whoever owns `onclose` (the SDK's stdio entry does). */
  onClosed?: () => void;
}

/**
 * The server side of MCP over stdio (newline-delimited JSON-RPC), with a per-message cap that
 * answers instead of dying: the SDK's `StdioServerTransport` closes itself when its buffer goes
 * over 10 MiB, so `agents serve` exited 0 without a reply. Here a line over the cap is skipped
 * as it streams in (memory stays bounded by the cap), its request id is recovered from the
 * line's start or end when it can be, and the client gets a JSON-RPC `-32600` error naming the
 * limit; a line that is not JSON gets `-32700`. The connection stays up either way.
 */
export class ServeStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private readonly maxMessageBytes: number;
  private readonly onClosed: (() => void) | undefined;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** Set while skipping the rest of an oversized line. */
  private oversized: { head: Buffer; tail: Buffer; bytes: number } | undefined;
  private started = false;
  private closed = false;

  constructor(
    private readonly stdin: Readable,
    private readonly stdout: Writable,
    options: ServeStdioTransportOptions = {},
  ) {
    this.maxMessageBytes = options.maxMessageBytes ?? DEFAULT_MAX_STDIO_MESSAGE_BYTES;
    this.onClosed = options.onClosed;
  }

  private readonly onData = (chunk: Buffer | string): void => {
    let data = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    for (;;) {
      const newline = data.indexOf(0x0a);
      if (newline === -1) {
        this.take(data);
        return;
      }
      this.take(data.subarray(0, newline));
      this.endLine();
      data = data.subarray(newline + 1);
    }
  };

  private readonly onError = (error: Error): void => this.onerror?.(error);

  async start(): Promise<void> {
    if (this.started) throw new Error('ServeStdioTransport already started');
    this.started = true;
    this.stdin.on('data', this.onData);
    this.stdin.on('error', this.onError);
  }

  /** Adds part of the current line, switching to skipping once it is over the cap. */
  private take(part: Buffer): void {
    if (part.length === 0) return;
    const skipping = this.oversized;
    if (skipping !== undefined) {
      skipping.bytes += part.length;
      skipping.tail = lastBytes(Buffer.concat([skipping.tail, part]), SNIFF_BYTES);
      return;
    }
    if (this.pendingBytes + part.length <= this.maxMessageBytes) {
      this.pending.push(part);
      this.pendingBytes += part.length;
      return;
    }
    const sofar = Buffer.concat([...this.pending, part]);
    this.oversized = {
      head: Buffer.from(sofar.subarray(0, SNIFF_BYTES)),
      tail: Buffer.from(lastBytes(sofar, SNIFF_BYTES)),
      bytes: sofar.length,
    };
    this.pending = [];
    this.pendingBytes = 0;
  }

  private endLine(): void {
    const skipped = this.oversized;
    if (skipped !== undefined) {
      this.oversized = undefined;
      this.rejectOversized(skipped);
      return;
    }
    const line = Buffer.concat(this.pending).toString('utf8').replace(/\r$/, '');
    this.pending = [];
    this.pendingBytes = 0;
    if (line.trim() === '') return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch (error) {
      this.reply(null, ProtocolErrorCode.ParseError, `Parse error: ${errorMessage(error)}`);
      return;
    }
    if (!isSpecType.JSONRPCMessage(parsed)) {
      const id = idOf(parsed);
      this.reply(
        id,
        ProtocolErrorCode.InvalidRequest,
        'Invalid Request: not a JSON-RPC 2.0 message',
      );
      return;
    }
    this.onmessage?.(parsed);
  }

  private rejectOversized(skipped: { head: Buffer; tail: Buffer; bytes: number }): void {
    const head = skipped.head.toString('utf8');
    // Only a request gets an answer; an oversized response or notification is just dropped.
    const id = /"method"\s*:/.test(head) ? sniffId(head, skipped.tail.toString('utf8')) : null;
    const message =
      `Request too large: a ${skipped.bytes}-byte message is over the limit of ` +
      `${this.maxMessageBytes} bytes per stdio message and was not processed; send smaller ` +
      'arguments (e.g. split the content over several calls).';
    this.onerror?.(new Error(message));
    this.reply(id, ProtocolErrorCode.InvalidRequest, message);
  }

  private reply(id: RequestId | null, code: number, message: string): void {
    // JSON-RPC answers a request it cannot read with id null; the SDK's schema has no such
    // response, so it is written directly.
    const line = `${JSON.stringify({ jsonrpc: '2.0', id, error: { code, message } })}\n`;
    if (!this.closed) this.stdout.write(line);
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve) => {
      if (this.stdout.write(`${JSON.stringify(message)}\n`)) resolve();
      else this.stdout.once('drain', resolve);
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stdin.off('data', this.onData);
    this.stdin.off('error', this.onError);
    if (this.stdin.listenerCount('data') === 0) this.stdin.pause();
    this.pending = [];
    this.oversized = undefined;
    this.onclose?.();
    this.onClosed?.();
  }
}

function lastBytes(buffer: Buffer, count: number): Buffer {
  return buffer.length <= count ? buffer : buffer.subarray(buffer.length - count);
}

function idOf(value: unknown): RequestId | null {
  if (typeof value !== 'object' || value === null || !('id' in value)) return null;
  const id = value.id;
  return typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)) ? id : null;
}

/**
 * The top-level id of a JSON-RPC request from the start or end of its text: SDK clients write
 * `{"method":…,"params":…,"jsonrpc":"2.0","id":N}`, others often put `id` first. Anything
 * doubtful gives null (the JSON-RPC answer for an unreadable request).
 */
function sniffId(head: string, tail: string): RequestId | null {
  const value = String.raw`(-?\d+|"(?:[^"\\]|\\.){0,256}")`;
  const atEnd = new RegExp(String.raw`,\s*"id"\s*:\s*${value}\s*\}\s*$`).exec(tail);
  const atStart = new RegExp(
    String.raw`^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*${value}\s*,`,
  ).exec(head);
  const raw = atEnd?.[1] ?? atStart?.[1];
  if (raw === undefined) return null;
  try {
    const id: unknown = JSON.parse(raw);
    return typeof id === 'string' || typeof id === 'number' ? id : null;
  } catch {
    return null;
  }
}
