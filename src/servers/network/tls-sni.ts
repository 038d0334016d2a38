/**
 * The server name (SNI) of a TLS ClientHello, read from the first bytes a client sends through
 * a tunnel. The proxy decides a CONNECT by its host; a client that then names another host in
 * its ClientHello (domain fronting: an allowed CDN address serving a forbidden name) is refused.
 */
import type { Duplex } from 'node:stream';
import { normalizeHost } from './host-rules.js';

/** What the first bytes of a tunnel are. */
export type ClientHelloPeek =
  /** Not a TLS handshake (plain bytes): nothing to compare. */
  | { kind: 'not-tls' }
  /** A whole ClientHello; `sni` absent when it names no server (a client connecting by IP). */
  | { kind: 'hello'; sni?: string }
  /** A TLS record that is not a well-formed ClientHello. */
  | { kind: 'malformed' }
  /** More bytes are needed. */
  | { kind: 'partial' };

const HANDSHAKE_RECORD = 0x16;
const CLIENT_HELLO = 0x01;
const SERVER_NAME_EXTENSION = 0x0000;
const HOST_NAME = 0x00;
/** A ClientHello larger than this is refused (real ones are a few KB with post-quantum keys). */
export const MAX_CLIENT_HELLO = 64 * 1024;

/** Reads the ClientHello at the start of `bytes` (possibly split over several TLS records). */
export function peekClientHello(bytes: Buffer): ClientHelloPeek {
  if (bytes.length === 0) return { kind: 'partial' };
  if (bytes[0] !== HANDSHAKE_RECORD) return { kind: 'not-tls' };
  // Join the handshake fragments of consecutive handshake records.
  const fragments: Buffer[] = [];
  let offset = 0;
  let joined = Buffer.alloc(0);
  for (;;) {
    if (bytes.length < offset + 5) return { kind: 'partial' };
    if (bytes[offset] !== HANDSHAKE_RECORD) return { kind: 'malformed' };
    const length = bytes.readUInt16BE(offset + 3);
    if (bytes.length < offset + 5 + length) return { kind: 'partial' };
    fragments.push(bytes.subarray(offset + 5, offset + 5 + length));
    offset += 5 + length;
    joined = Buffer.concat(fragments);
    if (joined.length >= 4) {
      if (joined[0] !== CLIENT_HELLO) return { kind: 'malformed' };
      const bodyLength = joined.readUIntBE(1, 3);
      if (bodyLength + 4 > MAX_CLIENT_HELLO) return { kind: 'malformed' };
      if (joined.length >= bodyLength + 4) return parseHello(joined.subarray(4, 4 + bodyLength));
    }
    if (offset >= bytes.length) return { kind: 'partial' };
  }
}

function parseHello(body: Buffer): ClientHelloPeek {
  try {
    let at = 2 + 32; // client_version, random
    at += 1 + body.readUInt8(at); // session id
    at += 2 + body.readUInt16BE(at); // cipher suites
    at += 1 + body.readUInt8(at); // compression methods
    if (at === body.length) return { kind: 'hello' }; // no extensions at all
    const end = at + 2 + body.readUInt16BE(at);
    if (end > body.length) return { kind: 'malformed' };
    at += 2;
    while (at + 4 <= end) {
      const type = body.readUInt16BE(at);
      const length = body.readUInt16BE(at + 2);
      const data = body.subarray(at + 4, at + 4 + length);
      if (data.length !== length) return { kind: 'malformed' };
      if (type === SERVER_NAME_EXTENSION) {
        // server_name_list: list length, then (type, length, name) entries; only host_name exists.
        let item = 2;
        while (item + 3 <= data.length) {
          const nameType = data.readUInt8(item);
          const nameLength = data.readUInt16BE(item + 1);
          const name = data.subarray(item + 3, item + 3 + nameLength);
          if (name.length !== nameLength) return { kind: 'malformed' };
          if (nameType === HOST_NAME) return { kind: 'hello', sni: name.toString('latin1') };
          item += 3 + nameLength;
        }
        return { kind: 'malformed' };
      }
      at += 4 + length;
    }
    return { kind: 'hello' };
  } catch {
    return { kind: 'malformed' }; // a read past the end: truncated fields
  }
}

/**
 * Reads a client's first bytes until they are a whole ClientHello (or clearly not TLS), starting
 * with `head` (bytes that came with the request). Resolves with the bytes read (to pass on
 * upstream) and the peek; the socket is paused, its listeners removed. No timeout: the caller
 * lets the upstream speak first meanwhile (SSH, SMTP greet before the client sends anything).
 */
export function readClientHello(
  client: Duplex,
  head: Buffer,
): Promise<{ bytes: Buffer; peek: ClientHelloPeek }> {
  return new Promise((resolve) => {
    let bytes = head;
    const finish = (peek: ClientHelloPeek): void => {
      client.off('data', onData);
      client.off('close', onClose);
      client.pause();
      resolve({ bytes, peek });
    };
    const check = (): boolean => {
      const peek = peekClientHello(bytes);
      if (peek.kind === 'partial' && bytes.length <= MAX_CLIENT_HELLO + 5 * 16) return false;
      finish(peek.kind === 'partial' ? { kind: 'malformed' } : peek);
      return true;
    };
    const onData = (chunk: Buffer): void => {
      bytes = Buffer.concat([bytes, chunk]);
      check();
    };
    const onClose = (): void => finish({ kind: 'malformed' });
    if (bytes.length > 0 && check()) return;
    client.on('data', onData);
    client.once('close', onClose);
    client.resume();
  });
}

/** Why a tunnel's first bytes are refused, or undefined when they may pass. */
export function sniRefusal(peek: ClientHelloPeek, host: string): string | undefined {
  if (peek.kind === 'malformed') return 'the first bytes are a malformed TLS ClientHello';
  if (peek.kind !== 'hello' || peek.sni === undefined) return undefined;
  if (normalizeHost(peek.sni) === normalizeHost(host)) return undefined;
  return `the TLS server name "${peek.sni}" differs from the host asked for, "${host}" (domain fronting)`;
}

/**
 * Joins a client to its checked upstream: the upstream's bytes flow at once; the client's first
 * bytes are held until they are known not to be a ClientHello naming another host. `refused`
 * hears why a tunnel was cut (both sockets are then destroyed).
 */
export async function spliceTunnel(
  client: Duplex,
  remote: Duplex,
  head: Buffer,
  host: string,
  refused: (reason: string) => void,
): Promise<void> {
  remote.pipe(client);
  remote.once('close', () => client.destroy());
  client.once('close', () => remote.destroy());
  const { bytes, peek } = await readClientHello(client, head);
  // A client that closed before sending anything is no refusal worth reporting.
  const reason = bytes.length === 0 ? undefined : sniRefusal(peek, host);
  if (reason !== undefined || client.destroyed) {
    if (reason !== undefined) refused(reason);
    client.destroy();
    remote.destroy();
    return;
  }
  if (bytes.length > 0) remote.write(bytes);
  client.pipe(remote);
  client.resume();
}
