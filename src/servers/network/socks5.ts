/**
 * SOCKS5 (RFC 1928) on one proxy connection: no authentication, CONNECT only (BIND and UDP
 * ASSOCIATE are refused: UDP has no way out), targets by domain name or address.
 */
import type { Socket } from 'node:net';
import type { TargetVerdict } from './proxy-decision.js';

const VERSION = 0x05;
const REPLY = {
  succeeded: 0x00,
  failure: 0x01,
  notAllowed: 0x02,
  hostUnreachable: 0x04,
  commandNotSupported: 0x07,
  addressNotSupported: 0x08,
} as const;

/** Reads exactly n bytes at a time from a socket, in order. */
class ByteReader {
  private buffer = Buffer.alloc(0);
  private waiting: { n: number; resolve: (bytes: Buffer) => void } | undefined;
  private ended = false;

  constructor(private readonly socket: Socket) {
    socket.on('data', this.onData);
    socket.once('close', () => {
      this.ended = true;
      this.waiting?.resolve(Buffer.alloc(0));
    });
  }

  /** Every byte read so far (capped), for the audit of a handshake that fails to parse. */
  seen = Buffer.alloc(0);

  private readonly onData = (chunk: Buffer): void => {
    this.buffer = Buffer.concat([this.buffer, chunk]);
    if (this.seen.length < 256) this.seen = Buffer.concat([this.seen, chunk]).subarray(0, 256);
    if (this.buffer.length > 1024) {
      // A handshake is a few dozen bytes.
      this.overflowed = true;
      this.socket.destroy();
    }
    this.settle();
  };

  overflowed = false;

  private settle(): void {
    if (this.waiting === undefined || this.buffer.length < this.waiting.n) return;
    const { n, resolve } = this.waiting;
    this.waiting = undefined;
    const bytes = this.buffer.subarray(0, n);
    this.buffer = this.buffer.subarray(n);
    resolve(bytes);
  }

  /** n bytes, or fewer when the socket closed first. */
  read(n: number): Promise<Buffer> {
    if (this.ended) return Promise.resolve(Buffer.alloc(0));
    return new Promise((resolve) => {
      this.waiting = { n, resolve };
      this.settle();
    });
  }

  /** Stops reading; returns what arrived after the handshake (the first payload bytes). */
  detach(): Buffer {
    this.socket.off('data', this.onData);
    return this.buffer;
  }
}

/** Joins the client to its checked upstream (with the first-bytes check of tls-sni.ts). */
export type Splice = (
  client: Socket,
  remote: Socket,
  early: Buffer,
  host: string,
  port: number,
) => Promise<void>;

/**
 * Decides a target (audited); with `refusal`, records that refusal instead (host '' and port 0
 * with the bytes read, for a handshake that did not parse).
 */
export type Socks5Decide = (
  host: string,
  port: number,
  refusal?: string,
  unparsed?: Buffer,
) => Promise<TargetVerdict>;

/** Runs the SOCKS5 exchange on `socket`, then pipes it to the checked upstream address. */
export function handleSocks5(
  socket: Socket,
  decide: Socks5Decide,
  upstream: (address: string, port: number) => Promise<Socket>,
  splice: Splice,
): void {
  void run(socket, decide, upstream, splice).catch(() => socket.destroy());
}

async function run(
  socket: Socket,
  decide: Socks5Decide,
  upstream: (address: string, port: number) => Promise<Socket>,
  splice: Splice,
): Promise<void> {
  const reader = new ByteReader(socket);
  // A handshake the parser rejects is refused and audited (a client that just hangs up is not).
  const malformed = async (what: string): Promise<void> => {
    await decide('', 0, `malformed SOCKS5 handshake: ${what}`, reader.seen);
    socket.destroy();
  };
  const overflowed = (): Promise<void> | undefined =>
    reader.overflowed ? malformed('over 1024 bytes before the request ended') : undefined;
  const greeting = await reader.read(2);
  if (greeting.length < 2) return overflowed() ?? void socket.destroy();
  if (greeting[0] !== VERSION) return malformed(`version ${greeting[0]}`);
  const methods = await reader.read(greeting[1]!);
  if (methods.length < greeting[1]!) return overflowed() ?? void socket.destroy();
  if (!methods.includes(0x00)) {
    await decide('', 0, 'SOCKS5 client offers no method but "no authentication"', reader.seen);
    socket.end(Buffer.from([VERSION, 0xff])); // no acceptable method
    return;
  }
  socket.write(Buffer.from([VERSION, 0x00]));
  const head = await reader.read(4);
  if (head.length < 4) return overflowed() ?? void socket.destroy();
  if (head[0] !== VERSION || head[2] !== 0x00)
    return malformed(`request header ${head.toString('hex')}`);
  const command = head[1]!;
  const type = head[3]!;
  let host: string;
  if (type === 0x01) host = [...(await reader.read(4))].join('.');
  else if (type === 0x03)
    host = (await reader.read((await reader.read(1))[0] ?? 0)).toString('latin1');
  else if (type === 0x04) {
    const bytes = await reader.read(16);
    host = Array.from({ length: 8 }, (_, i) => bytes.readUInt16BE(i * 2).toString(16)).join(':');
  } else {
    await decide('', 0, `SOCKS5 address type ${type} is not supported`, reader.seen);
    reply(socket, REPLY.addressNotSupported, true);
    return;
  }
  const portBytes = await reader.read(2);
  if (portBytes.length < 2) return overflowed() ?? void socket.destroy();
  const port = portBytes.readUInt16BE(0);
  if (command !== 0x01) {
    // Decided (and so reported) as a refusal: a UDP relay would be a way out past the lists.
    await decide(
      host,
      port,
      `SOCKS5 ${command === 0x03 ? 'UDP ASSOCIATE' : 'BIND'} is not supported (TCP CONNECT only)`,
    );
    reply(socket, REPLY.commandNotSupported, true);
    return;
  }
  const verdict = await decide(host, port);
  if (!verdict.allowed) {
    reply(socket, REPLY.notAllowed, true);
    return;
  }
  let remote: Socket;
  try {
    remote = await upstream(verdict.address, port);
  } catch {
    reply(socket, REPLY.hostUnreachable, true);
    return;
  }
  const early = reader.detach();
  reply(socket, REPLY.succeeded, false);
  await splice(socket, remote, early, host, port);
}

function reply(socket: Socket, code: number, end: boolean): void {
  // Bound address 0.0.0.0:0: clients do not need it for CONNECT.
  const bytes = Buffer.from([VERSION, code, 0x00, 0x01, 0, 0, 0, 0, 0, 0]);
  if (end) socket.end(bytes);
  else socket.write(bytes);
}
