import { randomUUID } from 'node:crypto';
import { RecordingChatModel } from '../replay/chat-models.js';
import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { HumanMessage } from '@langchain/core/messages';
import type { StructuredTool } from '@langchain/core/tools';
import { Command } from '@langchain/langgraph';
import type { Actor as ActorConfig } from '../config/actor-schema.js';
import { AgentsError, AgentsErrorCode, errorMessage } from '../errors.js';
import type { ToolMiddleware } from '../core/tool-middleware.js';
import { auditLogPath } from '../policy/audit-log.js';
import { parsePolicy } from '../config/policy-schema.js';
import type { Policy } from '../config/policy-schema.js';
import { planSkills } from '../skills/skill-plan.js';
import type { SkillPlan } from '../skills/skill-plan.js';
import type { ToolEntry } from '../core/tool-descriptor.js';
import type { Sandbox } from '../sandbox/types.js';
import { createSkillActivation } from '../skills/skill-activation.js';
import type { AgentSkill } from '../skills/agent-skills.js';
import { createWorkspaceStore } from '../workspace/store.js';
import type { WorkspaceStore } from '../workspace/workspace-types.js';
import type { ActorConfinement } from '../runtime/confinement.js';
import { streamActorEvents } from './actor-events.js';
import type { ActorGraph, ActorGraphInput } from './actor-graph.js';
import type { ActorSandbox } from './actor-sandbox.js';
import type {
  ActivateOptions,
  ActorInstance,
  ActorRunEvent,
  ActorRunOptions,
  ActorServers,
  CreateActorOptions,
  DeactivateOptions,
} from './actor-types.js';
import { createAgentsRuntime, type AgentsRuntime } from '../runtime/agents-runtime.js';
import { resolveChatModel } from './model.js';
import { startActor } from './start-actor.js';
import type { ActiveActor } from './start-actor.js';
import { createRunBudgets, resolveMaxTimeMs } from './run-budget.js';
import type { RunBudgets } from './run-budget.js';
import { isContinue, isValidMaxTurns } from './turn-limit.js';
import { readActorConfig } from './read-actor-config.js';

/**
 * Creates an actor from a config or from `actors/NAME.yaml`. Reads and checks the config and
 * its skills (throwing the resolution errors of ADR-0027 "AEP tool contributions resolve to MCP"
 * that need no server: missing skill, missing or disabled tool resource, unknown server);
 * nothing starts until `activate()`. A model
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
  const config = await readActorConfig(store, options);
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
  const plainModel: ModelSource =
    typeof options.model === 'object'
      ? options.model
      : () =>
          resolveChatModel(modelSpec, {
            resolvePath: (path) => store.resolvePath(path),
            defaultScript: `${store.dir('actor')}/${actorName}.script.yaml`,
          });
  const recorder = options.record;
  const model: ModelSource =
    recorder === undefined
      ? plainModel
      : async () =>
          new RecordingChatModel({
            model: typeof plainModel === 'function' ? await plainModel() : plainModel,
            recorder,
          });
  const warn = (message: string): void => {
    if (options.onWarning) options.onWarning(message);
    else
      process.emitWarning(message, { type: 'DeprecationWarning', code: 'AGENTS_DEPRECATED_KEY' });
  };
  const budgets = createRunBudgets(
    {
      maxToolCalls: options.maxToolCalls ?? config.maxToolCalls,
      maxTimeMs:
        resolveMaxTimeMs(options, `the createActor options of "${config.name}"`, warn) ??
        resolveMaxTimeMs(config, store.file('actor', config.name), warn),
    },
    config.name,
  );
  return new LocalActor(config, store, plan, model, policy, options, budgets);
}

/** A chat model, or how to make one on first use. */
type ModelSource = BaseChatModel | (() => Promise<BaseChatModel>);

class LocalActor implements ActorInstance {
  readonly activation = createSkillActivation();
  private state: ActiveActor | undefined;
  private activating: Promise<void> | undefined;
  private resolvingModel: Promise<BaseChatModel> | undefined;
  /** What the running activation was made with, and undoes last step first (see `startActor`). */
  private activeRuntime: AgentsRuntime | undefined;
  /** `deactivate({ keepSandbox })` of the stop under way. */
  private keepOnStop: boolean | undefined;

  constructor(
    readonly config: ActorConfig & { name: string },
    private readonly store: WorkspaceStore,
    private readonly plan: SkillPlan,
    private readonly modelSource: ModelSource,
    readonly policy: Policy,
    private readonly options: CreateActorOptions,
    private readonly budgets: RunBudgets,
  ) {}

  get auditFile(): string {
    return this.options.auditFile ?? auditLogPath(this.store.root);
  }

  get name(): string {
    return this.config.name;
  }

  get active(): boolean {
    return this.state !== undefined;
  }

  get graph(): ActorGraph {
    return this.require().graph;
  }

  get sandbox(): Sandbox | undefined {
    return this.state?.sandbox?.sandbox;
  }

  get confinement(): ActorConfinement | undefined {
    const confinement = this.state?.confinement;
    if (confinement === undefined) return undefined;
    return {
      kind: confinement.kind,
      network: confinement.network,
      ...(confinement.reason === undefined ? {} : { reason: confinement.reason }),
    };
  }

  get runtime(): AgentsRuntime | undefined {
    return this.state === undefined ? undefined : this.activeRuntime;
  }

  get agentSkills(): readonly AgentSkill[] {
    return this.require().registry.agentSkills;
  }

  tools(): StructuredTool[] {
    return [...this.require().tools];
  }

  entries(): readonly ToolEntry[] {
    return this.require().registry.entries();
  }

  middleware(): readonly ToolMiddleware[] {
    return [...this.require().pipeline.middleware];
  }

  onToolsChanged(listener: () => void): () => void {
    return this.require().registry.on('change', () => listener());
  }

  servers(): ActorServers {
    const { manager } = this.require();
    return {
      status: (serverName) => manager.get(serverName)?.status,
      pid: (serverName) => manager.get(serverName)?.pid,
      names: () => manager.list().map((server) => server.name),
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

  activate(options: ActivateOptions = {}): Promise<void> {
    if (this.state) return Promise.resolve();
    this.activating ??= this.start(options).finally(() => {
      this.activating = undefined;
    });
    return this.activating;
  }

  private async start(options: ActivateOptions): Promise<void> {
    let runtime: AgentsRuntime | undefined;
    try {
      options.signal?.throwIfAborted();
      // Before anything is made: a missing script or provider package leaves nothing behind.
      if (options.checkModel === true) await this.model();
      runtime = await createAgentsRuntime({
        owner: `actor "${this.name}"`,
        sandbox: this.config.sandbox,
        confinement: this.options.confinement,
        checkpointer: this.options.checkpointer ?? this.config.checkpointer,
        cwd: this.store.projectDir,
        onWarning: this.options.onWarning,
      });
      this.activeRuntime = runtime;
      this.state = await startActor(
        {
          name: this.name,
          config: this.config,
          store: this.store,
          plan: this.plan,
          policy: this.policy,
          options: this.options,
          activation: this.activation,
          auditFile: this.auditFile,
          maxTurns: this.options.maxTurns ?? this.config.maxTurns,
          budgets: this.budgets,
          model: () => this.model(),
          keepSandbox: (opened) => this.keepsSandbox(opened),
          ...(options.step === undefined ? {} : { step: options.step }),
        },
        runtime,
        options.signal,
      );
    } catch (error) {
      // The start's own error is what the caller needs; a clean-up failure is only reported.
      await runtime
        ?.close(`Cleaning up after the failed start of actor "${this.name}"`)
        .catch((cleanupError: unknown) => this.warn(errorMessage(cleanupError)));
      throw error;
    }
  }

  /**
   * Whether disposing of the sandbox keeps it. A failed start keeps only a reopened thread's
   * sandbox (it holds the thread's history; anything it just made has no result to keep). A stop
   * keeps a thread's sandbox, or any with `keepSandbox` (the option, or `deactivate`'s).
   */
  private keepsSandbox(opened: ActorSandbox): boolean {
    if (opened.reopened) return true;
    if (this.state === undefined && this.keepOnStop === undefined) return false;
    if (this.keepOnStop === true || this.options.keepSandbox === true) return true;
    return opened.threadBound && this.options.ephemeralThread !== true;
  }

  private warn(message: string): void {
    if (this.options.onWarning) this.options.onWarning(message);
    else process.emitWarning(message, 'AgentsActorWarning');
  }

  async deactivate(options: DeactivateOptions = {}): Promise<void> {
    await this.activating?.catch(() => {});
    if (!this.state) return;
    // Read by keepsSandbox while the stack unwinds; `state` stays set until then.
    this.keepOnStop = options.keepSandbox ?? false;
    try {
      await this.activeRuntime?.close(`Stopping actor "${this.name}"`);
    } finally {
      this.state = undefined;
      this.keepOnStop = undefined;
    }
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
    if (isContinue(resume)) return this.continueRun(resume, options);
    // The graph's Command type carries its state's update shape; a resume-only Command has none.
    return this.stream(new Command({ resume }) as ActorGraphInput, options);
  }

  /**
   * `{ type: 'continue' }`: a run paused at its turn limit or a budget goes on through its
   * interrupt; a run that ended without finishing (its process killed mid-call, a step that
   * failed: a crash, a login needed) goes on from its last checkpoint, where LangGraph runs the
   * steps that did not finish again. So an interrupted tool call runs once more: a write call
   * passes the policy again (an approval given before the crash is asked again, as the call's
   * answer was never saved), and what the killed call left in the sandbox was discarded when
   * the sandbox was reopened (kept in a safety snapshot; see `reopened-thread.ts`).
   */
  private async *continueRun(
    resume: unknown,
    options: ActorRunOptions & { threadId: string },
  ): AsyncGenerator<ActorRunEvent, void, undefined> {
    const { graph } = this.require();
    const threadId = this.threadFor(options.threadId);
    const state = await graph.getState({ configurable: { thread_id: threadId } });
    const interrupts = state.tasks.flatMap((task) => task.interrupts);
    if (interrupts.length > 0) {
      yield* this.stream(new Command({ resume }) as ActorGraphInput, options);
      return;
    }
    // Tasks with saved results and no checkpoint after them: killed mid-step, not finished.
    if (state.next.length === 0 && state.tasks.length === 0) {
      throw new AgentsError(
        AgentsErrorCode.CheckpointNotFound,
        `Thread "${threadId}" of actor "${this.name}" has nothing to continue: its last run finished (or it never ran). Start a new turn with a new input.`,
        { details: { actor: this.name, threadId } },
      );
    }
    // `null` input: go on from the latest checkpoint, running its unfinished steps.
    yield* this.stream(null as unknown as ActorGraphInput, options);
  }

  /** The run's events, its budgets (tool calls, time) counted from its start. */
  private async *stream(
    input: ActorGraphInput,
    options: ActorRunOptions,
  ): AsyncGenerator<ActorRunEvent, void, undefined> {
    const { graph } = this.require();
    const threadId = this.threadFor(options.threadId);
    this.budgets.start(threadId);
    try {
      yield* streamActorEvents(graph, input, threadId, options.signal);
    } finally {
      this.budgets.end(threadId);
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

  private require(): ActiveActor {
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
