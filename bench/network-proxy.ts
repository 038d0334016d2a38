/**
 * Added latency of the network proxy (issue 28). Run: `npx tsx bench/network-proxy.ts [runs]`.
 *
 * A loopback HTTP server (a child process, so it does not share the proxy's event loop) is
 * reached directly and through the proxy's Unix socket, in alternating pairs (default 300 of
 * each), and the medians compared as ratios measured in the same run:
 * 1. per request: GET on a kept-alive connection, direct vs plain HTTP proxying;
 * 2. per connection: connect + one GET + close, direct TCP vs a CONNECT tunnel vs SOCKS5;
 * 3. per connection through the in-namespace hop: the same CONNECT, but via a TCP forwarder in
 *    front of the socket (what a confined server's HTTP_PROXY points at).
 * The client runs in this process beside the proxy: the ratios include the proxy's own work,
 * not the cost of a second process. Name resolution is a test map (no DNS).
 */
import { spawn } from 'node:child_process';
import { Agent, request, type RequestOptions } from 'node:http';
import { connect, createServer, type Socket } from 'node:net';
import { compileHostRules } from '../src/servers/network/host-rules.js';
import { startNetworkProxy } from '../src/servers/network/proxy.js';

const runs = Number(process.argv[2] ?? 300);
const median = (values: number[]): number =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

const upstream = spawn(
  process.execPath,
  [
    '-e',
    `require('node:http').createServer((q, s) => s.end('ok')).listen(0, '127.0.0.1', function () { process.stdout.write(String(this.address().port) + '\\n'); });`,
  ],
  { stdio: ['ignore', 'pipe', 'inherit'] },
);
const port = await new Promise<number>((resolve) =>
  upstream.stdout!.once('data', (chunk: Buffer) => resolve(Number(chunk.toString().trim()))),
);

const proxy = startNetworkProxy({ testHosts: { 'bench.example.test': '127.0.0.1' } });
const socketPath = await proxy.listen(
  'bench',
  compileHostRules({ allow: ['bench.example.test'], deny: [] }),
);
const target = `bench.example.test:${port}`;

// The in-namespace forwarder's job, in this process: TCP on loopback → the Unix socket.
const forwarder = createServer((client) => {
  const inner = connect(socketPath);
  client.pipe(inner).pipe(client);
  const end = () => (client.destroy(), inner.destroy());
  client.on('error', end).on('close', end);
  inner.on('error', end).on('close', end);
});
await new Promise<void>((resolve) => forwarder.listen(0, '127.0.0.1', resolve));
const forwarderPort = (forwarder.address() as { port: number }).port;

function get(options: RequestOptions): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = request(options, (res) => {
      res.resume();
      res.once('end', () => resolve());
    });
    req.once('error', reject);
    req.end();
  });
}

/** Sends `head` on a fresh socket and waits for the full HTTP reply (`Connection: close`). */
function exchange(socket: Socket, setup: (socket: Socket) => Promise<void>): Promise<void> {
  return new Promise((resolve, reject) => {
    socket.once('error', reject);
    socket.once('connect', () => {
      setup(socket)
        .then(() => {
          socket.on('data', () => undefined);
          socket.once('end', () => resolve());
          socket.write(`GET / HTTP/1.1\r\nHost: ${target}\r\nConnection: close\r\n\r\n`);
        })
        .catch(reject);
    });
  });
}

function readBytes(socket: Socket, n: number): Promise<Buffer> {
  return new Promise((resolve) => {
    let buffer = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      if (buffer.length >= n) {
        socket.off('data', onData);
        resolve(buffer);
      }
    };
    socket.on('data', onData);
  });
}

function readUntil(socket: Socket, marker: string): Promise<void> {
  return new Promise((resolve) => {
    let text = '';
    const onData = (chunk: Buffer) => {
      text += chunk.toString('latin1');
      if (text.includes(marker)) {
        socket.off('data', onData);
        resolve();
      }
    };
    socket.on('data', onData);
  });
}

const connectTunnel = async (socket: Socket) => {
  const done = readUntil(socket, '\r\n\r\n');
  socket.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`);
  await done;
};
const socksTunnel = async (socket: Socket) => {
  let reply = readBytes(socket, 2);
  socket.write(Buffer.from([5, 1, 0]));
  await reply;
  const name = Buffer.from('bench.example.test');
  const portBytes = Buffer.alloc(2);
  portBytes.writeUInt16BE(port);
  reply = readBytes(socket, 10);
  socket.write(Buffer.concat([Buffer.from([5, 1, 0, 3, name.length]), name, portBytes]));
  await reply;
};
const none = async () => undefined;

const directAgent = new Agent({ keepAlive: true, maxSockets: 1 });
const proxyAgent = new Agent({ keepAlive: true, maxSockets: 1 });
const scenarios: Record<string, () => Promise<void>> = {
  'request direct (kept alive)': () =>
    get({ host: '127.0.0.1', port, path: '/', agent: directAgent }),
  'request via proxy (kept alive)': () =>
    get({ socketPath, path: `http://${target}/`, headers: { host: target }, agent: proxyAgent }),
  'connection direct': () => exchange(connect({ host: '127.0.0.1', port }), none),
  'connection via CONNECT': () => exchange(connect(socketPath), connectTunnel),
  'connection via SOCKS5': () => exchange(connect(socketPath), socksTunnel),
  'connection via forwarder + CONNECT': () =>
    exchange(connect({ host: '127.0.0.1', port: forwarderPort }), connectTunnel),
};

const times = new Map<string, number[]>(Object.keys(scenarios).map((name) => [name, []]));
for (let warm = 0; warm < 20; warm++) for (const run of Object.values(scenarios)) await run();
for (let index = 0; index < runs; index++) {
  for (const [name, run] of Object.entries(scenarios)) {
    const started = performance.now();
    await run();
    times.get(name)!.push(performance.now() - started);
  }
}
const m = (name: string) => median(times.get(name)!);
const row = (name: string, base: string) =>
  `| ${name} | ${m(name).toFixed(3)} | ${(m(name) / m(base)).toFixed(2)}× |`;
console.log(
  `Network proxy overhead (${runs} alternating runs each, medians, ms; ratio to direct in this run)\n`,
);
console.log('| scenario | median ms | vs direct |');
console.log('|---|---|---|');
console.log(row('request direct (kept alive)', 'request direct (kept alive)'));
console.log(row('request via proxy (kept alive)', 'request direct (kept alive)'));
console.log(row('connection direct', 'connection direct'));
console.log(row('connection via CONNECT', 'connection direct'));
console.log(row('connection via SOCKS5', 'connection direct'));
console.log(row('connection via forwarder + CONNECT', 'connection direct'));

directAgent.destroy();
proxyAgent.destroy();
forwarder.close();
await proxy.close();
upstream.kill();
