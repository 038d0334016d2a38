/**
 * Starts and stops the LangGraph dev server (`langgraphjs dev` from `@langchain/langgraph-cli`)
 * on loopback for tests. Nothing leaves 127.0.0.1: CLI analytics, the browser and LangSmith
 * tracing are all switched off through the environment (see `shared/notes/studio.md` §2).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, readdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer, type AddressInfo } from 'node:net';
import * as path from 'node:path';

/** A running dev server; `stop()` is idempotent and also runs on `await using`. */
export interface DevServer extends AsyncDisposable {
  /** `http://127.0.0.1:PORT`. */
  readonly url: string;
  readonly port: number;
  /** Milliseconds from spawn until `/ok` answered. */
  readonly startupMs: number;
  /** Process id of the CLI; it leads its own process group. */
  readonly pid: number;
  /** Everything the server printed so far (stdout and stderr). */
  log(): string;
  /** Resident memory of the whole process tree, in bytes (Linux `/proc`). */
  rssBytes(): number;
  /** Process ids of the whole tree right now (for orphan checks). */
  treePids(): number[];
  /** SIGINT to the process group, SIGKILL after 8 s; resolves when the CLI has exited. */
  stop(): Promise<void>;
}

/** Options for {@link startDevServer}. */
export interface StartDevServerOptions {
  /** Project folder holding `langgraph.json` and `node_modules`. */
  cwd: string;
  /** Port on 127.0.0.1; a free one is picked when omitted. */
  port?: number;
  /** How long to wait for `/ok` (default 90 s: startup takes 3–7 s, more on a busy machine). */
  timeoutMs?: number;
  /** Delete `.langgraph_api/` (the server's persisted threads) first; default true. */
  fresh?: boolean;
  /** Extra environment for the server (and so for the graphs it loads). */
  env?: Record<string, string>;
}

/** Environment that keeps the dev server offline and quiet. */
export const OFFLINE_ENV: Readonly<Record<string, string>> = {
  // The CLI otherwise POSTs usage data to a hosted endpoint on every command.
  LANGGRAPH_CLI_NO_ANALYTICS: '1',
  BROWSER: 'none',
  // With tracing on, the server calls the LangSmith API at startup and traces every run.
  LANGSMITH_TRACING: 'false',
  LANGSMITH_TRACING_V2: 'false',
  LANGCHAIN_TRACING: 'false',
  LANGCHAIN_TRACING_V2: 'false',
  LANGCHAIN_CALLBACKS_BACKGROUND: 'false',
};

const DROPPED_ENV = [
  'LANGSMITH_API_KEY',
  'LANGCHAIN_API_KEY',
  'LANGSMITH_ENDPOINT',
  'LANGCHAIN_ENDPOINT',
  // vitest sets these for its workers; the graphs under the server are not tests.
  'VITEST',
  'VITEST_WORKER_ID',
  'VITEST_POOL_ID',
  'TEST',
  'NODE_ENV',
];

/** Asks the kernel for a free TCP port on 127.0.0.1. */
export async function freePort(): Promise<number> {
  return await new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** All pids under (and including) `root`, from `/proc`. */
export function processTree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // The command name may contain spaces and parentheses; fields resume after the last ')'.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const list = children.get(ppid) ?? [];
      list.push(Number(entry));
      children.set(ppid, list);
    } catch {
      // The process ended while we were reading.
    }
  }
  const out: number[] = [];
  const walk = (pid: number): void => {
    out.push(pid);
    for (const child of children.get(pid) ?? []) walk(child);
  };
  walk(root);
  return out;
}

/** True when a process with this pid exists (and is not a zombie). */
export function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

function rssOf(pid: number): number {
  try {
    const match = readFileSync(`/proc/${pid}/status`, 'utf8').match(/VmRSS:\s+(\d+) kB/);
    return match ? Number(match[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

function cliBin(cwd: string): string {
  // Resolve the CLI from the project and run it with node directly: npx would add an npm
  // process (~70 MiB) and another layer to signal.
  const require = createRequire(path.join(cwd, 'package.json'));
  const packageJsonPath = require.resolve('@langchain/langgraph-cli/package.json');
  const manifest: unknown = JSON.parse(readFileSync(packageJsonPath, 'utf8'));
  const bin =
    typeof manifest === 'object' && manifest !== null && 'bin' in manifest
      ? (manifest.bin as Record<string, unknown>)['langgraphjs']
      : undefined;
  if (typeof bin !== 'string') throw new Error(`no langgraphjs bin in ${packageJsonPath}`);
  return path.join(path.dirname(packageJsonPath), bin);
}

/**
 * Spawns `langgraphjs dev --host 127.0.0.1 --no-browser --no-reload` in its own process group
 * and waits until `GET /ok` answers. Fails fast when the CLI exits or the log shows a graph load
 * error (the server process dies on an import error but the CLI may stay up). If the calling
 * process exits without `stop()`, the whole group is SIGKILLed so nothing is left running.
 */
export async function startDevServer(options: StartDevServerOptions): Promise<DevServer> {
  const port = options.port ?? (await freePort());
  const host = '127.0.0.1';
  const url = `http://${host}:${port}`;
  if (options.fresh !== false) {
    rmSync(path.join(options.cwd, '.langgraph_api'), { recursive: true, force: true });
  }
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined) env[key] = value;
  for (const key of DROPPED_ENV) delete env[key];
  Object.assign(env, OFFLINE_ENV, options.env ?? {});

  const started = Date.now();
  const child: ChildProcess = spawn(
    process.execPath,
    [
      cliBin(options.cwd),
      'dev',
      '--port',
      String(port),
      '--host',
      host,
      '--no-browser',
      '--no-reload',
      '--config',
      path.join(options.cwd, 'langgraph.json'),
    ],
    { cwd: options.cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const pid = child.pid;
  if (pid === undefined) throw new Error('could not spawn the langgraph dev server');
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));

  let exited = false;
  const exitPromise = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const killGroup = (): void => {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  };
  process.once('exit', killGroup);
  void exitPromise.then(() => {
    exited = true;
    process.off('exit', killGroup);
  });

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      if (!exited) {
        try {
          process.kill(-pid, 'SIGINT');
        } catch {
          // Already gone.
        }
        const timer = setTimeout(killGroup, 8_000);
        await exitPromise;
        clearTimeout(timer);
      }
      // Children that outlived the CLI (the graph worker, MCP servers it spawned in other
      // groups are the graph's job) must not survive the test; give them a moment, then kill.
      const deadline = Date.now() + 3_000;
      while (Date.now() < deadline) {
        try {
          process.kill(-pid, 0);
        } catch {
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      killGroup();
    })();
    return stopping;
  };

  const deadline = started + (options.timeoutMs ?? 90_000);
  for (;;) {
    if (exited) throw new Error(`langgraph dev server exited early:\n${output}`);
    if (/Failed to|Error:|ERR_/.test(output) && !/Server running/.test(output)) {
      await stop();
      throw new Error(`langgraph dev server failed to load graphs:\n${output}`);
    }
    try {
      const response = await fetch(`${url}/ok`);
      if (response.ok) break;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(
        `langgraph dev server not ready after ${Date.now() - started} ms:\n${output}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const startupMs = Date.now() - started;
  return {
    url,
    port,
    startupMs,
    pid,
    log: () => output,
    rssBytes: () => processTree(pid).reduce((sum, each) => sum + rssOf(each), 0),
    treePids: () => processTree(pid),
    stop,
    [Symbol.asyncDispose]: stop,
  };
}
