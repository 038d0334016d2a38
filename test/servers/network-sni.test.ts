/**
 * Issue 28: a tunnel (CONNECT or SOCKS5) decided by its host must not carry a TLS ClientHello
 * naming another host (domain fronting). Real ClientHello bytes, captured from node's TLS client
 * on loopback, sent through the real proxy's Unix socket to a loopback listener.
 */
import { connect as connectTcp, createServer, type AddressInfo, type Server } from 'node:net';
import { connect as connectTls } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileHostRules } from '../../src/servers/network/host-rules.js';
import type { NetworkDecision } from '../../src/servers/network/proxy-decision.js';
import { startNetworkProxy, type NetworkProxy } from '../../src/servers/network/proxy.js';
import { peekClientHello } from '../../src/servers/network/tls-sni.js';

/** The first bytes node's TLS client sends for `servername` (captured by a loopback listener). */
async function captureClientHello(servername: string | undefined): Promise<Buffer> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const bytes = new Promise<Buffer>((resolve) =>
    server.once('connection', (socket) =>
      socket.once('data', (chunk: Buffer) => {
        socket.destroy();
        resolve(chunk);
      }),
    ),
  );
  const client = connectTls({
    host: '127.0.0.1',
    port,
    ...(servername === undefined ? {} : { servername }),
  });
  client.on('error', () => undefined);
  const hello = await bytes;
  client.destroy();
  server.close();
  return hello;
}

describe('TLS ClientHello server name', () => {
  let fronted: Buffer;
  let honest: Buffer;
  let upstream: Server;
  let upstreamPort: number;
  const received: Buffer[] = [];
  let proxy: NetworkProxy;
  let socketPath: string;
  const decisions: NetworkDecision[] = [];

  beforeAll(async () => {
    fronted = await captureClientHello('evil.example.test');
    honest = await captureClientHello('api.example.test');
    upstream = createServer((socket) => {
      const chunks: Buffer[] = [];
      socket.on('data', (chunk: Buffer) => chunks.push(chunk));
      socket.on('close', () => received.push(Buffer.concat(chunks)));
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.2', resolve));
    upstreamPort = (upstream.address() as AddressInfo).port;
    proxy = startNetworkProxy({
      testHosts: { 'api.example.test': '127.0.0.2' },
      onDecision: (decision) => decisions.push(decision),
    });
    socketPath = await proxy.listen(
      'fetcher',
      compileHostRules({ allow: ['api.example.test'], deny: [] }),
    );
  });

  afterAll(async () => {
    await proxy?.close();
    upstream?.close();
  });

  it('reads the name from real ClientHello bytes, whole or split across records', () => {
    expect(peekClientHello(fronted)).toEqual({ kind: 'hello', sni: 'evil.example.test' });
    expect(peekClientHello(fronted.subarray(0, 40))).toEqual({ kind: 'partial' });
    expect(peekClientHello(Buffer.from('GET / HTTP/1.1\r\n'))).toEqual({ kind: 'not-tls' });
    // The same handshake as two TLS records (a client may fragment it).
    const body = fronted.subarray(5);
    const record = (part: Buffer) =>
      Buffer.concat([Buffer.from([0x16, 0x03, 0x01, part.length >> 8, part.length & 0xff]), part]);
    const split = Buffer.concat([record(body.subarray(0, 30)), record(body.subarray(30))]);
    expect(peekClientHello(split)).toEqual({ kind: 'hello', sni: 'evil.example.test' });
    // A name length that runs past the record is malformed, not a crash.
    const broken = Buffer.from(fronted);
    broken.writeUInt16BE(0xffff, broken.indexOf('evil.example.test') - 2);
    expect(peekClientHello(broken).kind).toBe('malformed');
  });

  /** Opens a CONNECT tunnel through the proxy, sends `payload` in `chunks` pieces; what came back. */
  async function throughConnect(payload: Buffer, chunks = 1): Promise<string> {
    const socket = connectTcp(socketPath);
    let reply = '';
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.on('error', () => undefined);
    socket.on('data', (chunk: Buffer) => {
      const first = reply === '';
      reply += chunk.toString('latin1');
      if (!first || !reply.includes(' 200 ')) return;
      const size = Math.ceil(payload.length / chunks);
      for (let at = 0; at < payload.length; at += size)
        socket.write(payload.subarray(at, at + size));
      setTimeout(() => socket.end(), 200);
    });
    socket.write(`CONNECT api.example.test:${upstreamPort} HTTP/1.1\r\nHost: x\r\n\r\n`);
    await closed;
    // The upstream sees the close after the client's.
    await new Promise((resolve) => setTimeout(resolve, 50));
    return reply;
  }

  it('a CONNECT to the allowed host carrying a ClientHello for another host is cut and audited; the honest one passes', async () => {
    received.length = 0;
    decisions.length = 0;
    await throughConnect(fronted, 3);
    expect(received.every((bytes) => bytes.length === 0)).toBe(true);
    expect(decisions.map((d) => [d.decision, d.protocol])).toEqual([
      ['allow', 'connect'],
      ['deny', 'connect'],
    ]);
    expect(decisions[1]!.reason).toMatch(
      /TLS server name "evil\.example\.test" differs from the host asked for, "api\.example\.test" \(domain fronting\)/,
    );

    received.length = 0;
    decisions.length = 0;
    await throughConnect(honest, 2);
    expect(Buffer.concat(received).equals(honest)).toBe(true);
    expect(decisions.map((d) => d.decision)).toEqual(['allow']);

    // Plain bytes through a tunnel are not TLS: passed on as they are.
    received.length = 0;
    await throughConnect(Buffer.from('hello upstream'));
    expect(Buffer.concat(received).toString()).toBe('hello upstream');
  });

  it('SOCKS5 gets the same check', async () => {
    received.length = 0;
    decisions.length = 0;
    const socket = connectTcp(socketPath);
    socket.on('error', () => undefined);
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    let step = 0;
    socket.on('data', () => {
      step++;
      if (step === 1) {
        const name = Buffer.from('api.example.test');
        const port = Buffer.alloc(2);
        port.writeUInt16BE(upstreamPort);
        socket.write(Buffer.concat([Buffer.from([5, 1, 0, 3, name.length]), name, port]));
      } else if (step === 2) socket.write(fronted);
    });
    socket.write(Buffer.from([5, 1, 0]));
    await closed;
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(received.every((bytes) => bytes.length === 0)).toBe(true);
    expect(decisions.map((d) => [d.decision, d.protocol])).toEqual([
      ['allow', 'socks5'],
      ['deny', 'socks5'],
    ]);
  });
});
