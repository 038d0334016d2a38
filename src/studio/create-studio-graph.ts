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
import { mkdtempSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { createActor } from '../actors/actor.js';
import type { ActorInstance, CreateActorOptions } from '../actors/actor-types.js';
import type { ServerConfigInput } from '../config/server-schema.js';
import type { CreateSandboxOptions, RunSandbox } from '../sandbox/backend.js';
import type { ManagedServer } from '../servers/managed-server.js';
import type { ManagedServerOptions } from '../servers/server-core.js';
import { createAgentsRuntime, removeOnClose } from '../runtime/agents-runtime.js';
import { startStudioJanitor, type StudioJanitor } from './janitor.js';

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
  // What the graph runs in: git sandboxes, servers confined like an actor's (auto), no
  // checkpoints (the dev server brings its own). The janitor covers the process's end.
  const runtime = await createAgentsRuntime({
    owner: 'createStudioGraph',
    sandbox: { confine: 'auto' },
    checkpointer: false,
  });
  const context: StudioGraphContext = {
    janitor,
    async sandbox(options) {
      const sandbox = await runtime.createSandbox(options);
      janitor.trackSandbox(sandbox);
      return sandbox;
    },
    async server(config, options) {
      const server = await runtime.startServer(config, {
        ...options,
        beforeStart: (made, used) => {
          // A throwaway working folder the runtime made for it.
          if (options?.cwd === undefined && used.cwd !== undefined) janitor.trackPath(used.cwd);
          janitor.trackServers(made);
        },
      });
      // A start event that fired before the listener was attached is covered by the pid.
      if (server.pid !== undefined) janitor.trackProcessGroup(server.pid);
      return server;
    },
    async actor(options) {
      const actor = await createActor(options);
      runtime.defer(() => actor.deactivate());
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
      removeOnClose(runtime, dir);
      return dir;
    },
  };
  try {
    return await build(context);
  } catch (error) {
    // Newest first: a server started in a sandbox stops before the sandbox goes.
    await runtime.close().catch(() => undefined);
    janitor.dismiss();
    throw error;
  }
}
