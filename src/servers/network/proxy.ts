/**
 * The network proxy the library runs on the host for confined servers with host lists: one Unix
 * socket per server (so every decision names its server), speaking HTTP (plain requests and
 * CONNECT) and SOCKS5 on the same socket, told apart by the first byte. It connects only to an
 * address it has checked (never re-resolving a name), and reports every decision.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, request as httpRequest } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Duplex } from 'node:stream';
import { AgentsError, AgentsErrorCode } from '../../errors.js';
import type { HostRules } from './host-rules.js';
import {
  decideTarget,
  type DecisionOptions,
  type NetworkDecision,
  type ProxyProtocol,
  type TargetVerdict,
  wireExcerpt,
} from './proxy-decision.js';
import { handleSocks5 } from './socks5.js';
import { spliceTunnel } from './tls-sni.js';

/** Options of {@link startNetworkProxy}. */
export interface NetworkProxyOptions extends DecisionOptions {
  /** Called with every decision (the actor writes them to its audit log). */
  onDecision?: (decision: NetworkDecision) => void;
  /** Folder for the sockets; default a fresh private folder under the OS temp dir. */
  socketDir?: string;
  /** Connect timeout to upstream hosts. Default 10 s. */
  connectTimeoutMs?: number;
}

/** A running proxy. */
export interface NetworkProxy {
  /** Opens (once) the socket of one server with its rules; returns its path. */
  listen(serverName: string, rules: HostRules): Promise<string>;
  /** The socket of a server, when open and the proxy is running. */
  socketOf(serverName: string): string | undefined;
  readonly closed: boolean;
  /** Stops listening and ends every connection. Idempotent. */
  close(): Promise<void>;
}

/** Starts a proxy with no sockets yet (each server gets its own with {@link NetworkProxy.listen}). */
export function startNetworkProxy(options: NetworkProxyOptions = {}): NetworkProxy {
  const ownDir = options.socketDir === undefined;
  // Unix socket paths are limited to ~107 bytes: a short private folder under the temp dir.
  const dir = options.socketDir ?? privateSocketFolder();
  const servers = new Map<string, { server: Server; path: string }>();
  const sockets = new Set<Duplex>();
  let closed = false;

  const report =
    (
      serverName: string,
      protocol: ProxyProtocol,
      host: string,
      port: number,
      /** The bytes of a request refused before it could be parsed. */
      unparsed?: Buffer,
    ) =>
    (verdict: TargetVerdict): TargetVerdict => {
      options.onDecision?.({
        time: new Date().toISOString(),
        serverName,
        protocol,
        host,
        port,
        ...(verdict.address === undefined ? {} : { address: verdict.address }),
        decision: verdict.allowed ? 'allow' : 'deny',
        reason: verdict.reason,
        ...(verdict.rule === undefined ? {} : { rule: verdict.rule }),
        ...(!verdict.allowed && verdict.approval !== undefined
          ? { approval: verdict.approval }
          : {}),
        ...(unparsed === undefined ? {} : { unparsed: wireExcerpt(unparsed) }),
      });
      return verdict;
    };

  const decide =
    (serverName: string, rules: HostRules, protocol: ProxyProtocol) =>
    async (
      host: string,
      port: number,
      refusal?: string,
      unparsed?: Buffer,
    ): Promise<TargetVerdict> =>
      report(
        serverName,
        protocol,
        host,
        port,
        unparsed,
      )(
        refusal === undefined
          ? await decideTarget(rules, host, port, options)
          : { allowed: false, reason: refusal },
      );

  const track = (socket: Duplex): void => {
    // Kept-alive upstream sockets come back for each request: listeners once per socket.
    if (sockets.has(socket)) return;
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  };

  const upstream = (address: string, port: number): Promise<Socket> =>
    new Promise((resolve, reject) => {
      const socket = connect({ host: address, port });
      track(socket);
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new Error(`connect to ${address}:${port} timed out`));
      }, options.connectTimeoutMs ?? 10_000);
      socket.once('connect', () => {
        clearTimeout(timer);
        resolve(socket);
      });
      socket.once('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
    });

  const sniRefused =
    (serverName: string, protocol: ProxyProtocol, host: string, port: number) =>
    (reason: string): void =>
      void report(serverName, protocol, host, port)({ allowed: false, reason });

  const httpHandler = (serverName: string, rules: HostRules) => {
    const splice = (
      protocol: ProxyProtocol,
      client: Duplex,
      remote: Socket,
      head: Buffer,
      host: string,
      port: number,
    ): Promise<void> =>
      spliceTunnel(client, remote, head, host, sniRefused(serverName, protocol, host, port));
    const http = createHttpServer();
    http.on('connect', (req: IncomingMessage, client: Duplex, head: Buffer) => {
      track(client);
      const target = splitHostPort(req.url ?? '', 443);
      void (async () => {
        const verdict = target
          ? await decide(serverName, rules, 'connect')(target.host, target.port)
          : report(
              serverName,
              'connect',
              req.url ?? '',
              0,
            )({
              allowed: false,
              reason: 'malformed CONNECT target',
            });
        if (!verdict.allowed) {
          refuseRaw(client, verdict.reason);
          return;
        }
        let remote: Socket;
        try {
          remote = await upstream(verdict.address, target!.port);
        } catch (error) {
          client.end(
            `HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n${(error as Error).message}\n`,
          );
          return;
        }
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        await splice('connect', client, remote, head, target!.host, target!.port);
      })();
    });
    http.on('request', (req: IncomingMessage, res: ServerResponse) => {
      void forwardPlainHttp(req, res, decide(serverName, rules, 'http'), track);
    });
    // A request the parser rejects is a refusal too, audited with its first bytes (a reset or
    // a timeout of an idle connection is not).
    http.on('clientError', (error: Error & { code?: string; rawPacket?: Buffer }, socket) => {
      if (error.code?.startsWith('HPE_') === true) {
        void decide(serverName, rules, 'http')(
          '',
          0,
          `unparsable HTTP request (${error.code})`,
          error.rawPacket ?? Buffer.alloc(0),
        );
        if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
      }
      socket.destroy();
    });
    return http;
  };

  return {
    async listen(serverName, rules) {
      if (closed) throw new Error('The network proxy is closed.');
      const known = servers.get(serverName);
      if (known !== undefined) return known.path;
      // One folder per server: the folder is what a namespace gets, so no server can reach
      // another's socket (and its rules).
      const folder = join(dir, String(servers.size));
      mkdirSync(folder, { mode: 0o700 });
      const path = join(folder, 'proxy.sock');
      checkSocketPath(path, options.socketDir === undefined);
      const http = httpHandler(serverName, rules);
      const socksDecide = decide(serverName, rules, 'socks5');
      const server = createServer((socket) => {
        track(socket);
        // The first byte tells the protocols apart: 5 is SOCKS5; HTTP starts with a method name.
        socket.once('data', (first: Buffer) => {
          socket.pause();
          socket.unshift(first);
          if (first[0] === 0x05)
            handleSocks5(socket, socksDecide, upstream, (client, remote, early, host, port) =>
              spliceTunnel(
                client,
                remote,
                early,
                host,
                sniRefused(serverName, 'socks5', host, port),
              ),
            );
          else http.emit('connection', socket);
          socket.resume();
        });
      });
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(path, () => resolve());
      });
      servers.set(serverName, { server, path });
      return path;
    },
    socketOf(serverName) {
      return closed ? undefined : servers.get(serverName)?.path;
    },
    get closed() {
      return closed;
    },
    async close() {
      if (closed) return;
      closed = true;
      for (const socket of sockets) socket.destroy();
      await Promise.all(
        [...servers.values()].map(
          ({ server }) => new Promise<void>((resolve) => server.close(() => resolve())),
        ),
      );
      servers.clear();
      if (ownDir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The longest pathname a Unix socket may have on Linux (`sun_path` is 108 bytes with its NUL). */
export const MAX_SOCKET_PATH_BYTES = 107;

/**
 * Refuses a socket path the kernel would cut short (Node would listen on the truncated path and
 * the server's forwarder would find nothing there: a dead proxy with no error).
 *
 * @throws AgentsError `CONFINEMENT_UNAVAILABLE` naming the path, its length and the fix.
 */
function checkSocketPath(path: string, fromTmpdir: boolean): void {
  const bytes = Buffer.byteLength(path);
  if (bytes <= MAX_SOCKET_PATH_BYTES) return;
  throw new AgentsError(
    AgentsErrorCode.ConfinementUnavailable,
    `The network proxy's socket path ${path} is ${bytes} bytes, over the ${MAX_SOCKET_PATH_BYTES} a Unix socket path may have; the server was not started. ` +
      (fromTmpdir
        ? 'Point TMPDIR at a shorter folder (e.g. TMPDIR=/tmp) and start again.'
        : 'Give the proxy a shorter socket folder.'),
    { details: { path, bytes, limit: MAX_SOCKET_PATH_BYTES } },
  );
}

/**
 * A fresh private folder for the sockets under the temp folder.
 *
 * @throws AgentsError `CONFINEMENT_UNAVAILABLE` when the temp folder is missing or not writable,
 *   naming it and the fix.
 */
function privateSocketFolder(): string {
  const temp = tmpdir();
  try {
    return mkdtempSync(join(temp, 'agents-net-'));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unknown';
    throw new AgentsError(
      AgentsErrorCode.ConfinementUnavailable,
      `The network proxy could not make its socket folder in the temp folder ${temp} (${code}${code === 'ENOENT' ? ': the folder does not exist' : ''}). ` +
        `Create it (\`mkdir -p ${temp}\`) or point TMPDIR at a folder that exists and is writable (e.g. TMPDIR=/tmp), then start again.`,
      { details: { temp, code }, cause: error },
    );
  }
}

/** A plain `http://` request through the proxy (absolute URL in the request line). */
async function forwardPlainHttp(
  req: IncomingMessage,
  res: ServerResponse,
  decide: (
    host: string,
    port: number,
    refusal?: string,
    unparsed?: Buffer,
  ) => Promise<TargetVerdict>,
  track: (socket: Duplex) => void,
): Promise<void> {
  let url: URL;
  try {
    url = new URL(
      req.url ?? '',
      req.url?.startsWith('/') ? `http://${req.headers.host ?? ''}` : undefined,
    );
  } catch {
    const reason = 'the request line needs an absolute http:// URL';
    await decide('', 0, reason, Buffer.from(`${req.method ?? ''} ${req.url ?? ''}`, 'latin1'));
    req.resume();
    refuse(res, 400, reason);
    return;
  }
  if (url.protocol !== 'http:') {
    const reason = `${url.protocol} is not proxied as a plain request; use CONNECT`;
    await decide(url.hostname, url.port === '' ? 0 : Number(url.port), reason);
    req.resume();
    refuse(res, 400, reason);
    return;
  }
  const port = url.port === '' ? 80 : Number(url.port);
  const verdict = await decide(url.hostname, port);
  if (!verdict.allowed) {
    req.resume();
    refuse(res, 403, verdict.reason);
    return;
  }
  const headers: Record<string, string | string[] | undefined> = { ...req.headers, host: url.host };
  for (const hop of ['proxy-connection', 'proxy-authorization', 'connection', 'keep-alive'])
    delete headers[hop];
  const forwarded = httpRequest(
    {
      host: verdict.address,
      port,
      method: req.method,
      path: `${url.pathname}${url.search}`,
      headers,
      setHost: false,
    },
    (upstream) => {
      res.writeHead(upstream.statusCode ?? 502, upstream.headers);
      upstream.pipe(res);
    },
  );
  forwarded.on('socket', (socket) => track(socket));
  forwarded.on('error', (error) => {
    if (!res.headersSent) refuse(res, 502, error.message);
    else res.destroy();
  });
  req.pipe(forwarded);
}

function refuse(res: ServerResponse, status: number, reason: string): void {
  const body = `agents network proxy: ${reason}\n`;
  res.writeHead(status, {
    'content-type': 'text/plain; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'x-agents-network': 'refused',
    connection: 'close',
  });
  res.end(body);
}

function refuseRaw(client: Duplex, reason: string): void {
  const body = `agents network proxy: ${reason}\n`;
  client.end(
    `HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain; charset=utf-8\r\nX-Agents-Network: refused\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/** `host:port` or `[v6]:port` of a CONNECT line. */
export function splitHostPort(
  target: string,
  defaultPort: number,
): { host: string; port: number } | undefined {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(target);
  if (bracketed !== null)
    return {
      host: bracketed[1]!,
      port: bracketed[2] === undefined ? defaultPort : Number(bracketed[2]),
    };
  const match = /^([^:\s/]+)(?::(\d+))?$/.exec(target);
  if (match === null) return undefined;
  return { host: match[1]!, port: match[2] === undefined ? defaultPort : Number(match[2]) };
}
