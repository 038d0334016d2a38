/**
 * The one assembly of what agents run in: the sandbox backend, the OS confinement of stdio
 * servers and the checkpoint store, each chosen from its table by the config, plus the servers
 * and the live tool set made through them, and one disposal order for all of it. Actors, Studio
 * graphs, `agents serve` and the CLI thread commands all build their pieces here.
 */
import { rm } from 'node:fs/promises';
import type { BaseCheckpointSaver } from '@langchain/langgraph-checkpoint';
import type { Checkpointer, CheckpointBackend } from '../checkpoint/backend.js';
// The checkpoint table and the server schema are zod schemas: loaded on use, so a runtime that
// only reopens a sandbox (`agents sandbox diff`) loads no zod (issue 29).
import type { CheckpointerSettings } from '../checkpoint/backends.js';
import type { ThreadScope } from '../checkpoint/thread-namespace.js';
import type { NetworkSetting } from '../config/network-schema.js';
import type { ServerConfigInput } from '../config/server-schema.js';
import { AgentsError, AgentsErrorCode } from '../errors.js';
import type {
  CreateSandboxOptions,
  OpenSandboxOptions,
  ReopenedSandbox,
  RunSandbox,
  SandboxBackend,
} from '../sandbox/backend.js';
import { DEFAULT_SANDBOX_BACKEND, sandboxBackend as backendNamed } from '../sandbox/backends.js';
// The tool set and the server modules load the MCP SDK and LangChain: loaded on first use, so
// a command that only opens a sandbox (`agents sandbox diff`) starts fast.
import type { ToolSet, CreateToolSetOptions } from '../pipeline/tool-set.js';
import type { ConfineMode } from '../confinement/backend.js';
import type { ConfinementBackendSettings } from '../confinement/backends.js';
import type { Confinement } from '../confinement/confinement.js';
import { confinementScope, probeConfinement } from '../runtime/confinement-scope.js';
import { reportUnconfinedOnce, resolveConfinement } from '../confinement/confinement.js';
import type { ManagedServer } from '../servers/managed-server.js';
import type { ManagedServerOptions } from '../servers/server-core.js';
import type { ServerNetworkHook } from '../servers/network/server-network.js';
import type { ServerManager, ServerManagerOptions } from '../servers/server-manager.js';
import { createCleanupStack, type Disposer } from './cleanup-stack.js';
import { actorConfinement, type ActorConfinementOptions } from './confinement.js';

export { DEFAULT_SANDBOX_BACKEND };
export type { CheckpointerSettings };

/** What an {@link AgentsRuntime} is made from: the `sandbox:` and `checkpointer:` of a config. */
export interface AgentsRuntimeOptions {
  /** Who the runtime serves, for messages (`actor "coder"`, `createStudioGraph`). */
  owner: string;
  /** The config's `sandbox:` block: `backend` (default `git`), `confine`, `network`. */
  sandbox?:
    | {
        backend?: string;
        confine?: ConfineMode;
        network?: NetworkSetting;
        confinement?: ConfinementBackendSettings | undefined;
      }
    | undefined;
  /** Code options that win over `sandbox.confine` / `sandbox.network` (`createActor`'s). */
  confinement?: ActorConfinementOptions | undefined;
  /**
   * The config's `checkpointer:` (default sqlite), or a saver the caller made (it wins, and the
   * caller closes it). `false`: this runtime opens no checkpoints (Studio: the dev server brings
   * its own).
   */
  checkpointer?: CheckpointerSettings | BaseCheckpointSaver | false | undefined;
  /** The folder relative paths resolve against (the SQLite file). Default `process.cwd()`. */
  cwd?: string | undefined;
  /** Where warnings go (unconfined servers); default `process.emitWarning`. */
  onWarning?: ((message: string) => void) | undefined;
}

/** Where confined servers may write and what they may not see (see `confinementScope`). */
export interface ConfinementPlace {
  /** The only writable folder (the sandbox tree, or the project with the sandbox off). */
  root: string;
  /** The sandbox's container (store and records, hidden); absent with the sandbox off. */
  container?: string | undefined;
  /** The user's project folder (hidden behind the sandbox, or mounted at its own path). */
  projectDir?: string | undefined;
  /** The workspace folder (hidden). */
  workspaceRoot?: string | undefined;
  /** Per-server network (host lists through the proxy); see `actors/actor-network.ts`. */
  network?: { hook: ServerNetworkHook; cutsNetwork: boolean } | undefined;
}

/**
 * Sandbox backend, confinement, checkpoint store, servers and tool sets of one owner, made in
 * one place and disposed of in one order: {@link close} undoes everything made through it, last
 * made first (a server stops before the sandbox it runs in goes, a tool set stops following its
 * registry before the servers stop). Make one with {@link createAgentsRuntime}.
 */
export interface AgentsRuntime extends AsyncDisposable {
  readonly owner: string;
  /** The sandbox backend `sandbox.backend` named (`SANDBOX_BACKENDS`). */
  readonly sandboxBackend: SandboxBackend;
  /** The checkpoint store `checkpointer.type` named; undefined with a caller's saver or none. */
  readonly checkpointBackend: CheckpointBackend | undefined;
  /**
   * True when a thread cannot outlive this process: the sandbox backend keeps nothing on disk
   * (`memory`), or the checkpoints live in memory. Such a thread gets a temporary sandbox.
   */
  readonly ephemeral: boolean;
  /** The confinement mode in force (`createActor`'s option, else `sandbox.confine`, else auto). */
  readonly confineMode: ConfineMode;
  /**
   * A new sandbox from the backend; on {@link close} it is closed and removed, unless `keep()`
   * then says to keep it.
   */
  createSandbox(
    options: CreateSandboxOptions,
    disposal?: { keep?: () => boolean },
  ): Promise<RunSandbox>;
  /** Reopens a kept sandbox through the backend; {@link close} closes it and keeps it. */
  openSandbox(options: OpenSandboxOptions): Promise<ReopenedSandbox>;
  /**
   * The confinement of stdio servers working in `place` (resolved now: the probe runs once).
   * Says once per process when `auto` cannot confine; throws `CONFINEMENT_UNAVAILABLE` when
   * the mode is `required` and nothing confines here.
   */
  confine(place: ConfinementPlace): Confinement;
  /** A server manager; {@link close} closes it (stopping its servers). */
  serverManager(options: ServerManagerOptions): Promise<ServerManager>;
  /**
   * One MCP server, started; {@link close} stops it. Without `options.confinement` it is
   * confined like an actor's servers: in `options.cwd`, or (without one) in an empty throwaway
   * folder removed when it stops. `config` is as written in a `servers/*.yaml` file, with its
   * `name`; throws `CONFIG_INVALID` naming each problem.
   */
  startServer(
    config: ServerConfigInput & { name: string },
    options?: ManagedServerOptions & {
      signal?: AbortSignal;
      /**
       * Called with the server and the options it got (its `cwd`, a throwaway folder when none
       * was given) before it starts: a janitor tracks its process groups and folders.
       */
      beforeStart?: (server: ManagedServer, options: ManagedServerOptions) => void;
    },
  ): Promise<ManagedServer>;
  /**
   * Opens the checkpoint store (the config's, or `settings`); {@link close} closes it. Throws
   * `CONFIG_INVALID` when this runtime was made with a caller's saver or `checkpointer: false`
   * and no `settings` are given.
   */
  openCheckpointer(
    settings?: CheckpointerSettings,
    options?: { signal?: AbortSignal; threadScope?: ThreadScope },
  ): Promise<Checkpointer>;
  /**
   * The live, governed tools of `registry` through `pipeline` (see `createToolSet`); on
   * {@link close} the set stops following the registry.
   */
  toolSet(options: CreateToolSetOptions): Promise<ToolSet>;
  /** Adds a step of one's own to the disposal order (it runs before what was made earlier). */
  defer(dispose: Disposer): void;
  /** Things still to dispose of. */
  readonly size: number;
  /**
   * Disposes of everything made through it, last made first, even when a step fails (then
   * throws an `AggregateError` naming each failure). Idempotent once done; the runtime can be
   * used again afterwards (a re-activated actor). `what` names the step in that error.
   */
  close(what?: string): Promise<void>;
}

/** The sandbox backend called `name`, or `CONFIG_INVALID` naming the known ones. */
export function sandboxBackendNamed(name: string, owner: string): SandboxBackend {
  return backendNamed(name, owner);
}

/** A checkpoint store and its settings as the store's schema reads them (defaults filled). */
export interface ResolvedCheckpointStore {
  backend: CheckpointBackend;
  settings: { type: string };
}

/**
 * The checkpoint table as actors/, cli/ and studio/ use it: through the seam
 * (`CheckpointBackend`'s capabilities), never by store name. See {@link checkpointStores}.
 */
export interface CheckpointStores {
  /** Every store, in table order. */
  readonly backends: readonly CheckpointBackend[];
  /** The store of an actor without `checkpointer:`. */
  readonly defaultType: string;
  /** The stores whose settings are their type alone (a command-line flag can name them). */
  readonly typeOnly: readonly string[];
  /** The store called `type`; undefined when the table has none (a record from elsewhere). */
  named(type: string): CheckpointBackend | undefined;
  /** The store of `settings` and the settings as it reads them; `CONFIG_INVALID` when bad. */
  resolve(settings: { type: string }): ResolvedCheckpointStore;
}

/** The checkpoint table, loaded on use: its schemas are zod, which a fast command skips. */
export async function checkpointStores(): Promise<CheckpointStores> {
  const table = await import('../checkpoint/backends.js');
  const backends = Object.values(table.checkpointBackends) as CheckpointBackend[];
  return {
    backends,
    defaultType: table.DEFAULT_CHECKPOINTER_TYPE,
    typeOnly: table.typeOnlyCheckpointerTypes(),
    named: (type) => backends.find((backend) => backend.type === type),
    resolve: table.resolveCheckpointer,
  };
}

/**
 * Makes the runtime of one owner from its config: picks the sandbox backend
 * (`SANDBOX_BACKENDS`), the checkpoint store (`checkpointBackends`) and the confinement mode.
 * Nothing starts yet; throws `CONFIG_INVALID` for an unknown backend or bad checkpointer
 * settings, before anything is made.
 */
export async function createAgentsRuntime(options: AgentsRuntimeOptions): Promise<AgentsRuntime> {
  const { owner } = options;
  const sandboxBackend = sandboxBackendNamed(
    options.sandbox?.backend ?? DEFAULT_SANDBOX_BACKEND,
    owner,
  );
  const setting = options.checkpointer;
  const callerSaver = isSaver(setting) ? setting : undefined;
  const stores = setting === false ? undefined : await import('../checkpoint/backends.js');
  const settings: CheckpointerSettings | undefined =
    stores === undefined || callerSaver !== undefined
      ? undefined
      : ((setting as CheckpointerSettings | undefined) ?? {
          type: stores.DEFAULT_CHECKPOINTER_TYPE,
        });
  const resolved = settings === undefined ? undefined : stores?.resolveCheckpointer(settings);
  const ephemeralStore =
    callerSaver !== undefined
      ? ((await stores?.isEphemeralSaver(callerSaver)) ?? false)
      : (resolved?.backend.ephemeral ?? false);
  const confineMode = options.confinement?.mode ?? options.sandbox?.confine ?? 'auto';
  const cwd = options.cwd ?? process.cwd();
  const report = (message: string): void => {
    if (options.onWarning) options.onWarning(message);
    else process.emitWarning(message, 'AgentsConfinementWarning');
  };
  const stack = createCleanupStack();

  const runtime: AgentsRuntime = {
    owner,
    sandboxBackend,
    checkpointBackend: resolved?.backend,
    ephemeral: !sandboxBackend.persistent || ephemeralStore,
    confineMode,
    async createSandbox(sandboxOptions, disposal) {
      const sandbox = await sandboxBackend.create(sandboxOptions);
      stack.push(() => sandbox.close({ remove: disposal?.keep?.() !== true }));
      return sandbox;
    },
    async openSandbox(openOptions) {
      const sandbox = await sandboxBackend.open(openOptions);
      stack.push(() => sandbox.close({ remove: false }));
      return sandbox;
    },
    confine(place) {
      return actorConfinement({
        settings: {
          confine: confineMode,
          network: options.sandbox?.network ?? true,
          confinement: options.sandbox?.confinement,
        },
        options: options.confinement,
        ...(place.network === undefined ? {} : { network: place.network }),
        sandboxRoot: place.root,
        ...(place.container === undefined ? {} : { sandboxContainer: place.container }),
        projectDir: place.projectDir ?? place.root,
        ...(place.workspaceRoot === undefined ? {} : { workspaceRoot: place.workspaceRoot }),
        report,
      });
    },
    async serverManager(managerOptions) {
      const { createServerManager } = await import('../servers/server-manager.js');
      const manager = createServerManager(managerOptions);
      stack.push(() => manager.close());
      return manager;
    },
    async startServer(config, serverOptions = {}) {
      const { ServerConfigSchema } = await import('../config/server-schema.js');
      const parsed = ServerConfigSchema.safeParse(config);
      if (!parsed.success) {
        const problems = parsed.error.issues.map(
          (issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`,
        );
        throw new AgentsError(
          AgentsErrorCode.ConfigInvalid,
          `${owner}: server "${config.name}" has an invalid config; fix it and retry:\n${problems.join('\n')}`,
          { cause: parsed.error, details: { server: config.name, problems } },
        );
      }
      const { signal, beforeStart, ...rest } = serverOptions;
      let confined: ManagedServerOptions = rest;
      if (confined.confinement === undefined) {
        if (confined.cwd === undefined) {
          // No folder of its own: an empty throwaway one, its only writable place.
          const probe = await probeConfinement({ mode: confineMode, report });
          stack.push(() => probe.dispose());
          confined = { ...confined, cwd: probe.dir, confinement: probe.confinement };
        } else {
          const confinement = resolveConfinement(
            {
              mode: confineMode,
              backend: options.confinement?.backend ?? options.sandbox?.confinement,
            },
            confinementScope({ sandboxRoot: confined.cwd }),
          );
          reportUnconfinedOnce(confinement, report);
          confined = { ...confined, confinement };
        }
      }
      const { createManagedServer } = await import('../servers/managed-server.js');
      const server = createManagedServer({ ...parsed.data, name: config.name }, confined);
      stack.push(() => server.close());
      beforeStart?.(server, confined);
      await server.start(signal === undefined ? {} : { signal });
      return server;
    },
    async openCheckpointer(override, openOptions = {}) {
      const chosen = override ?? settings;
      if (chosen === undefined) {
        throw new AgentsError(
          AgentsErrorCode.ConfigInvalid,
          `${owner}: no checkpointer to open (${callerSaver === undefined ? 'made with none' : 'the caller passed a saver'}); set \`checkpointer\` in the config.`,
          { details: { problems: [] } },
        );
      }
      const { createCheckpointer } = await import('../checkpoint/backends.js');
      const checkpointer = await createCheckpointer(chosen, {
        cwd,
        ...(openOptions.signal === undefined ? {} : { signal: openOptions.signal }),
        ...(openOptions.threadScope === undefined ? {} : { threadScope: openOptions.threadScope }),
      });
      stack.push(() => checkpointer.close());
      return checkpointer;
    },
    async toolSet(toolOptions) {
      const { createToolSet } = await import('../pipeline/tool-set.js');
      const set = createToolSet(toolOptions);
      stack.push(() => set.close());
      return set;
    },
    defer(dispose) {
      stack.push(dispose);
    },
    get size() {
      return stack.size;
    },
    close: (what = `Closing the runtime of ${owner}`) => stack.unwind(what),
    [Symbol.asyncDispose]: () => stack.unwind(`Closing the runtime of ${owner}`),
  };
  return runtime;
}

/** Removes `dir` when the runtime closes (a temp folder made for it). */
export function removeOnClose(runtime: AgentsRuntime, dir: string): void {
  runtime.defer(() => rm(dir, { recursive: true, force: true }));
}

function isSaver(value: unknown): value is BaseCheckpointSaver {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { getTuple?: unknown }).getTuple === 'function'
  );
}
