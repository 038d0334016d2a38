// `npm run studio`: the LangGraph dev server (`langgraphjs dev`) for this repo's graphs, on
// 127.0.0.1 with analytics and the browser off, supervised so that nothing outlives it.
//
// Why a wrapper: the dev server loads every graph (each starts a sandbox and an MCP server)
// BEFORE it opens its port, so on a busy port it used to fail after starting them, and left the
// server running. Here the port is checked first (nothing starts when it is taken), the server
// runs in its own process group, signals are passed on to that group, and a late
// "address in use" (another process took the port in between) stops the whole group: the
// graphs' janitors then stop their MCP servers and remove their sandboxes.
//
// Usage: npm run studio [-- --port N] [other `langgraphjs dev` options]
// Plain JS so that it runs with bare `node`, with no loader process in between.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { constants } from 'node:os';
import * as path from 'node:path';

const DEFAULT_PORT = 2024;
const HOST = '127.0.0.1';
const SIGNAL_EXIT = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 };

/** @param {string} message */
function fail(message) {
  process.stderr.write(`npm run studio: ${message}\n`);
  process.exit(1);
}

/** The `--port` the user asked for (`--port N`, `--port=N`, `-p N`), or the default. */
function requestedPort(args) {
  let value;
  for (let index = 0; index < args.length; index++) {
    const arg = args[index];
    if (arg === '--port' || arg === '-p') value = args[index + 1];
    else if (arg.startsWith('--port=')) value = arg.slice('--port='.length);
  }
  if (value === undefined) return DEFAULT_PORT;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 1 || port > 65535)
    fail(`--port ${value} is not a port number; give a whole number from 1 to 65535.`);
  return port;
}

function busyPortMessage(port, late = false) {
  const what = late
    ? 'was taken while the dev server started; it was stopped with its graphs (MCP servers, sandboxes)'
    : 'is already in use (another `npm run studio` or LangGraph dev server?); nothing was started';
  return (
    `port ${port} on ${HOST} ${what}. Stop the process that holds it, or choose another port: ` +
    `npm run studio -- --port ${port + 1}`
  );
}

/** Resolves when `port` on 127.0.0.1 can be bound; exits with a clear message when not. */
async function checkPort(port) {
  await new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', (error) => {
      if (error.code === 'EADDRINUSE') fail(busyPortMessage(port));
      fail(
        `cannot listen on ${HOST}:${port} (${error.code ?? error.message}); choose another port with --port.`,
      );
    });
    probe.listen({ port, host: HOST, exclusive: true }, () => probe.close(resolve));
  });
}

/** The `langgraphjs` bin of @langchain/langgraph-cli, run with node directly (no npx layer). */
function cliBin() {
  const require = createRequire(path.join(process.cwd(), 'package.json'));
  let manifestPath;
  try {
    manifestPath = require.resolve('@langchain/langgraph-cli/package.json');
  } catch {
    fail('@langchain/langgraph-cli is not installed here; run `npm install` first.');
  }
  const bin = JSON.parse(readFileSync(manifestPath, 'utf8')).bin?.langgraphjs;
  if (typeof bin !== 'string') fail(`no langgraphjs bin in ${manifestPath}`);
  return path.join(path.dirname(manifestPath), bin);
}

const args = process.argv.slice(2);
const port = requestedPort(args);
await checkPort(port);

const child = spawn(
  process.execPath,
  [
    cliBin(),
    'dev',
    '--host',
    HOST,
    '--no-browser',
    ...(args.some((arg) => arg === '--port' || arg === '-p' || arg.startsWith('--port='))
      ? []
      : ['--port', String(port)]),
    ...args,
  ],
  {
    env: { ...process.env, LANGGRAPH_CLI_NO_ANALYTICS: '1', BROWSER: 'none' },
    // Its own process group: one signal reaches the CLI, the server and the graph workers.
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  },
);
const group = child.pid;
if (group === undefined) fail('could not start the LangGraph dev server.');

/** @param {NodeJS.Signals | 0} signal */
function signalGroup(signal) {
  try {
    process.kill(-group, signal);
    return true;
  } catch {
    return false;
  }
}

let busyLate = false;
/** @param {NodeJS.WritableStream} out */
function relay(out) {
  let tail = '';
  return (chunk) => {
    out.write(chunk);
    // The port was free a moment ago; another process took it before the server listened.
    tail = (tail + chunk.toString()).slice(-4096);
    if (!busyLate && /EADDRINUSE/.test(tail)) {
      busyLate = true;
      signalGroup('SIGINT');
    }
  };
}
child.stdout.on('data', relay(process.stdout));
child.stderr.on('data', relay(process.stderr));

let received;
for (const signal of Object.keys(SIGNAL_EXIT)) {
  process.on(signal, () => {
    received ??= signal;
    signalGroup(signal);
  });
}
// If this process exits some other way, take the group along (synchronous: exit handlers are).
process.on('exit', () => signalGroup('SIGKILL'));

const [code, signal] = await new Promise((resolve) =>
  child.once('exit', (exitCode, exitSignal) => resolve([exitCode, exitSignal])),
);
// Graph workers may outlive the CLI by a moment; after 3 s they are stopped the hard way.
const deadline = Date.now() + 3_000;
while (signalGroup(0) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
signalGroup('SIGKILL');
if (busyLate) fail(busyPortMessage(port, true));
if (received !== undefined) process.exit(SIGNAL_EXIT[received]);
process.exit(code ?? 128 + (constants.signals[signal] ?? 0));
