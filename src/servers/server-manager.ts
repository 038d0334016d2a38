import type { NamedServerConfig } from '../config/server-schema.js';
import { AgentsErrorCode, ServerError, errorMessage } from '../errors.js';
import { canonicalJson } from '../mcp/fingerprint.js';
import { createManagedServer } from './managed-server.js';
import type { ManagedServer } from './managed-server.js';
import type { ManagedServerOptions } from './server-core.js';
import { describeServerTarget } from './connect.js';
import {
  ServerEventEmitter,
  type ServerEventMap,
  type ServerEventName,
  type ServerEventSource,
} from './server-events.js';
import { reapOrphanedServersOnce } from './orphan-reaper.js';
import { silentServerLogger } from './server-logger.js';

/** Options of {@link createServerManager}: defaults for every server it starts. */
export interface ServerManagerOptions extends Omit<ManagedServerOptions, 'overrides'> {
  /** Builds a managed server; tests and embedders may replace it. Default {@link createManagedServer}. */
  createServer?: (config: NamedServerConfig, options: ManagedServerOptions) => ManagedServer;
}

/**
 * What one `acquire()` holds: the started servers, in the order of the configs. `release()`
 * (idempotent) drops this lease's references; servers nobody holds any more are stopped.
 */
export interface ServerLease extends AsyncDisposable {
  readonly servers: readonly ManagedServer[];
  /** The server of this lease with that name. */
  get(name: string): ManagedServer | undefined;
  release(): Promise<void>;
}

/**
 * Starts MCP servers in parallel and shares them: each server starts once however many actors
 * acquire it, and stops when the last lease is released. Re-emits the lifecycle events of all
 * its servers. Owns processes: `close()` it (reverse start order, failures gathered into an
 * `AggregateError`).
 */
export interface ServerManager extends AsyncDisposable, ServerEventSource {
  /**
   * Starts (or joins) every server in `configs`, in parallel, and resolves once all are
   * initialized and listed. If any fails, the servers this call started are stopped again and
   * the first failure (a {@link ServerError}) is thrown. A name already running with a
   * different config throws CONFIG_INVALID.
   */
  acquire(
    configs: readonly NamedServerConfig[],
    options?: { signal?: AbortSignal },
  ): Promise<ServerLease>;
  /** A running (or starting) server by name. */
  get(name: string): ManagedServer | undefined;
  /** Every server the manager holds, in start order. */
  list(): ManagedServer[];
  /** How many leases hold the server. */
  references(name: string): number;
  /** Stops every server in reverse start order. Throws an AggregateError of the failures. */
  close(): Promise<void>;
}

interface Held {
  server: ManagedServer;
  configKey: string;
  references: number;
  started: Promise<void>;
  unsubscribe: () => void;
}

/**
 * Creates a server manager. Nothing starts until `acquire()`; the first `acquire()` first reaps
 * server process groups left running by a host that was killed (SIGKILL) since its pids were
 * recorded in `options.runDir` (see `reapOrphanedServers`), once per process.
 */
export function createServerManager(options: ServerManagerOptions = {}): ServerManager {
  const logger = options.logger ?? silentServerLogger;
  const events = new ServerEventEmitter(logger);
  const held = new Map<string, Held>();
  const create = options.createServer ?? createManagedServer;
  let closed = false;
  let closing: Promise<void> | undefined;

  const forward = (server: ManagedServer): (() => void) => {
    const names: ServerEventName[] = [
      'server-start',
      'server-end',
      'server-restart',
      'tools-changed',
    ];
    const offs = names.map((name) =>
      server.on(name, (event: ServerEventMap[typeof name]) => events.emit(name, event as never)),
    );
    return () => offs.forEach((off) => off());
  };

  const stop = async (servers: Held[]): Promise<unknown[]> => {
    const failures: unknown[] = [];
    // Reverse start order: later servers may depend on earlier ones.
    for (const entry of [...servers].reverse()) {
      try {
        await entry.server.close();
      } catch (error) {
        failures.push(error);
      } finally {
        entry.unsubscribe();
      }
    }
    return failures;
  };

  const releaseNames = async (names: readonly string[]): Promise<void> => {
    const toStop: Held[] = [];
    for (const name of names) {
      const entry = held.get(name);
      if (!entry) continue;
      entry.references -= 1;
      if (entry.references <= 0) {
        held.delete(name);
        toStop.push(entry);
      }
    }
    const failures = await stop(toStop);
    if (failures.length > 0) {
      throw new AggregateError(
        failures,
        `Stopping ${failures.length} server(s) failed: ${failures.map(errorMessage).join('; ')}`,
      );
    }
  };

  const manager: ServerManager = {
    async acquire(configs, acquireOptions = {}) {
      if (closed) {
        throw new ServerError(
          AgentsErrorCode.Closed,
          'The server manager is closed; create a new one.',
          {
            serverName: configs[0]?.name ?? '',
            phase: 'spawn',
          },
        );
      }
      acquireOptions.signal?.throwIfAborted();
      if (options.runDir !== null) {
        await reapOrphanedServersOnce({
          ...(options.runDir === undefined ? {} : { runDir: options.runDir }),
          logger,
        });
      }
      const names: string[] = [];
      const seen = new Set<string>();
      for (const config of configs) {
        if (seen.has(config.name)) continue;
        seen.add(config.name);
        // Equal for equal configs whatever the key order.
        const configKey = canonicalJson(config);
        const existing = held.get(config.name);
        if (existing && existing.configKey !== configKey) {
          // Undo the references this call took so far.
          await releaseNames(names).catch(() => undefined);
          throw new ServerError(
            AgentsErrorCode.ConfigInvalid,
            `Server "${config.name}" is already running with a different configuration; ` +
              `give the second one (${describeServerTarget(config)}) another name.`,
            { serverName: config.name, phase: 'spawn', target: describeServerTarget(config) },
          );
        }
        if (existing) {
          existing.references += 1;
        } else {
          const { createServer: _createServer, ...serverOptions } = options;
          const server = create(config, serverOptions);
          const entry: Held = {
            server,
            configKey,
            references: 1,
            started: server.start({ signal: acquireOptions.signal }),
            unsubscribe: forward(server),
          };
          entry.started.catch(() => undefined);
          held.set(config.name, entry);
        }
        names.push(config.name);
      }
      const results = await Promise.allSettled(
        names.map((name) => held.get(name)?.started ?? Promise.resolve()),
      );
      const failures = results.flatMap((result) =>
        result.status === 'rejected' ? [result.reason as unknown] : [],
      );
      if (failures.length > 0) {
        // Stop what this call started or joined, so a failing server never leaves siblings running.
        await releaseNames(names).catch((error: unknown) =>
          logger.error(`Cleanup after a failed acquire: ${errorMessage(error)}`),
        );
        for (const extra of failures.slice(1))
          logger.warn(`Another server also failed to start: ${errorMessage(extra)}`);
        throw failures[0];
      }
      const servers: ManagedServer[] = [];
      for (const name of names) {
        const entry = held.get(name);
        // close() ran while this call waited: it already stopped these servers.
        if (entry === undefined || closed) {
          await releaseNames(names).catch(() => undefined);
          throw new ServerError(
            AgentsErrorCode.Closed,
            `The server manager was closed while server "${name}" was starting; create a new one.`,
            { serverName: name, phase: 'initialize' },
          );
        }
        servers.push(entry.server);
      }
      let released: Promise<void> | undefined;
      const release = (): Promise<void> => {
        released ??= releaseNames(names);
        return released;
      };
      return {
        servers,
        get: (name: string) => servers.find((server) => server.name === name),
        release,
        [Symbol.asyncDispose]: release,
      };
    },

    get(name) {
      return held.get(name)?.server;
    },

    list() {
      return [...held.values()].map((entry) => entry.server);
    },

    references(name) {
      return held.get(name)?.references ?? 0;
    },

    on(event, listener) {
      return events.on(event, listener);
    },

    close() {
      closing ??= (async () => {
        closed = true;
        const all = [...held.values()];
        held.clear();
        const failures = await stop(all);
        events.clear();
        if (failures.length > 0) {
          throw new AggregateError(
            failures,
            `Closing ${failures.length} server(s) failed: ${failures.map(errorMessage).join('; ')}`,
          );
        }
      })();
      return closing;
    },

    async [Symbol.asyncDispose]() {
      await manager.close();
    },
  };
  return manager;
}
