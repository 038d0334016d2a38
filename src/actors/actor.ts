import { randomUUID } from 'node:crypto';
import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { AIMessage, HumanMessage, SystemMessage, ToolMessage } from '@langchain/core/messages';
import type { StructuredTool } from '@langchain/core/tools';
import { END, MessagesValue, START, StateGraph, StateSchema } from '@langchain/langgraph';
import type { BaseCheckpointSaver } from '@langchain/langgraph';
import type { z } from 'zod';
import { ActorSchema } from '../config/schemas.js';
import type { Actor as ActorConfig } from '../config/schemas.js';
import { AgentsError, AgentsErrorCode, errorMessage } from '../errors.js';
import { toStructuredTool } from '../mcp/structured-tool.js';
import { createChangeTrackingMiddleware, findChangeRecord } from '../middleware/change-tracking.js';
import { createCheckpointer } from '../middleware/checkpointer.js';
import type { Checkpointer } from '../middleware/checkpointer.js';
import { createPathRewriteMiddleware } from '../middleware/path-rewrite.js';
import { sandboxStateFields } from '../middleware/state.js';
import { createTrackedToolNode } from '../middleware/tool-node.js';
import { composeMiddleware } from '../middleware/types.js';
import type { ToolCallHandler, ToolMiddleware } from '../middleware/types.js';
import { createPolicyMiddleware } from '../policy/policy-middleware.js';
import { PolicySchema } from '../policy/schema.js';
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
import { createAllowedToolsMiddleware, createSkillActivation } from '../skills/agent-skills.js';
import type { AgentSkill, SkillActivation } from '../skills/agent-skills.js';
import { createWorkspaceStore } from '../workspace/store.js';
import type { WorkspaceStore } from '../workspace/store.js';
import { resolveChatModel } from './model.js';

/** An actor config as written (defaults optional), with its name. */
export type ActorConfigInput = z.input<typeof ActorSchema> & { name: string };

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
  /** A checkpoint saver; wins over the config's `checkpointer`. */
  checkpointer?: BaseCheckpointSaver;
  /** Folder for sandbox worktrees (default the OS temp folder). */
  sandboxBaseDir?: string;
  /** Leave the sandbox folder in place on deactivate (to inspect or copy results). */
  keepSandbox?: boolean;
  /** Middleware placed outermost (e.g. an audit log). */
  middleware?: readonly ToolMiddleware[];
  /** Server stderr and lifecycle logs. */
  logger?: ServerLogger;
  /** Non-fatal problems: Agent Skill spec violations, tools that vanished on refresh. */
  onWarning?: (message: string) => void;
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
  | { type: 'interrupt'; value: unknown };

/** Options for {@link ActorInstance.run}. */
export interface ActorRunOptions {
  /** Conversation thread (default: a new random one). */
  threadId?: string;
  signal?: AbortSignal;
}

function buildStateSchema() {
  return new StateSchema({ messages: MessagesValue, ...sandboxStateFields });
}
/** The actor graph's state schema: messages plus the sandbox fields (`changeLog`, `sandboxHead`). */
export type ActorState = ReturnType<typeof buildStateSchema>;

function buildGraph(
  agent: (state: ActorState['State']) => Promise<{ messages: AIMessage[] }>,
  toolNode: ReturnType<typeof createTrackedToolNode>,
  checkpointer: BaseCheckpointSaver,
) {
  return new StateGraph(buildStateSchema())
    .addNode('agent', agent)
    .addNode('tools', toolNode)
    .addEdge(START, 'agent')
    .addConditionalEdges(
      'agent',
      (state) => {
        const last = state.messages.at(-1);
        return AIMessage.isInstance(last) && (last.tool_calls?.length ?? 0) > 0 ? 'tools' : END;
      },
      ['tools', END],
    )
    .addEdge('tools', 'agent')
    .compile({ checkpointer });
}
/** The compiled actor graph (agent node ⇄ tracked ToolNode). */
export type ActorGraph = ReturnType<typeof buildGraph>;

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
  /** Stops servers (reverse order), closes the checkpointer and removes the sandbox. Idempotent. */
  deactivate(): Promise<void>;
  /** The current tools as LangChain StructuredTools (middleware applied). Active only. */
  tools(): StructuredTool[];
  /** The current flattened tool entries (descriptors with capabilities). Active only. */
  entries(): readonly ToolEntry[];
  /**
   * The middleware chain around every tool call (outermost first: yours, allowed-tools, policy,
   * path rewrite, change tracking), for serving the same tools over MCP. Active only.
   */
  middleware(): readonly ToolMiddleware[];
  /** Calls `listener` whenever the flattened tool set changes; returns an unsubscribe function. Active only. */
  onToolsChanged(listener: () => void): () => void;
  /** The compiled graph. Active only (throws `CLOSED` otherwise). */
  readonly graph: ActorGraph;
  /** The sandbox, when enabled and active. */
  readonly sandbox: Sandbox | undefined;
  /** Agent Skills loaded for this actor. Active only. */
  readonly agentSkills: readonly AgentSkill[];
  readonly activation: SkillActivation;
  /**
   * Runs one user input on a thread and yields tool calls, results and the answer as they
   * happen. Aborting `signal` stops the run (the actor stays active).
   */
  run(input: string, options?: ActorRunOptions): AsyncGenerator<ActorRunEvent, void, undefined>;
}

interface ActiveState {
  sandbox: LocalSandbox | undefined;
  manager: ServerManager;
  ownsManager: boolean;
  lease: ServerLease | undefined;
  checkpointer: Checkpointer | undefined;
  registry: SkillRegistry;
  structured: StructuredTool[];
  middleware: ToolMiddleware[];
  graph: ActorGraph;
  unsubscribe: () => void;
}

/**
 * Creates an actor from a config or from `actors/NAME.yaml`. Reads and checks the config and
 * its skills (throwing the ADR-0027 resolution errors that need no server: missing skill,
 * missing or disabled tool resource, unknown server) and prepares the model; nothing starts
 * until `activate()`.
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
  const plan = await planSkills(store, config.skills);
  const policy = config.policy === undefined ? undefined : PolicySchema.parse(config.policy);
  const modelSpec = typeof options.model === 'string' ? options.model : config.model;
  const model =
    typeof options.model === 'object'
      ? options.model
      : await resolveChatModel(modelSpec, {
          resolvePath: (path) => store.resolvePath(path),
          defaultScript: `${store.dir('actor')}/${config.name}.script.yaml`,
        });
  return new LocalActor(config, store, plan, model, policy, options);
}

class LocalActor implements ActorInstance {
  readonly activation = createSkillActivation();
  private state: ActiveState | undefined;
  private activating: Promise<void> | undefined;

  constructor(
    readonly config: ActorConfig & { name: string },
    private readonly store: WorkspaceStore,
    private readonly plan: SkillPlan,
    private readonly model: BaseChatModel,
    private readonly policy: ReturnType<typeof PolicySchema.parse> | undefined,
    private readonly options: CreateActorOptions,
  ) {}

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
    return this.state?.sandbox;
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
      if (sandboxSettings.enabled) {
        sandbox = await createSandbox({
          source: this.store.resolvePath(sandboxSettings.source),
          revision: sandboxSettings.revision,
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
      const manager =
        this.options.serverManager ??
        createServerManager({
          cwd: root,
          roots: () => [root],
          ...(this.options.logger ? { logger: this.options.logger } : {}),
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

      // Composed once: the innermost handler dispatches by id to the current entry, so a
      // refreshed tool set needs no recomposition.
      const middleware: ToolMiddleware[] = [
        ...(this.options.middleware ?? []),
        createAllowedToolsMiddleware(this.activation),
      ];
      if (this.policy) {
        middleware.push(
          createPolicyMiddleware({
            policy: this.policy,
            name: `actor "${this.name}"`,
            skillOf: (descriptor) => skillOfDescriptor(this.plan, descriptor),
            activeSkillAllowedTools: (request) =>
              this.activation.get(request.context.threadId)?.allowedTools,
          }),
        );
      }
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
      const unsubscribe = registry.on('change', (event) => {
        structured.splice(
          0,
          structured.length,
          ...event.entries.map((entry) => toStructuredTool(entry.descriptor, handler)),
        );
      });
      cleanup.push(async () => unsubscribe());
      const toolNode = createTrackedToolNode(structured, { ...(sandbox ? { sandbox } : {}) });
      const instructions = this.config.instructions;
      const agent = async (state: ActorState['State']) => {
        if (typeof this.model.bindTools !== 'function') {
          throw new AgentsError(
            AgentsErrorCode.ConfigInvalid,
            `Model of actor "${this.name}" cannot call tools (no bindTools); choose a tool-calling model.`,
            { details: { problems: [] } },
          );
        }
        // Bound on every turn, so tools added or removed by a server show up at once.
        const bound = this.model.bindTools([...structured]);
        const messages =
          instructions === ''
            ? state.messages
            : [new SystemMessage(instructions), ...state.messages];
        const reply = await bound.invoke(messages);
        return { messages: [toAIMessage(reply)] };
      };
      const saver = this.options.checkpointer ?? checkpointer?.saver;
      if (!saver)
        throw new AgentsError(AgentsErrorCode.ConfigInvalid, 'No checkpointer available.', {
          details: { problems: [] },
        });
      const graph = buildGraph(agent, toolNode, saver);
      graph.name = this.name;
      this.state = {
        sandbox,
        manager,
        ownsManager,
        lease,
        checkpointer,
        registry,
        structured,
        middleware,
        graph,
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
    const steps: Array<() => Promise<void>> = [
      ...(state.sandbox && !this.options.keepSandbox ? [() => state.sandbox!.close()] : []),
      ...(state.ownsManager ? [() => state.manager.close()] : []),
      ...(state.checkpointer ? [() => state.checkpointer!.close()] : []),
      ...(state.lease ? [() => state.lease!.release()] : []),
      () => state.registry.close(),
      async () => state.unsubscribe(),
    ];
    await runCleanup(steps);
  }

  async *run(
    input: string,
    options: ActorRunOptions = {},
  ): AsyncGenerator<ActorRunEvent, void, undefined> {
    const { graph } = this.require();
    const threadId = options.threadId ?? randomUUID();
    const stream = await graph.stream(
      { messages: [new HumanMessage(input)] },
      {
        configurable: { thread_id: threadId },
        streamMode: 'updates',
        ...(options.signal ? { signal: options.signal } : {}),
      },
    );
    for await (const chunk of stream as AsyncIterable<Record<string, unknown>>) {
      for (const [node, update] of Object.entries(chunk)) {
        if (node === '__interrupt__') {
          yield { type: 'interrupt', value: update };
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
              text: message.text,
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
