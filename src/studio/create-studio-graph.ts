/**
 * `createStudioGraph()`: build a graph module for the LangGraph dev server (`langgraphjs dev`,
 * which Studio drives) whose sandboxes and MCP servers do not outlive the server.
 *
 * A graph module is loaded once when the dev server starts and is never told when it stops: the
 * server turns Ctrl-C into `process.exit`, and its `tsx` parent SIGKILLs a graph process that
 * is slow to acknowledge the signal. In-process cleanup therefore cannot be relied on; every
 * resource made through the context is registered with a detached janitor (see `janitor.ts`)
 * that stops the servers and removes the folders however the process ends.
 */
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { createActor } from '../actors/actor.js';
import type { ActorInstance, CreateActorOptions } from '../actors/actor-types.js';
import { ServerConfigSchema } from '../config/server-schema.js';
import type { ServerConfigInput } from '../config/server-schema.js';
import { AgentsError, AgentsErrorCode } from '../errors.js';
import type { RunSandbox } from '../sandbox/backend.js';
import { createSandbox, type CreateSandboxOptions } from '../sandbox/git/local-sandbox.js';
import { createManagedServer } from '../servers/managed-server.js';
import type { ManagedServer } from '../servers/managed-server.js';
import type { ManagedServerOptions } from '../servers/server-core.js';
import { confinementScope, probeConfinement } from '../servers/confinement-scope.js';
import { reportUnconfinedOnce, resolveConfinement } from '../servers/confinement.js';
import { startStudioJanitor, type StudioJanitor } from './janitor.js';

const warn = (message: string): void => process.emitWarning(message, 'AgentsConfinementWarning');

/** What a {@link createStudioGraph} build function gets: makers whose results are cleaned up. */
export interface StudioGraphContext {
  /** The janitor, to register resources made some other way (`trackPath`, `trackServers`...). */
  readonly janitor: StudioJanitor;
  /** `createSandbox(options)`; the sandbox's folder is removed when the dev server stops. */
  sandbox(options: CreateSandboxOptions): Promise<RunSandbox>;
  /**
   * `createManagedServer(config, options)`, started, confined like an actor's servers (in
   * `options.cwd`, else an empty throwaway folder) unless `options.confinement` is given; the
   * server's process group (every
   * restart's) is stopped when the dev server stops. `config` is a server config as written in a
   * `servers/*.yaml` file, with its `name` (e.g. `{ name: 'fs', command, args }`); throws
   * `CONFIG_INVALID` naming each problem.
   */
  server(
    config: ServerConfigInput & { name: string },
    options?: ManagedServerOptions,
  ): Promise<ManagedServer>;
  /**
   * `createActor(options)`, activated; its MCP servers are stopped when the dev server stops, and
   * its temporary sandbox is removed (a sandbox kept on purpose, with `threadId` or
   * `keepSandbox`, stays). Use `actor.graph` as the graph: the dev server swaps in its own
   * checkpointer.
   */
  actor(options: CreateActorOptions): Promise<ActorInstance>;
  /** A fresh temp folder (`os.tmpdir()/<prefix>XXXXXX`, real path), removed when the server stops. */
  tempDir(prefix?: string): string;
}

/**
 * Builds a graph for the dev server with cleanup that survives the server's way of stopping:
 *
 * ```ts
 * export const graph = await createStudioGraph(async (studio) => {
 *   const sandbox = await studio.sandbox({ source: process.cwd() });
 *   const server = await studio.server({ name: 'fs', transport: 'stdio', command, args: [sandbox.root] });
 *   return buildMyGraph(sandbox, server).compile(); // no checkpointer: the server brings its own
 * });
 * ```
 *
 * If `build` throws, everything made so far is closed before the error is rethrown (the dev
 * server then reports the module as failed to load). Otherwise nothing is closed in-process:
 * the janitor does it when the process ends, normally or not.
 */
export async function createStudioGraph<Graph>(
  build: (studio: StudioGraphContext) => Graph | Promise<Graph>,
): Promise<Graph> {
  const janitor = startStudioJanitor();
  const closers: Array<() => Promise<unknown>> = [];
  const context: StudioGraphContext = {
    janitor,
    async sandbox(options) {
      const sandbox = await createSandbox(options);
      janitor.trackSandbox(sandbox);
      closers.push(() => sandbox.close());
      return sandbox;
    },
    async server(config, options) {
      const parsed = ServerConfigSchema.safeParse(config);
      if (!parsed.success) {
        const problems = parsed.error.issues.map(
          (issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`,
        );
        throw new AgentsError(
          AgentsErrorCode.ConfigInvalid,
          `createStudioGraph: server "${config.name}" has an invalid config; fix it and reload:\n${problems.join('\n')}`,
          { cause: parsed.error, details: { server: config.name, problems } },
        );
      }
      // Confined like an actor's servers unless the caller chose: its working folder (or an
      // empty throwaway one) writable, the state folder, workspaces and home hidden.
      let confined = options ?? {};
      if (confined.confinement === undefined) {
        if (confined.cwd === undefined) {
          const probe = await probeConfinement({ mode: 'auto', report: warn });
          janitor.trackPath(probe.dir);
          closers.push(() => probe.dispose());
          confined = { ...confined, cwd: probe.dir, confinement: probe.confinement };
        } else {
          const confinement = resolveConfinement(
            { mode: 'auto' },
            confinementScope({ sandboxRoot: confined.cwd }),
          );
          reportUnconfinedOnce(confinement, warn);
          confined = { ...confined, confinement };
        }
      }
      const server = createManagedServer({ ...parsed.data, name: config.name }, confined);
      janitor.trackServers(server);
      closers.push(() => server.close());
      await server.start();
      // A start event that fired before the listener was attached is covered by the pid.
      if (server.pid !== undefined) janitor.trackProcessGroup(server.pid);
      return server;
    },
    async actor(options) {
      const actor = await createActor(options);
      closers.push(() => actor.deactivate());
      await actor.activate();
      const servers = actor.servers();
      janitor.trackServers(
        servers,
        servers.names().map((name) => servers.pid(name)),
      );
      const container = (actor.sandbox as Partial<RunSandbox> | undefined)?.container;
      const kept = options.threadId !== undefined || options.keepSandbox === true;
      if (container !== undefined && !kept) janitor.trackSandbox({ container });
      return actor;
    },
    tempDir(prefix = 'agents-studio-') {
      const dir = realpathSync(mkdtempSync(path.join(tmpdir(), prefix)));
      janitor.trackPath(dir);
      closers.push(async () => rmSync(dir, { recursive: true, force: true }));
      return dir;
    },
  };
  try {
    return await build(context);
  } catch (error) {
    // Newest first: a server started in a sandbox stops before the sandbox goes.
    for (const close of closers.reverse()) await close().catch(() => undefined);
    janitor.dismiss();
    throw error;
  }
}
