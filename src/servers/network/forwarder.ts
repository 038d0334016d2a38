/**
 * The forwarder that runs inside a confined server's network namespace: HTTP_PROXY needs a TCP
 * address, and the namespace has only loopback, so a few lines of node listen on
 * 127.0.0.1:PORT there and pipe each connection to the proxy's Unix socket (bound into the
 * namespace). It then starts the server with inherited stdio, passes signals on, and exits as
 * the server did. Plain CommonJS for `node -e`: it must run from any install, with no files.
 */

/** The loopback port inside every namespace (each has its own loopback: no clashes). */
export const FORWARDER_PORT = 3128;

/** Where the proxy's socket folder appears inside the namespace (on the private /tmp). */
export const NAMESPACE_SOCKET_DIR = '/tmp/.agents-network';

const SOURCE = `
const net = require('node:net');
const { spawn } = require('node:child_process');
const { signals } = require('node:os').constants;
const [port, socketPath, command, ...args] = process.argv.slice(1);
const fail = (message) => {
  process.stderr.write('agents network forwarder: ' + message + '\\n');
  process.exit(126);
};
const server = net.createServer((client) => {
  const proxy = net.connect(socketPath);
  const end = () => { client.destroy(); proxy.destroy(); };
  client.on('error', end); proxy.on('error', end);
  client.on('close', end); proxy.on('close', end);
  client.pipe(proxy); proxy.pipe(client);
});
server.on('error', (error) => fail('cannot listen on 127.0.0.1:' + port + ': ' + error.message));
server.listen(Number(port), '127.0.0.1', () => {
  const child = spawn(command, args, { stdio: 'inherit' });
  for (const name of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(name, () => child.kill(name));
  child.on('error', (error) => fail('cannot start ' + command + ': ' + error.message));
  child.on('exit', (code, signal) => process.exit(signal ? 128 + (signals[signal] || 0) : (code ?? 1)));
});
`;

/** The command line (to run inside the namespace) that starts the forwarder, then the server. */
export function forwarderCommand(
  node: string,
  socketPath: string,
  command: string,
  args: readonly string[],
): { command: string; args: string[] } {
  return {
    command: node,
    args: ['-e', SOURCE, '--', String(FORWARDER_PORT), socketPath, command, ...args],
  };
}

/** The proxy variables a server gets (both spellings: curl reads only lower-case http_proxy). */
export function proxyEnvironment(): Record<string, string> {
  const http = `http://127.0.0.1:${FORWARDER_PORT}`;
  const socks = `socks5h://127.0.0.1:${FORWARDER_PORT}`;
  const env: Record<string, string> = {};
  for (const [name, value] of [
    ['HTTP_PROXY', http],
    ['HTTPS_PROXY', http],
    ['ALL_PROXY', socks],
  ] as const) {
    env[name] = value;
    env[name.toLowerCase()] = value;
  }
  // Loopback inside the namespace is the forwarder alone; nothing bypasses the proxy.
  env['NO_PROXY'] = '';
  env['no_proxy'] = '';
  // Node 24+ reads the variables above for fetch() and http when this is set.
  env['NODE_USE_ENV_PROXY'] = '1';
  return env;
}
