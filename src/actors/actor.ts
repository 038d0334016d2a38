import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { AIMessage, HumanMessage, SystemMessage, ToolMessage } from '@langchain/core/messages';
import type { StructuredTool } from '@langchain/core/tools';
import {
  Command,
  END,
  MessagesDeltaValue,
  START,
  StateGraph,
  StateSchema,
} from '@langchain/langgraph';
import type { BaseCheckpointSaver } from '@langchain/langgraph';
import { MemorySaver } from '@langchain/langgraph';
import type { z } from 'zod';
import { ActorSchema } from '../config/schemas.js';
import type { Actor as ActorConfig } from '../config/schemas.js';
import { AgentsError, AgentsErrorCode, errorMessage } from '../errors.js';
import { toStructuredTool } from '../mcp/structured-tool.js';
import type { ToolProgressEvent } from '../mcp/structured-tool.js';
import { describeToolContent } from '../mcp/content.js';
import { createChangeTrackingMiddleware, findChangeRecord } from '../middleware/change-tracking.js';
import { createCheckpointer } from '../middleware/checkpointer.js';
import type { Checkpointer } from '../middleware/checkpointer.js';
import { createPathRewriteMiddleware } from '../middleware/path-rewrite.js';
import { sandboxDeltaStateFields } from '../middleware/state.js';
import { createTrackedToolNode, routeToolCallsPerTask } from '../middleware/tool-node.js';
import { composeMiddleware } from '../middleware/types.js';
import type { ToolCallHandler, ToolMiddleware } from '../middleware/types.js';
import { auditLogPath, createAuditLog, createAuditMiddleware } from '../policy/audit.js';
import type { AuditLog } from '../policy/audit.js';
import { createFileSpill, createOutputBudgetMiddleware } from '../policy/output-budget.js';
import type { Spill } from '../policy/output-budget.js';
import { settleKnownTools } from '../policy/known-tools.js';
import { createPinStore, DEFAULT_PIN_FILE } from '../policy/pins.js';
import { createPolicyMiddleware } from '../policy/policy-middleware.js';
import { parsePolicy } from '../policy/schema.js';
import type { Policy, PolicyInput } from '../policy/schema.js';
import { createSkillRegistry, planSkills } from '../registry/skill-registry.js';
import type { SkillPlan, SkillRegistry } from '../registry/skill-registry.js';
import type {
  ChangeRecord,
  ToolDescriptor,
  ToolEntry,
  ToolResult,
} from '../registry/tool-descriptor.js';
import { createSandbox } from '../sandbox/local-sandbox.js';
import type { LocalSandbox } from '../sandbox/local-sandbox.js';
import { createPathMap } from '../sandbox/path-map.js';
import type { SandboxPathMap } from '../sandbox/path-map.js';
import type { Sandbox } from '../sandbox/types.js';
import { createServerManager } from '../servers/server-manager.js';
import type { ServerLease, ServerManager } from '../servers/server-manager.js';
import type { ServerLogger } from '../servers/server-logger.js';
import type { ManagedServerStatus } from '../servers/managed-server.js';
import type { ServerEventSource } from '../servers/server-events.js';
import {
  ACTIVATE_SKILL_TOOL_ID,
  createAllowedToolsMiddleware,
  createSkillActivation,
  isToolAllowed,
} from '../skills/agent-skills.js';
import type { AgentSkill, SkillActivation } from '../skills/agent-skills.js';
import { createWorkspaceStore } from '../workspace/store.js';
import type { WorkspaceStore } from '../workspace/store.js';
import { pendingApprovalsOf } from './approvals.js';
import type { PendingApproval } from './approvals.js';
import { resolveChatModel } from './model.js';
import { findThreadSandboxes, openThreadSandbox, threadSandboxDir } from './thread-sandbox.js';
import { openSharedThread, resolveSharedRemote, syncSandboxToThread } from './shared-thread.js';
import type { SharedThread } from './shared-thread.js';
import { createInFlightCalls } from '../middleware/in-flight.js';
import type { InFlightCalls } from '../middleware/in-flight.js';
import { recordUnattributedChanges } from '../middleware/unattributed.js';
import {
  actorConfinement,
  type ActorConfinement,
  type ActorConfinementOptions,
} from './actor-confinement.js';
import {
  isValidMaxTurns,
  pauseAtTurnLimit,
  recursionLimitFor,
  turnLimitPauseOf,
  turnStateFields,
} from './turn-limit.js';
import type { TurnLimitPause } from './turn-limit.js';

/** An actor config as written (defaults optional), with its name. */
export type ActorConfigInput = z.input<typeof ActorSchema> & { name: string };

/** The snapshot settings of an actor's `sandbox:` block, as sandbox options. */
function snapshotSettings(settings: {
  maxFileBytes?: number | undefined;
  exclude?: string[] | undefined;
}): { maxFileBytes?: number; exclude?: readonly string[] } {
  return {
    ...(settings.maxFileBytes === undefined ? {} : { maxFileBytes: settings.maxFileBytes }),
    ...(settings.exclude === undefined ? {} : { exclude: settings.exclude }),
  };
}

/** Options for {@link createActor}. Give `config`, or `name` (read from the workspace). */
export interface CreateActorOptions {
  /** The actor's config; when absent it is read from `actors/NAME.yaml` in the workspace. */
  config?: ActorConfigInput;
  name?: string;
  /** Workspace folder or store (default `.agents` under the current directory). */
  workspace?: string | WorkspaceStore;
  /** A chat model instance, or a model string; wins over the config's `model`. */
  model?: BaseChatModel | string;
  /** Shared server manager; by default the actor makes its own (cwd = sandbox root). */
  serverManager?: ServerManager;
  /**
   * OS confinement of the stdio servers the actor starts (its own server manager only); each
   * field wins over the config's `sandbox.confine` / `sandbox.network`.
   */
  confinement?: ActorConfinementOptions;
  /** A checkpoint saver; wins over the config's `checkpointer`. */
  checkpointer?: BaseCheckpointSaver;
  /**
   * Shared snapshot store of a thread-bound actor; wins over the config's `snapshots`. See
   * README "Running on several machines".
   */
  snapshots?: { remote: string };
  /** Folder for run sandboxes (default: the project's folder of the per-user state folder, `agentsStateDir()`). */
  sandboxBaseDir?: string;
  /** Leave the sandbox folder in place on deactivate (to inspect or copy results). */
  keepSandbox?: boolean;
  /**
   * Binds the actor to one conversation thread, so its files can be rolled back later. On
   * `activate()` the actor opens that thread's own sandbox in the workspace's folder of the
   * per-user state folder (`threadSandboxDir`, outside the project): made on the thread's first
   * run, reopened on later runs and by later processes (same tree and snapshot store, continuing
   * from the latest snapshot), held with a run lock while active. `deactivate()` stops the servers but keeps the
   * sandbox, so `agents checkpoints|rollback|sandbox diff --thread` work after the run;
   * `agents sandbox remove --thread` (or `removeThreadSandbox`) deletes it. `run()` defaults to
   * this thread and refuses another one (the sandbox belongs to this thread).
   *
   * With a memory checkpointer the thread dies with the process, so a temporary sandbox is used
   * and removed on deactivate, as without `threadId`. Without `threadId`, every run of the
   * activation shares one temporary sandbox, removed on deactivate unless `keepSandbox`.
   */
  threadId?: string;
  /** Middleware placed outermost (outside the actor's own audit log). */
  middleware?: readonly ToolMiddleware[];
  /**
   * The safety policy; wins over the config's `policy:`. Without either, the actor uses the
   * default policy: mode `ask` (read-only tools run, every other call waits for approval).
   */
  policy?: PolicyInput;
  /** Audit file (default `<workspace>/audit.jsonl`). */
  auditFile?: string;
  /** Server stderr and lifecycle logs. */
  logger?: ServerLogger;
  /** Non-fatal problems: Agent Skill spec violations, tools that vanished on refresh. */
  onWarning?: (message: string) => void;
  /**
   * Offer the actor's MCP servers sampling and elicitation, forwarded to the MCP client behind
   * each served call (`agents serve` sets it). Default false: in a graph run nothing answers
   * them, so they are not declared. Ignored with a shared `serverManager`.
   */
  forwardClientRequests?: boolean;
  /**
   * Model turns one run may take; wins over the config's `maxTurns` (default 200). At the limit
   * the run pauses: {@link ActorInstance.run} yields a `turn-limit` event and ends, the thread
   * keeps every result, and `resume({ type: 'continue' }, { threadId })` goes on for up to
   * `maxTurns` more turns. Throws `INVALID_ARGUMENTS` unless a whole number from 1 to 100,000.
   */
  maxTurns?: number;
}

/** One thing that happened during {@link ActorInstance.run}, in order. */
export type ActorRunEvent =
  | { type: 'tool-call-start'; toolCallId: string; name: string; args: Record<string, unknown> }
  | {
      type: 'tool-call-end';
      toolCallId: string;
      name: string;
      isError: boolean;
      text: string;
      change?: ChangeRecord;
    }
  | { type: 'message'; text: string }
  /** A progress notification of a running tool call (MCP `notifications/progress`). */
  | {
      type: 'tool-progress';
      toolCallId: string;
      name: string;
      progress: number;
      total?: number;
      message?: string;
    }
  /** The run reached `maxTurns` and paused; resume with `{ type: 'continue' }` to go on. */
  | ({ type: 'turn-limit' } & Omit<TurnLimitPause, 'type'>)
  | {
      type: 'interrupt';
      /** The raw `__interrupt__` update (LangGraph `Interrupt` objects). */
      value: unknown;
      /** The approval requests among them (the run waits for an answer to each). */
      approvals?: PendingApproval[];
    };

export type { PendingApproval } from './approvals.js';
export { pendingApprovalsOf, toResumeValue } from './approvals.js';

/** Options for {@link ActorInstance.run}. */
export interface ActorRunOptions {
  /** Conversation thread (default: a new random one). */
  threadId?: string;
  signal?: AbortSignal;
}

function buildStateSchema() {
  // Delta channels: each message and change record is stored once, not in every checkpoint.
  return new StateSchema({
    messages: MessagesDeltaValue,
    ...sandboxDeltaStateFields,
    ...turnStateFields,
  });
}
/** The actor graph's state schema: messages plus the sandbox fields (`changeLog`, `sandboxHead`). */
export type ActorState = ReturnType<typeof buildStateSchema>;

function buildGraph(
  agent: (state: ActorState['State']) => Promise<{ messages: AIMessage[] }>,
  toolNode: ReturnType<typeof createTrackedToolNode>,
  checkpointer: BaseCheckpointSaver,
  maxTurns: number,
) {
  return (
    new StateGraph(buildStateSchema())
      .addNode('agent', agent)
      .addNode('tools', toolNode)
      .addEdge(START, 'agent')
      // One task per tool call: a call paused for approval re-runs alone on resume; its
      // siblings (allowed writes included) keep their saved results and never run twice.
      .addConditionalEdges('agent', routeToolCallsPerTask({ tools: 'tools', end: END }), [
        'tools',
        END,
      ])
      .addEdge('tools', 'agent')
      .compile({ checkpointer })
      // Also for callers of `actor.graph.invoke`: LangGraph's default (25 steps) is 12 turns.
      .withConfig({ recursionLimit: recursionLimitFor(maxTurns) })
  );
}
/** The compiled actor graph (agent node ⇄ tracked ToolNode). */
export type ActorGraph = ReturnType<typeof buildGraph>;
type ActorGraphInput = Parameters<ActorGraph['stream']>[0];

/**
 * The actor graph's shape (same nodes, edges and state channels) over a checkpointer, with no
 * model, tools or servers: enough to list a thread's checkpoints, read its state and fork it
 * with `updateState` (rollback), as `agents checkpoints|rollback` do in a later process. Running
 * it fails with `CLOSED`; activate the actor to run a thread.
 */
export function compileActorStateGraph(
  checkpointer: BaseCheckpointSaver,
  name: string,
): ActorGraph {
  const inert = async (): Promise<never> => {
    throw new AgentsError(
      AgentsErrorCode.Closed,
      `This graph of actor "${name}" only reads and forks thread state; activate the actor to run it.`,
      { details: { actor: name } },
    );
  };
  const graph = buildGraph(inert, createTrackedToolNode([]), checkpointer, 1);
  graph.name = name;
  return graph;
}

/**
 * An actor: skills + model + instructions + sandbox + checkpointer, as a LangGraph graph.
 * `activate()` starts its servers and sandbox; `deactivate()` stops everything (also via
 * `await using`).
 */
export interface ActorInstance extends AsyncDisposable {
  readonly name: string;
  /** The parsed config (defaults filled in). */
  readonly config: ActorConfig & { name: string };
  readonly active: boolean;
  /**
   * Starts the actor: sandbox (when enabled), its skills' servers (in parallel), the
   * checkpointer, then flattens the tools and compiles the graph. Idempotent while active.
   * On failure everything started is stopped again and the error (with its ADR-0027 code, or
   * `SERVER_START_FAILED`, `SANDBOX_FAILED`, ...) is thrown.
   */
  activate(options?: { signal?: AbortSignal }): Promise<void>;
  /**
   * Stops servers (reverse order), closes the checkpointer and removes the sandbox; a
   * thread-bound actor (`CreateActorOptions.threadId`) keeps its thread's sandbox. Idempotent.
   */
  deactivate(): Promise<void>;
  /** The current tools as LangChain StructuredTools (middleware applied). Active only. */
  tools(): StructuredTool[];
  /** The current flattened tool entries (descriptors with capabilities). Active only. */
  entries(): readonly ToolEntry[];
  /**
   * The middleware chain around every tool call (outermost first: yours, audit, allowed-tools,
   * policy, output budget, path rewrite, change tracking), for serving the same tools over MCP.
   * Active only. The policy asks through LangGraph `interrupt()` in a graph; outside one it asks
   * the approver bound with `runWithApprover` (the MCP server asks its client), and with none an
   * `ask` call is refused with a message saying so.
   */
  middleware(): readonly ToolMiddleware[];
  /** The parsed safety policy (the config's, or the default: mode `ask`). */
  readonly policy: Policy;
  /** The JSON-lines audit file every tool call is recorded in (`agents audit` reads it). */
  readonly auditFile: string;
  /** Calls `listener` whenever the flattened tool set changes; returns an unsubscribe function. Active only. */
  onToolsChanged(listener: () => void): () => void;
  /**
   * The status, pid and lifecycle events of the actor's MCP servers, e.g. to stop offering the
   * tools of a server that is down when serving them over MCP. Active only.
   */
  servers(): ActorServers;
  /** The compiled graph. Active only (throws `CLOSED` otherwise). */
  readonly graph: ActorGraph;
  /** The sandbox, when enabled and active. */
  readonly sandbox: Sandbox | undefined;
  /** How the actor's own stdio servers are confined, while active. */
  readonly confinement: ActorConfinement | undefined;
  /** Agent Skills loaded for this actor. Active only. */
  readonly agentSkills: readonly AgentSkill[];
  readonly activation: SkillActivation;
  /**
   * Runs one user input on a thread and yields tool calls, results and the answer as they
   * happen. Aborting `signal` stops the run (the actor stays active).
   */
  run(input: string, options?: ActorRunOptions): AsyncGenerator<ActorRunEvent, void, undefined>;
  /**
   * Resumes a thread paused for approval with `Command({ resume })` and yields its events like
   * {@link run}. `resume` is an `ApprovalResponse` (`{ type: 'approve' | 'edit' | 'reject', ... }`)
   * or, when several calls wait, a map from interrupt id to answer ({@link toResumeValue}).
   * `options.threadId` is required.
   */
  resume(
    resume: unknown,
    options: ActorRunOptions & { threadId: string },
  ): AsyncGenerator<ActorRunEvent, void, undefined>;
}

/** A read-only view of an active actor's MCP servers (see {@link ActorInstance.servers}). */
export interface ActorServers extends ServerEventSource {
  /** The server's status (`ready`, `restarting`, `failed`, ...), or undefined for an unknown name. */
  status(serverName: string): ManagedServerStatus | undefined;
  /** The process id of a running stdio server. */
  pid(serverName: string): number | undefined;
}

interface ActiveState {
  sandbox: LocalSandbox | undefined;
  confinement: ActorConfinement | undefined;
  manager: ServerManager;
  ownsManager: boolean;
  lease: ServerLease | undefined;
  checkpointer: Checkpointer | undefined;
  shared: SharedThread | undefined;
  registry: SkillRegistry;
  structured: StructuredTool[];
  middleware: ToolMiddleware[];
  graph: ActorGraph;
  auditLog: AuditLog;
  inFlight: InFlightCalls;
  unsubscribe: () => void;
}

/** How long deactivate waits for running tool calls after stopping the servers. */
const IN_FLIGHT_GRACE_MS = 30_000;

/**
 * Creates an actor from a config or from `actors/NAME.yaml`. Reads and checks the config and
 * its skills (throwing the ADR-0027 resolution errors that need no server: missing skill,
 * missing or disabled tool resource, unknown server); nothing starts until `activate()`. A model
 * given as a string is made on the first agent turn, so an actor whose model cannot be made
 * (no script file, provider package missing) still activates and serves its tools; its first
 * run throws the model's `CONFIG_INVALID` error.
 *
 * @example
 * await using actor = await createActor({ name: 'helper', workspace: '.agents' });
 * await actor.activate();
 * await actor.graph.invoke({ messages: [{ role: 'user', content: 'hi' }] }, { configurable: { thread_id: '1' } });
 */
export async function createActor(options: CreateActorOptions): Promise<ActorInstance> {
  const store =
    typeof options.workspace === 'object'
      ? options.workspace
      : createWorkspaceStore(options.workspace ?? '.agents');
  let config: ActorConfig & { name: string };
  if (options.config) {
    const parsed = ActorSchema.safeParse(options.config);
    if (!parsed.success) {
      throw new AgentsError(
        AgentsErrorCode.ConfigInvalid,
        `Actor config "${options.config.name}" is invalid; fix it and retry:\n${parsed.error.issues
          .map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`)
          .join('\n')}`,
        { cause: parsed.error, details: { problems: [] } },
      );
    }
    config = { ...parsed.data, name: options.config.name };
  } else if (options.name) {
    config = await store.get('actor', options.name);
  } else {
    throw new AgentsError(AgentsErrorCode.ConfigInvalid, 'createActor needs a config or a name.', {
      details: { problems: [] },
    });
  }
  if (options.maxTurns !== undefined && !isValidMaxTurns(options.maxTurns)) {
    throw new AgentsError(
      AgentsErrorCode.InvalidArguments,
      `maxTurns ${options.maxTurns} of actor "${config.name}" is not a whole number from 1 to 100,000; pass a smaller or positive whole number.`,
      { details: { actor: config.name, maxTurns: options.maxTurns } },
    );
  }
  const plan = await planSkills(store, config.skills);
  // No policy block means the default policy (mode `ask`), never "no policy".
  const policy = parsePolicy(
    options.policy ?? config.policy,
    options.policy !== undefined
      ? `the policy option of createActor (actor "${config.name}")`
      : options.config
        ? `the config of actor "${config.name}"`
        : store.file('actor', config.name),
  );
  const modelSpec = typeof options.model === 'string' ? options.model : config.model;
  const actorName = config.name;
  // Made on first use (the first agent turn), not here: serving an actor's tools over MCP or
  // reading its state never calls the model, so a missing script or provider package must not
  // stop them. A bad model still fails its first run, with the same error.
  const model: ModelSource =
    typeof options.model === 'object'
      ? options.model
      : () =>
          resolveChatModel(modelSpec, {
            resolvePath: (path) => store.resolvePath(path),
            defaultScript: `${store.dir('actor')}/${actorName}.script.yaml`,
          });
  return new LocalActor(config, store, plan, model, policy, options);
}

/** A chat model, or how to make one on first use. */
type ModelSource = BaseChatModel | (() => Promise<BaseChatModel>);

class LocalActor implements ActorInstance {
  readonly activation = createSkillActivation();
  private state: ActiveState | undefined;
  private activating: Promise<void> | undefined;
  private resolvingModel: Promise<BaseChatModel> | undefined;
  /** Decided at activation: a thread's sandbox (or `keepSandbox`) outlives the activation. */
  private keepSandboxOnDeactivate = false;

  constructor(
    readonly config: ActorConfig & { name: string },
    private readonly store: WorkspaceStore,
    private readonly plan: SkillPlan,
    private readonly modelSource: ModelSource,
    readonly policy: Policy,
    private readonly options: CreateActorOptions,
  ) {}

  get auditFile(): string {
    return this.options.auditFile ?? auditLogPath(this.store.root);
  }

  get name(): string {
    return this.config.name;
  }

  /** Model turns per run (option over config). */
  private get maxTurns(): number {
    return this.options.maxTurns ?? this.config.maxTurns;
  }

  get active(): boolean {
    return this.state !== undefined;
  }

  get graph(): ActorGraph {
    return this.require().graph;
  }

  get sandbox(): Sandbox | undefined {
    return this.state?.sandbox;
  }

  get confinement(): ActorConfinement | undefined {
    return this.state?.confinement;
  }

  get agentSkills(): readonly AgentSkill[] {
    return this.require().registry.agentSkills;
  }

  tools(): StructuredTool[] {
    return [...this.require().structured];
  }

  entries(): readonly ToolEntry[] {
    return this.require().registry.entries();
  }

  middleware(): readonly ToolMiddleware[] {
    return [...this.require().middleware];
  }

  onToolsChanged(listener: () => void): () => void {
    return this.require().registry.on('change', () => listener());
  }

  servers(): ActorServers {
    const { manager } = this.require();
    return {
      status: (serverName) => manager.get(serverName)?.status,
      pid: (serverName) => manager.get(serverName)?.pid,
      on: (event, listener) => manager.on(event, listener),
    };
  }

  /** The chat model, made on first use; a failed attempt is retried on the next turn. */
  private model(): Promise<BaseChatModel> {
    if (typeof this.modelSource !== 'function') return Promise.resolve(this.modelSource);
    this.resolvingModel ??= this.modelSource().catch((error: unknown) => {
      this.resolvingModel = undefined;
      throw error;
    });
    return this.resolvingModel;
  }

  activate(options: { signal?: AbortSignal } = {}): Promise<void> {
    if (this.state) return Promise.resolve();
    this.activating ??= this.start(options.signal).finally(() => {
      this.activating = undefined;
    });
    return this.activating;
  }

  private async start(signal: AbortSignal | undefined): Promise<void> {
    signal?.throwIfAborted();
    const cleanup: Array<() => Promise<void>> = [];
    try {
      const sandboxSettings = this.config.sandbox;
      let sandbox: LocalSandbox | undefined;
      let reopened = false;
      const threadId = this.options.threadId;
      const memoryCheckpoints = this.options.checkpointer
        ? this.options.checkpointer instanceof MemorySaver
        : this.config.checkpointer.type === 'memory';
      this.keepSandboxOnDeactivate = this.options.keepSandbox === true;
      // Across workers: the Postgres lease and the shared snapshot store (shared-thread.ts).
      const shared =
        threadId === undefined || memoryCheckpoints
          ? undefined
          : await openSharedThread({
              actor: this.name,
              threadId,
              checkpointer: this.options.checkpointer ? undefined : this.config.checkpointer,
              remote: sandboxSettings.enabled
                ? resolveSharedRemote(
                    (this.options.snapshots ?? this.config.snapshots)?.remote,
                    (path) => this.store.resolvePath(path),
                  )
                : undefined,
              ...(signal ? { signal } : {}),
            });
      if (shared) cleanup.push(() => shared.close());
      if (sandboxSettings.enabled && threadId !== undefined && !memoryCheckpoints) {
        await assertThreadOwner(this.store.root, this.name, threadId);
        const opened = await openThreadSandbox({
          workspaceRoot: this.store.root,
          actor: this.name,
          threadId,
          source: this.store.resolvePath(sandboxSettings.source),
          revision: sandboxSettings.revision,
          projectDir: this.store.projectDir,
          ...snapshotSettings(sandboxSettings),
          ...(signal ? { signal } : {}),
          // The lease replaces the local run lock: it holds the thread on every worker.
          lock: shared?.lease === undefined,
          ...(shared?.replica ? { replica: shared.replica } : {}),
        });
        sandbox = opened;
        reopened = opened.reopened;
        this.keepSandboxOnDeactivate = true;
        // A failed activation keeps a reopened sandbox (it holds the thread's history) and
        // removes one it just made, with its thread record.
        cleanup.push(async () => {
          if (opened.reopened) return opened.close({ remove: false });
          await opened.close({ remove: true });
          await rm(threadSandboxDir(this.store.root, this.name, threadId), {
            recursive: true,
            force: true,
          });
        });
        // Two actors that started the same new thread together both passed the check above:
        // the later record (then the larger name) backs out.
        if (!opened.reopened) await assertThreadOwner(this.store.root, this.name, threadId);
      } else if (sandboxSettings.enabled) {
        sandbox = await createSandbox({
          source: this.store.resolvePath(sandboxSettings.source),
          revision: sandboxSettings.revision,
          ...snapshotSettings(sandboxSettings),
          ...(this.options.sandboxBaseDir ? { baseDir: this.options.sandboxBaseDir } : {}),
          ...(signal ? { signal } : {}),
        });
        const made = sandbox;
        // Removed on a failed activation even with keepSandbox: there is no result to keep.
        cleanup.push(() => made.close());
      }
      const root = sandbox?.root ?? this.store.projectDir;
      const paths: SandboxPathMap = sandbox?.paths ?? createPathMap(root);

      const ownsManager = this.options.serverManager === undefined;
      const confinement = ownsManager
        ? actorConfinement({
            settings: sandboxSettings,
            options: this.options.confinement,
            sandboxRoot: root,
            projectDir: sandbox?.source ?? this.store.projectDir,
            workspaceRoot: this.store.root,
            report: (message) => {
              if (this.options.onWarning) this.options.onWarning(message);
              else process.emitWarning(message, 'AgentsConfinementWarning');
            },
          })
        : undefined;
      const manager =
        this.options.serverManager ??
        createServerManager({
          cwd: root,
          roots: () => [root],
          ...(confinement ? { confinement } : {}),
          ...(this.options.logger ? { logger: this.options.logger } : {}),
          ...(this.options.forwardClientRequests === true ? { forwardClientRequests: true } : {}),
        });
      if (ownsManager) cleanup.push(() => manager.close());

      const [leased, opened] = await Promise.allSettled([
        this.plan.servers.length === 0
          ? Promise.resolve(undefined)
          : manager.acquire(this.plan.servers, signal ? { signal } : {}),
        this.options.checkpointer
          ? Promise.resolve(undefined)
          : createCheckpointer(this.config.checkpointer, {
              cwd: this.store.projectDir,
              ...(signal ? { signal } : {}),
            }),
      ]);
      // Either may have succeeded while the other failed: register what exists, then throw.
      const lease = leased.status === 'fulfilled' ? leased.value : undefined;
      const checkpointer = opened.status === 'fulfilled' ? opened.value : undefined;
      if (lease) cleanup.push(() => lease.release());
      if (checkpointer) cleanup.push(() => checkpointer.close());
      if (leased.status === 'rejected') throw leased.reason;
      if (opened.status === 'rejected') throw opened.reason;

      const registry = await createSkillRegistry({
        plan: this.plan,
        servers: new Map((lease?.servers ?? []).map((server) => [server.name, server])),
        paths: () => paths,
        projectDir: this.store.projectDir,
        activation: this.activation,
        ...(this.options.onWarning ? { onWarning: this.options.onWarning } : {}),
      });
      cleanup.push(() => registry.close());

      const pins = await createPinStore(join(this.store.root, DEFAULT_PIN_FILE));
      const auditLog = createAuditLog(this.auditFile);
      cleanup.push(() => auditLog.close());
      // Tools listed later (tools/list_changed) start as `ask` in ask mode, and so do tools that
      // appeared during an earlier run and were never approved (the actor's known-tools list).
      const idsAtActivation = new Set(registry.entries().map((entry) => entry.descriptor.id));
      const newSinceLastRun = await settleKnownTools({
        workspaceRoot: this.store.root,
        actor: this.name,
        ids: idsAtActivation,
        pins,
      });
      const spill = this.spillFor(root, sandbox !== undefined);
      // The policy asks on every call; a descriptor's skill never changes, so scan the plan once
      // per descriptor (a refreshed tool brings a new descriptor object).
      const skills = new WeakMap<ToolDescriptor, string | undefined>();
      const skillOf = (descriptor: ToolDescriptor): string | undefined => {
        if (skills.has(descriptor)) return skills.get(descriptor);
        const skill = skillOfDescriptor(this.plan, descriptor);
        skills.set(descriptor, skill);
        return skill;
      };

      // Composed once: the innermost handler dispatches by id to the current entry, so a
      // refreshed tool set needs no recomposition. Outermost first: audit sees every refusal
      // and every other layer's record; the policy sits outside path rewriting so approval
      // previews show logical paths; the budget cuts what the model sees, after rewriting back.
      const inFlight = createInFlightCalls();
      const middleware: ToolMiddleware[] = [
        // Outermost: deactivate waits for every running call before closing the audit log.
        inFlight.middleware,
        ...(this.options.middleware ?? []),
        createAuditMiddleware({ log: auditLog, actor: this.name }),
        // allowed-tools refuses unlisted tools (its own matching, case-insensitive); the policy
        // gets only the entries that matched, so it adds the `Name(args)` → ask refinement and
        // never disagrees about which tools are listed.
        createAllowedToolsMiddleware(this.activation),
        createPolicyMiddleware({
          policy: this.policy,
          name: `actor "${this.name}"`,
          pins,
          skillOf,
          isAddedAtRuntime: (descriptor) =>
            !idsAtActivation.has(descriptor.id) || newSinceLastRun.has(descriptor.id),
          activeSkillAllowedTools: (request) => {
            if (request.descriptor.id === ACTIVATE_SKILL_TOOL_ID) return undefined;
            const allowed = this.activation.get(request.context.threadId)?.allowedTools;
            if (allowed === undefined) return undefined;
            return allowed
              .filter((entry) => isToolAllowed(request.descriptor, [entry]))
              .map((entry) => {
                const open = entry.indexOf('(');
                return open === -1
                  ? request.descriptor.id
                  : `${request.descriptor.id}${entry.slice(open)}`;
              });
          },
        }),
        createOutputBudgetMiddleware({
          ...(this.config.budget ?? {}),
          ...(spill === undefined ? {} : { spill }),
        }),
      ];
      if (sandbox) {
        middleware.push(createPathRewriteMiddleware(sandbox.paths));
        middleware.push(createChangeTrackingMiddleware(sandbox));
      }
      const handler: ToolCallHandler = composeMiddleware(
        middleware,
        (request): Promise<ToolResult> => {
          const entry = registry.get(request.descriptor.id);
          if (!entry) {
            return Promise.resolve({
              isError: true,
              content: [
                {
                  type: 'text',
                  text: `Tool "${request.descriptor.name}" is no longer available; use another tool.`,
                },
              ],
            });
          }
          return entry.execute(request.args, request.context);
        },
      );

      // ToolNode keeps the array it is given; refreshing its contents in place keeps the node
      // and the model's bound tools in step without rebuilding the graph.
      const structured: StructuredTool[] = registry
        .entries()
        .map((entry) => toStructuredTool(entry.descriptor, handler));
      // The model is bound once per tool-set version, not on every turn.
      let bound: ReturnType<NonNullable<BaseChatModel['bindTools']>> | undefined;
      const unsubscribe = registry.on('change', (event) => {
        bound = undefined;
        structured.splice(
          0,
          structured.length,
          ...event.entries.map((entry) => toStructuredTool(entry.descriptor, handler)),
        );
      });
      cleanup.push(async () => unsubscribe());
      const toolNode = createTrackedToolNode(structured, { ...(sandbox ? { sandbox } : {}) });
      const instructions = this.config.instructions;
      const maxTurns = this.maxTurns;
      const agent = async (state: ActorState['State']) => {
        // Before the model call: at the limit the run pauses here, every tool result saved.
        const runTurns = pauseAtTurnLimit(state.runTurns, maxTurns, this.name);
        const model = await this.model();
        if (typeof model.bindTools !== 'function') {
          throw new AgentsError(
            AgentsErrorCode.ConfigInvalid,
            `Model of actor "${this.name}" cannot call tools (no bindTools); choose a tool-calling model.`,
            { details: { problems: [] } },
          );
        }
        // Rebound after a tool-set change, so tools a server adds or removes show up next turn.
        bound ??= model.bindTools([...structured]);
        const messages =
          instructions === ''
            ? state.messages
            : [new SystemMessage(instructions), ...state.messages];
        const reply = await bound.invoke(messages);
        return { messages: [toAIMessage(reply)], runTurns };
      };
      const saver = this.options.checkpointer ?? checkpointer?.saver;
      if (!saver)
        throw new AgentsError(
          AgentsErrorCode.ConfigInvalid,
          `Actor "${this.name}" has no checkpointer; set \`checkpointer\` in its config or pass options.checkpointer.`,
          {
            details: { problems: [] },
          },
        );
      const graph = buildGraph(agent, toolNode, shared?.saver(saver) ?? saver, maxTurns);
      graph.name = this.name;
      if (sandbox !== undefined && threadId !== undefined && shared?.replica !== undefined) {
        const synced = await syncSandboxToThread({
          graph,
          threadId,
          sandbox,
          ...(signal ? { signal } : {}),
        });
        if (synced !== undefined && synced.safety !== synced.from) {
          this.options.onWarning?.(
            `Thread "${threadId}": this worker's files had changes no checkpoint recorded; the sandbox now holds the files of the thread's latest checkpoint (${synced.to}), and the old tree is kept in snapshot ${synced.safety}.`,
          );
        }
      }
      if (sandbox !== undefined && threadId !== undefined && reopened) {
        await this.recordUnattributed(graph, threadId, sandbox, auditLog, signal);
      }
      this.state = {
        sandbox,
        confinement:
          confinement === undefined
            ? undefined
            : {
                kind: confinement.kind,
                network: confinement.network,
                ...(confinement.reason === undefined ? {} : { reason: confinement.reason }),
              },
        manager,
        ownsManager,
        lease,
        checkpointer,
        shared,
        registry,
        structured,
        middleware,
        graph,
        auditLog,
        inFlight,
        unsubscribe,
      };
    } catch (error) {
      await runCleanup(cleanup);
      throw error;
    }
  }

  async deactivate(): Promise<void> {
    await this.activating?.catch(() => {});
    const state = this.state;
    if (!state) return;
    this.state = undefined;
    // In this order: the servers stop first, so calls still waiting on one end now (each is
    // still snapshotted and audited); then the calls are waited for; only then is what they
    // write to (registry, checkpointer, sandbox, audit log) closed.
    const steps: Array<() => Promise<void>> = [
      ...(state.lease ? [() => state.lease!.release()] : []),
      ...(state.ownsManager ? [() => state.manager.close()] : []),
      async () => {
        if (await state.inFlight.idle(IN_FLIGHT_GRACE_MS)) return;
        this.options.onWarning?.(
          `Actor "${this.name}": ${state.inFlight.count} tool call(s) still running ${IN_FLIGHT_GRACE_MS / 1000} s after its servers stopped; closing anyway (their audit entries stay unfinished).`,
        );
      },
      () => state.registry.close(),
      async () => state.unsubscribe(),
      ...(state.checkpointer ? [() => state.checkpointer!.close()] : []),
      ...(state.sandbox
        ? [() => state.sandbox!.close({ remove: !this.keepSandboxOnDeactivate })]
        : []),
      // After the sandbox: its last snapshots are pushed, then the thread's lease is released.
      ...(state.shared ? [() => state.shared!.close()] : []),
      () => state.auditLog.close(),
    ];
    // runCleanup runs its steps last first.
    await runCleanup(steps.reverse());
  }

  /**
   * On reopening a thread's sandbox: records what changed since the thread's last recorded
   * snapshot (a call killed mid-way) as its own change record, in the thread's state and the
   * audit log, so the next call is not credited with it.
   */
  private async recordUnattributed(
    graph: ActorGraph,
    threadId: string,
    sandbox: Sandbox,
    auditLog: AuditLog,
    signal: AbortSignal | undefined,
  ): Promise<void> {
    const found = await recordUnattributedChanges({
      graph,
      threadId,
      sandbox,
      ...(signal === undefined ? {} : { signal }),
    });
    if (found === undefined) return;
    const { record } = found;
    const paths = record.changed.map((change) => `${change.status} ${change.path}`);
    this.options.onWarning?.(
      `Thread "${threadId}" had changes no recorded tool call made (a call stopped before its snapshot?): ${paths.join(', ')}. Recorded as unattributed changes, snapshot ${record.snapshot}.`,
    );
    const unknown = { value: false, source: 'default' as const };
    await auditLog
      .append({
        time: new Date().toISOString(),
        event: 'unattributed-changes',
        actor: this.name,
        thread: threadId,
        toolId: record.toolId,
        toolName: 'unattributed changes',
        fingerprint: '',
        capabilities: {
          readOnly: unknown,
          writes: unknown,
          destructive: unknown,
          openWorld: unknown,
        },
        args: { changed: paths },
        durationMs: 0,
        snapshot: record.snapshot,
        changed: record.changed.length,
      })
      .catch((error: unknown) =>
        this.options.onWarning?.(`Audit log write failed: ${errorMessage(error)}`),
      );
  }

  /**
   * Where the output budget writes full results: a folder in the sandbox (the model's file
   * tools reach it by its logical path), or without a sandbox `<workspace>/output` when the
   * workspace lies inside the project; otherwise nothing is kept (the marker says so).
   */
  private spillFor(root: string, sandboxed: boolean): Spill | undefined {
    if (sandboxed) return createFileSpill(root);
    const inside = relative(root, this.store.root);
    if (inside === '' || inside.startsWith('..') || inside.includes(':')) return undefined;
    return createFileSpill(root, { dir: `${inside.split(sep).join('/')}/output` });
  }

  run(
    input: string,
    options: ActorRunOptions = {},
  ): AsyncGenerator<ActorRunEvent, void, undefined> {
    // A new input starts the turn count afresh.
    return this.stream({ messages: [new HumanMessage(input)], runTurns: 0 }, options);
  }

  resume(
    resume: unknown,
    options: ActorRunOptions & { threadId: string },
  ): AsyncGenerator<ActorRunEvent, void, undefined> {
    // The graph's Command type carries its state's update shape; a resume-only Command has none.
    return this.stream(new Command({ resume }) as ActorGraphInput, options);
  }

  private async *stream(
    input: ActorGraphInput,
    options: ActorRunOptions,
  ): AsyncGenerator<ActorRunEvent, void, undefined> {
    const { graph } = this.require();
    const threadId = this.threadFor(options.threadId);
    const config = {
      configurable: { thread_id: threadId },
      // `custom` carries the tools' progress notifications while a call runs.
      streamMode: ['updates' as const, 'custom' as const],
      ...(options.signal ? { signal: options.signal } : {}),
    };
    const stream = await graph.stream(input, config);
    for await (const [mode, chunk] of stream as AsyncIterable<[string, unknown]>) {
      if (mode === 'custom') {
        const progress = toolProgressOf(chunk);
        if (progress) yield progress;
        continue;
      }
      for (const [node, update] of Object.entries(chunk as Record<string, unknown>)) {
        if (node === '__interrupt__') {
          const limit = turnLimitPauseOf(update);
          if (limit !== undefined) {
            yield { ...limit, type: 'turn-limit' };
            continue;
          }
          const approvals = pendingApprovalsOf(update);
          yield {
            type: 'interrupt',
            value: update,
            ...(approvals.length > 0 ? { approvals } : {}),
          };
          continue;
        }
        const messages = messagesOf(update);
        for (const message of messages) {
          if (AIMessage.isInstance(message)) {
            for (const call of message.tool_calls ?? []) {
              yield {
                type: 'tool-call-start',
                toolCallId: call.id ?? '',
                name: call.name,
                args: call.args,
              };
            }
            const text = message.text;
            if (text !== '') yield { type: 'message', text };
          } else if (ToolMessage.isInstance(message)) {
            const change = findChangeRecord(message.artifact);
            yield {
              type: 'tool-call-end',
              toolCallId: message.tool_call_id,
              name: message.name ?? '',
              isError: message.status === 'error',
              // Images and audio as placeholders (`[image/png 12 KB]`), not dropped.
              text: describeToolContent(message.content),
              ...(change ? { change } : {}),
            };
          }
        }
      }
    }
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.deactivate();
  }

  /** The run's thread: the bound one (see `CreateActorOptions.threadId`), or given, or new. */
  private threadFor(requested: string | undefined): string {
    const bound = this.options.threadId;
    if (bound === undefined) return requested ?? randomUUID();
    if (requested !== undefined && requested !== bound) {
      throw new AgentsError(
        AgentsErrorCode.InvalidArguments,
        `Actor "${this.name}" is bound to thread "${bound}" (its sandbox belongs to that thread); create another actor with threadId "${requested}" to run that thread.`,
        { details: { actor: this.name, threadId: requested, boundThreadId: bound } },
      );
    }
    return bound;
  }

  private require(): ActiveState {
    if (!this.state) {
      throw new AgentsError(
        AgentsErrorCode.Closed,
        `Actor "${this.name}" is not active; call activate() first.`,
        { details: { actor: this.name } },
      );
    }
    return this.state;
  }
}

/** A tool's progress event from the custom stream (see `ToolProgressEvent`), if it is one. */
function toolProgressOf(
  chunk: unknown,
): Extract<ActorRunEvent, { type: 'tool-progress' }> | undefined {
  if (typeof chunk !== 'object' || chunk === null) return undefined;
  const event = chunk as Partial<ToolProgressEvent>;
  if (event.type !== 'tool-progress' || typeof event.progress !== 'number') return undefined;
  return {
    type: 'tool-progress',
    toolCallId: event.toolCallId ?? '',
    name: event.toolName ?? '',
    progress: event.progress,
    ...(event.total === undefined ? {} : { total: event.total }),
    ...(event.message === undefined ? {} : { message: event.message }),
  };
}

/** The first skill of the plan that includes a tool (for `skills.NAME` policy refinements). */
function skillOfDescriptor(plan: SkillPlan, descriptor: ToolDescriptor): string | undefined {
  for (const inclusion of plan.inclusions) {
    switch (inclusion.kind) {
      case 'builtin':
        if (descriptor.id === `builtin:${inclusion.name}`) return inclusion.skill;
        break;
      case 'server':
        if (descriptor.source === 'mcp' && descriptor.serverName === inclusion.serverName)
          return inclusion.skill;
        break;
      case 'resource':
        if (
          descriptor.serverName === inclusion.resource.server &&
          descriptor.originalName === inclusion.resource.tool
        ) {
          return inclusion.skill;
        }
        break;
      case 'agent-skills':
        if (descriptor.source === 'agent-skill') return inclusion.skill;
        break;
      case 'custom':
        if (descriptor.source === 'custom') return inclusion.skill;
        break;
    }
  }
  return undefined;
}

function messagesOf(update: unknown): unknown[] {
  if (typeof update !== 'object' || update === null) return [];
  const messages = (update as Record<string, unknown>)['messages'];
  return Array.isArray(messages) ? messages : [];
}

function toAIMessage(reply: unknown): AIMessage {
  if (AIMessage.isInstance(reply)) return reply;
  const chunk = reply as { content?: unknown; tool_calls?: AIMessage['tool_calls']; id?: string };
  return new AIMessage({
    content: (chunk.content ?? '') as AIMessage['content'],
    tool_calls: chunk.tool_calls ?? [],
    ...(chunk.id ? { id: chunk.id } : {}),
  });
}

/** Runs cleanup steps in reverse order; gathers failures into an AggregateError. */
/**
 * One thread, one actor: refuses (`INVALID_ARGUMENTS`) when another actor already ran the
 * thread. A thread's checkpoints are the history of one graph (its nodes, tools and
 * instructions) and its sandbox holds that graph's files; a second actor would interleave its
 * history into the first's and leave the thread's checkpoints and rollbacks ambiguous.
 */
async function assertThreadOwner(
  workspaceRoot: string,
  actor: string,
  threadId: string,
): Promise<void> {
  const records = (await findThreadSandboxes(workspaceRoot, threadId))
    .map((location) => location.record)
    .sort((a, b) => a.createdAt - b.createdAt || a.actor.localeCompare(b.actor));
  const owner = records[0];
  if (owner === undefined || owner.actor === actor) return;
  throw new AgentsError(
    AgentsErrorCode.InvalidArguments,
    `Thread "${threadId}" belongs to actor "${owner.actor}" (one thread, one actor: its checkpoints and sandbox are that actor's history); run actor "${actor}" on another thread id, or remove the thread first (agents sandbox remove --thread ${threadId} --actor ${owner.actor}).`,
    { details: { threadId, actor, owner: owner.actor } },
  );
}

async function runCleanup(steps: Array<() => Promise<void>>): Promise<void> {
  const errors: unknown[] = [];
  for (const step of [...steps].reverse()) {
    try {
      await step();
    } catch (error) {
      errors.push(error);
    }
  }
  if (errors.length > 0) {
    throw new AggregateError(
      errors,
      `Stopping the actor failed: ${errors.map(errorMessage).join('; ')}`,
    );
  }
}
