import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { join } from 'node:path';
import type { StructuredTool } from '@langchain/core/tools';
import type { Actor as ActorConfig } from '../config/actor-schema.js';
import { AgentsError, AgentsErrorCode } from '../errors.js';
import type { Checkpointer } from '../checkpoint/backend.js';
import { createInFlightCalls } from '../pipeline/in-flight.js';
import type { InFlightCalls } from '../pipeline/in-flight.js';
import type { ToolPipeline } from '../pipeline/tool-pipeline.js';
import { createAuditLog } from '../policy/audit-log.js';
import { DEFAULT_PIN_FILE } from '../policy/pins.js';
import type { Policy } from '../config/policy-schema.js';
import { createSkillRegistry } from '../skills/skill-registry.js';
import type { SkillPlan } from '../skills/skill-plan.js';
import type { SkillRegistry } from '../skills/skill-registry.js';
import type { RunSandbox } from '../sandbox/backend.js';
import { createPathMap } from '../sandbox/path-map.js';
import type { ServerLease, ServerManager } from '../servers/server-manager.js';
import type { SkillActivation } from '../skills/skill-activation.js';
import type { WorkspaceStore } from '../workspace/workspace-types.js';
import {
  refuseListsOnForeignManager,
  startActorNetwork,
  type ActorNetwork,
} from './actor-network.js';
import type { ActorConfinement } from '../runtime/confinement.js';
import type { AgentsRuntime } from '../runtime/agents-runtime.js';
import { readOnlyAllowedCalls } from './call-grouping.js';
import { compileActorGraph } from './actor-graph.js';
import { openActorStore } from './task-store.js';
import { projectIdOf } from './project-id.js';
import { withHeadCheck } from '../thread/head-check.js';
import type { RunBudgets } from './run-budget.js';
import type { ActorGraph } from './actor-graph.js';
import { createActorPipeline } from './actor-pipeline.js';
import { openActorSandbox } from './actor-sandbox.js';
import { refuseForeignThread } from './foreign-thread.js';
import { sandboxBaseOptions } from './sandbox-base-options.js';
import type { ActorSandbox } from './actor-sandbox.js';
import type { ActivationStep, CreateActorOptions } from './actor-types.js';
import { describeServerStart } from '../servers/server-start-line.js';
import { settleReopenedThread } from './reopened-thread.js';
import { openSharedThread, resolveSharedRemote, sharedThreadScope } from './shared-thread.js';
import type { SharedThread } from './shared-thread.js';
import type { Transport } from '@modelcontextprotocol/client';
import type { NamedServerConfig } from '../config/server-schema.js';
import { createRecordingTransport } from '../replay/recording-transport.js';

/** How long a stop waits for running tool calls after stopping the servers. */
const IN_FLIGHT_GRACE_MS = 30_000;

/** Everything an actor's start needs to know (fixed by `createActor`). */
export interface ActorStartSpec {
  name: string;
  config: ActorConfig & { name: string };
  store: WorkspaceStore;
  plan: SkillPlan;
  policy: Policy;
  options: CreateActorOptions;
  activation: SkillActivation;
  auditFile: string;
  maxTurns: number;
  /** Tool-call and time budgets of each run. */
  budgets?: RunBudgets;
  /** The chat model, made on first use. */
  model: () => Promise<BaseChatModel>;
  /**
   * Asked when the sandbox is disposed: keep it (true) or remove it. A failed start and a stop
   * share the disposer, so the answer depends on how far the actor got.
   */
  keepSandbox: (opened: ActorSandbox) => boolean;
  /** Shows the slow steps (see `ActivateOptions.step`). */
  step?: ActivationStep;
}

/** What an active actor holds. */
export interface ActiveActor {
  sandbox: ActorSandbox | undefined;
  confinement: ActorConfinement | undefined;
  manager: ServerManager;
  registry: SkillRegistry;
  pipeline: ToolPipeline;
  tools: StructuredTool[];
  graph: ActorGraph;
}

/**
 * Starts an actor in named steps: sandbox → servers and checkpointer → registry → audit log →
 * tool pipeline → graph (→ a thread's sandbox settled with its checkpoints: reopened-thread.ts).
 * Every piece is made through `runtime` (the backends its config chose) or handed to it once it
 * has succeeded; the caller closes the runtime when a step throws (a failed start) and again on
 * deactivate, so both undo exactly what was done, in reverse. The last step handed over stops
 * the servers first and then waits for running calls, so a stop ends calls that wait on a
 * server before closing what they write to.
 */
export async function startActor(
  spec: ActorStartSpec,
  runtime: AgentsRuntime,
  signal: AbortSignal | undefined,
): Promise<ActiveActor> {
  signal?.throwIfAborted();
  const step: ActivationStep = spec.step ?? ((_text, work) => work());
  const opened = await step(
    `preparing the sandbox (a private copy of ${spec.store.projectDir})`,
    () => openSandbox(spec, runtime, signal),
  );
  const sandbox = opened?.sandbox;
  const root = sandbox?.root ?? spec.store.projectDir;
  const servers = await step(
    spec.plan.servers.length === 0
      ? 'opening the checkpointer'
      : `starting ${spec.plan.servers.map((server) => describeServerStart(server)).join(', ')}`,
    () => startServers(spec, runtime, root, sandbox, signal),
  );
  const paths = sandbox?.paths ?? createPathMap(root);
  const registry = await createSkillRegistry({
    plan: spec.plan,
    servers: new Map((servers.lease?.servers ?? []).map((server) => [server.name, server])),
    paths: () => paths,
    projectDir: spec.store.projectDir,
    activation: spec.activation,
    ...(spec.options.onWarning ? { onWarning: spec.options.onWarning } : {}),
  });
  runtime.defer(() => registry.close());
  const auditLog = createAuditLog(spec.auditFile);
  runtime.defer(() => auditLog.close());
  // Network decisions (the proxy's, and those made while servers started) go to the audit log.
  servers.network?.setAudit((entry) => void auditLog.append(entry).catch(() => undefined));

  const inFlight = createInFlightCalls();
  const pipeline = await createActorPipeline({
    actor: spec.name,
    config: spec.config,
    store: spec.store,
    plan: spec.plan,
    policy: spec.policy,
    registry,
    activation: spec.activation,
    auditLog,
    sandbox,
    root,
    model: spec.model,
    // Outermost: a stop waits for every running call before closing the audit log.
    outer: [
      inFlight.middleware,
      ...(servers.network === undefined ? [] : [servers.network.calls]),
      ...(spec.options.middleware ?? []),
      // A recorded run's file side: each call's change set, decision and tree (docs/replay.md).
      ...(spec.options.record === undefined ? [] : [spec.options.record.files.middleware]),
    ],
  });
  // The live, governed tools: they follow the registry, every call runs through the pipeline.
  const toolSet = await runtime.toolSet({ registry, pipeline });

  const plainSaver = spec.options.checkpointer ?? servers.checkpointer?.saver;
  // With a shared store, checkpoint writes wait until the snapshots they name are pushed.
  // A checkpoint whose head is not a snapshot its own step recorded is refused (head-check.ts).
  const checkedSaver = plainSaver && withHeadCheck(plainSaver);
  const saver = checkedSaver && (opened?.shared?.saver(checkedSaver) ?? checkedSaver);
  if (!saver) {
    throw new AgentsError(
      AgentsErrorCode.ConfigInvalid,
      `Actor "${spec.name}" has no checkpointer; set \`checkpointer\` in its config or pass options.checkpointer.`,
      { details: { problems: [] } },
    );
  }
  // The graph's store, where a call that became an MCP task is noted (issue 38, item 11).
  const taskStore = await openActorStore(
    {
      backend: spec.options.checkpointer ? undefined : runtime.checkpointBackend,
      settings: spec.config.checkpointer,
      projectDir: spec.store.projectDir,
    },
    { project: await projectIdOf(spec.store.projectDir), actor: spec.name },
  );
  runtime.defer(() => taskStore.close());
  const compiled = compileActorGraph({
    name: spec.name,
    instructions: spec.config.instructions,
    maxTurns: spec.maxTurns,
    budgets: spec.budgets,
    model: spec.model,
    toolSet,
    sandbox,
    checkpointer: saver,
    store: taskStore.store,
    // A caller's own middleware may pause in ways a group cannot defer: no grouping then.
    ...((spec.options.middleware?.length ?? 0) > 0
      ? {}
      : {
          group: readOnlyAllowedCalls(toolSet.tools, spec.policy, servers.network?.asksAboutHosts),
        }),
  });
  runtime.defer(() => compiled.unsubscribe());

  await settleReopenedThread({
    actor: spec.name,
    opened,
    threadId: spec.options.threadId,
    graph: compiled.graph,
    auditLog,
    signal,
    onWarning: spec.options.onWarning,
  });
  runtime.defer(() => stopServersThenWait(spec, servers, inFlight));
  return {
    sandbox: opened,
    confinement: servers.confinement,
    manager: servers.manager,
    registry,
    pipeline,
    tools: compiled.tools,
    graph: compiled.graph,
  };
}

/**
 * Step 1: the sandbox (when enabled): the thread's own, or a temporary one. A thread first gets
 * what lets it move between workers (`openSharedThread`: the Postgres lease, the shared
 * snapshot store), released after the sandbox closes.
 */
async function openSandbox(
  spec: ActorStartSpec,
  runtime: AgentsRuntime,
  signal: AbortSignal | undefined,
): Promise<(ActorSandbox & { shared: SharedThread | undefined }) | undefined> {
  const settings = spec.config.sandbox;
  // With an ephemeral runtime (memory checkpoints or a memory sandbox) the thread dies with the
  // process: a temporary sandbox.
  const threadId = runtime.ephemeral ? undefined : spec.options.threadId;
  const shared =
    threadId === undefined
      ? undefined
      : await openSharedThread({
          projectDir: spec.store.projectDir,
          actor: spec.name,
          threadId,
          checkpointer: spec.options.checkpointer ? undefined : spec.config.checkpointer,
          sandboxBackend: runtime.sandboxBackend,
          remote: settings.enabled
            ? resolveSharedRemote(
                (spec.options.snapshots ?? spec.config.snapshots)?.remote,
                (path) => spec.store.resolvePath(path),
              )
            : undefined,
          ...(signal ? { signal } : {}),
        });
  if (shared) runtime.defer(() => shared.close());
  // Under the lease, before a new thread's sandbox is made: is the id another's thread?
  if (shared?.lease !== undefined && threadId !== undefined)
    await refuseForeignThread({
      checkpointer: spec.config.checkpointer,
      projectDir: spec.store.projectDir,
      workspaceRoot: spec.store.root,
      actor: spec.name,
      threadId,
      ...(spec.options.onWarning ? { warn: spec.options.onWarning } : {}),
    });
  if (!settings.enabled) return undefined;
  const opened = await openActorSandbox({
    backend: runtime.sandboxBackend,
    store: spec.store,
    actor: spec.name,
    settings,
    threadId,
    baseDir: spec.options.sandboxBaseDir,
    base: sandboxBaseOptions(settings, spec.options),
    shared,
    signal,
  });
  runtime.defer(() => opened.dispose(!spec.keepSandbox(opened)));
  return Object.assign(opened, { shared });
}

interface StartedServers {
  manager: ServerManager;
  ownsManager: boolean;
  confinement: ActorConfinement | undefined;
  network: ActorNetwork | undefined;
  lease: ServerLease | undefined;
  checkpointer: Checkpointer | undefined;
}

/** Step 2: the skills' servers (in parallel) and, at the same time, the checkpointer. */
async function startServers(
  spec: ActorStartSpec,
  runtime: AgentsRuntime,
  root: string,
  sandbox: RunSandbox | undefined,
  signal: AbortSignal | undefined,
): Promise<StartedServers> {
  const { options, store } = spec;
  const ownsManager = options.serverManager === undefined;
  // A recorded run writes its sandbox as `.`: a cassette holds no machine paths.
  const recorder = options.record;
  recorder?.addPathAlias({ path: root, as: '.' });
  if (sandbox !== undefined) recorder?.files.attachSandbox(sandbox);
  // The proxy (for servers with host lists) runs before any server starts, and stops after.
  const network = ownsManager
    ? await startActorNetwork({
        actor: spec.name,
        setting: options.confinement?.network ?? spec.config.sandbox.network,
        servers: spec.plan.servers,
        ...(options.confinement?.proxy === undefined ? {} : { options: options.confinement.proxy }),
        rules: spec.policy.network,
        pinFile: join(store.root, DEFAULT_PIN_FILE),
      })
    : undefined;
  if (network) runtime.defer(() => network.close());
  if (!ownsManager) {
    refuseListsOnForeignManager(
      spec.name,
      options.confinement?.network ?? spec.config.sandbox.network,
      spec.plan.servers,
    );
  }
  const confinement = ownsManager
    ? runtime.confine({
        root,
        container: sandbox?.container,
        projectDir: sandbox?.source ?? store.projectDir,
        workspaceRoot: store.root,
        network,
      })
    : undefined;
  const manager =
    options.serverManager ??
    (await runtime.serverManager({
      cwd: root,
      roots: () => [root],
      ...(confinement ? { confinement } : {}),
      ...(options.logger ? { logger: options.logger } : {}),
      ...(options.forwardClientRequests === true ? { forwardClientRequests: true } : {}),
      ...(recorder === undefined
        ? {}
        : {
            wrapTransport: (transport: Transport, config: NamedServerConfig) =>
              createRecordingTransport(transport, { recorder, server: config.name }),
          }),
    }));
  const [leased, opened] = await Promise.allSettled([
    spec.plan.servers.length === 0
      ? Promise.resolve(undefined)
      : manager.acquire(spec.plan.servers, signal ? { signal } : {}),
    spec.options.checkpointer
      ? Promise.resolve(undefined)
      : sharedThreadScope(runtime.checkpointBackend, spec.store.projectDir, spec.name).then(
          (threadScope) =>
            runtime.openCheckpointer(undefined, {
              ...(signal ? { signal } : {}),
              ...(threadScope === undefined ? {} : { threadScope }),
            }),
        ),
  ]);
  // Either may have succeeded while the other failed: register what exists, then throw.
  const lease = leased.status === 'fulfilled' ? leased.value : undefined;
  const checkpointer = opened.status === 'fulfilled' ? opened.value : undefined;
  // The runtime closes the checkpointer it opened; the lease is handed to it here.
  if (lease) runtime.defer(() => lease.release());
  if (leased.status === 'rejected') throw leased.reason;
  if (opened.status === 'rejected') throw opened.reason;
  return { manager, ownsManager, confinement, network, lease, checkpointer };
}

/**
 * The first thing a stop does: stop the servers, so calls still waiting on one end now (each is
 * still snapshotted and audited), then wait for the calls. Their own disposers, further down
 * the stack, find them already stopped (release and close are idempotent).
 */
async function stopServersThenWait(
  spec: ActorStartSpec,
  servers: StartedServers,
  inFlight: InFlightCalls,
): Promise<void> {
  const failures: unknown[] = [];
  await servers.lease?.release().catch((error: unknown) => failures.push(error));
  if (servers.ownsManager)
    await servers.manager.close().catch((error: unknown) => failures.push(error));
  if (!(await inFlight.idle(IN_FLIGHT_GRACE_MS))) {
    spec.options.onWarning?.(
      `Actor "${spec.name}": ${inFlight.count} tool call(s) still running ${IN_FLIGHT_GRACE_MS / 1000} s after its servers stopped; closing anyway (their audit entries stay unfinished).`,
    );
  }
  if (failures.length > 0) throw failures.length === 1 ? failures[0] : new AggregateError(failures);
}
