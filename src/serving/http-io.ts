import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isIP } from 'node:net';

// Small request and response helpers of the streamable-HTTP endpoint (http.ts).

const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '::1', '[::1]']);

/** True for `localhost`, `::1` and any 127.0.0.0/8 address. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (LOOPBACK_NAMES.has(bare)) return true;
  return isIP(bare) === 4 && bare.startsWith('127.');
}

export function sha256(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

export function rpcError(code: number, message: string): unknown {
  return { jsonrpc: '2.0', error: { code, message }, id: null };
}

/** Reads a body up to `limit` bytes; resolves `undefined` when it is larger. */
export async function readBody(req: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    size += buffer.length;
    if (size > limit) return undefined;
    chunks.push(buffer);
  }
  return Buffer.concat(chunks);
}

/**
 * Answers a node request through a web handler (an SDK transport or handler): the client
 * hanging up aborts the request (and with it a tool call in flight); the answer, JSON or an SSE
 * stream, is written as it comes.
 */
export async function exchange(
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  raw: Buffer | undefined,
  handle: (request: Request) => Promise<Response>,
): Promise<void> {
  const hangUp = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) hangUp.abort();
  });
  await writeWebResponse(res, await handle(toWebRequest(req, url, raw, hangUp.signal)));
}

/** The node request as a web `Request` (its body already read into `raw`). */
export function toWebRequest(
  req: IncomingMessage,
  url: URL,
  raw: Buffer | undefined,
  signal?: AbortSignal,
): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  }
  return new Request(new URL(url.pathname + url.search, `http://${req.headers.host}`), {
    method: req.method ?? 'POST',
    headers,
    ...(raw === undefined ? {} : { body: new Uint8Array(raw) }),
    ...(signal === undefined ? {} : { signal }),
  });
}

/** Writes a web `Response` (JSON or an SSE stream) to a node response. */
export async function writeWebResponse(res: ServerResponse, response: Response): Promise<void> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  res.writeHead(response.status, headers);
  if (response.body === null) {
    res.end();
    return;
  }
  const reader = response.body.getReader();
  res.once('close', () => void reader.cancel().catch(() => undefined));
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (!res.write(value)) {
        await new Promise<void>((resolve) => {
          const resume = (): void => {
            res.off('drain', resume);
            res.off('close', resume);
            resolve();
          };
          res.once('drain', resume);
          res.once('close', resume);
        });
      }
      if (res.destroyed) break;
    }
  } catch {
    // The client went away mid-stream; nothing left to tell it.
  }
  res.end();
}
