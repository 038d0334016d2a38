/**
 * A fetch that connects to one given address: the one the host lists and the address check just
 * approved for the URL's host. The global fetch would resolve the name again when it connects,
 * and a name that answers differently the second time (DNS rebinding: a public address for the
 * check, 127.0.0.1 or the metadata address for the connection) would slip past the check. The
 * URL keeps its host name, so the Host header, TLS server name and certificate check are those
 * of the name; only name resolution is replaced.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIPv6, type LookupFunction } from 'node:net';
import { Readable } from 'node:stream';

/** Statuses whose response has no body (the Response constructor refuses one). */
const NO_BODY = new Set([101, 204, 205, 304]);

/** `fetch(url, init)` connecting to `address` (never resolving the URL's host). No redirects. */
export async function fetchPinned(url: URL, init: RequestInit, address: string): Promise<Response> {
  // Request normalizes every body and header form fetch accepts.
  const prepared = new Request(url, { ...init, redirect: 'manual' });
  const body = prepared.body === null ? undefined : Buffer.from(await prepared.arrayBuffer());
  const family = isIPv6(address) ? 6 : 4;
  const lookup: LookupFunction = (_hostname, options, callback) => {
    if (options.all === true) callback(null, [{ address, family }]);
    else callback(null, address, family);
  };
  const headers: Record<string, string> = {};
  prepared.headers.forEach((value, key) => (headers[key] = value));
  if (body !== undefined) headers['content-length'] = String(body.length);
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<Response>((resolve, reject) => {
    const req = send(
      url,
      {
        method: prepared.method,
        headers,
        lookup,
        ...(init.signal == null ? {} : { signal: init.signal }),
      },
      (res: IncomingMessage) => {
        const responseHeaders = new Headers();
        for (const [key, value] of Object.entries(res.headers)) {
          if (value === undefined) continue;
          for (const item of Array.isArray(value) ? value : [value])
            responseHeaders.append(key, item);
        }
        const status = res.statusCode ?? 502;
        const empty = NO_BODY.has(status) || prepared.method === 'HEAD';
        if (empty) res.resume();
        resolve(
          new Response(empty ? null : (Readable.toWeb(res) as ReadableStream<Uint8Array>), {
            status,
            statusText: res.statusMessage ?? '',
            headers: responseHeaders,
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
