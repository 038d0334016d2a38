import { killPoint } from '../core/kill-point.js';
import { trackCheckpointWrites } from '../thread/durable-writes.js';
import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { AIMessage, SystemMessage } from '@langchain/core/messages';
import type { ToolCall } from '@langchain/core/messages';
import { inCallOrder } from './call-grouping.js';
import type { StructuredTool } from '@langchain/core/tools';
import { END, MessagesDeltaValue, START, StateGraph, StateSchema } from '@langchain/langgraph';
import type { BaseCheckpointSaver, BaseStore, LangGraphRunnableConfig } from '@langchain/langgraph';
import { AgentsError, AgentsErrorCode } from '../errors.js';
import { sandboxDeltaStateFields } from '../thread/state.js';
import { createTrackedToolNode, routeToolCallsPerTask } from '../pipeline/tool-node.js';
import type { ToolSet } from '../pipeline/tool-set.js';
import type { Sandbox } from '../sandbox/types.js';
import type { RunBudgets } from './run-budget.js';
import { pauseAtTurnLimit, recursionLimitFor, turnStateFields } from './turn-limit.js';

function buildStateSchema() {
  // Delta channels: each message and change record is stored once, not in every checkpoint.
  return new StateSchema({
    messages: MessagesDeltaValue,
    ...sandboxDeltaStateFields,
    ...turnStateFields,
  });
}
/**
 * The actor graph's state schema: messages plus the sandbox fields (`changeLog`, `sandboxHead`,
 * `rollbacks`, `activeSkill`) and the turn count.
 */
export type ActorState = ReturnType<typeof buildStateSchema>;

function buildGraph(
  agent: (state: ActorState['State']) => Promise<{ messages: AIMessage[] }>,
  toolNode: ReturnType<typeof createTrackedToolNode>,
  checkpointer: BaseCheckpointSaver,
  maxTurns: number,
  store?: BaseStore,
  group?: (call: ToolCall) => boolean,
) {
  return (
    new StateGraph(buildStateSchema())
      .addNode('agent', agent)
      .addNode('tools', toolNode)
      .addEdge(START, 'agent')
      // One task per tool call: a call paused for approval re-runs alone on resume; its
      // siblings (allowed writes included) keep their saved results and never run twice. The
      // calls `group` picks (read-only, allowed) share one task: running them again is harmless.
      .addConditionalEdges(
        'agent',
        routeToolCallsPerTask({
          tools: 'tools',
          end: END,
          ...(group === undefined ? {} : { group }),
        }),
        ['tools', END],
      )
      .addEdge('tools', 'agent')
      .compile({ checkpointer, ...(store === undefined ? {} : { store }) })
      // Also for callers of `actor.graph.invoke`: LangGraph's default (25 steps) is 12 turns.
      .withConfig({ recursionLimit: recursionLimitFor(maxTurns) })
  );
}
/** The compiled actor graph (agent node ⇄ tracked ToolNode). */
export type ActorGraph = ReturnType<typeof buildGraph>;
/** What `ActorGraph.stream` takes: a state update or a `Command`. */
export type ActorGraphInput = Parameters<ActorGraph['stream']>[0];

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

/** What {@link compileActorGraph} needs. */
export interface ActorGraphOptions {
  name: string;
  instructions: string;
  maxTurns: number;
  /** Tool-call and time budgets of each run (checked with the turn limit). */
  budgets?: RunBudgets | undefined;
  /** The chat model, made on first use. */
  model: () => Promise<BaseChatModel>;
  /** The live, governed tools (they follow the registry and run through the pipeline). */
  toolSet: ToolSet;
  /** The tracked ToolNode carries each call's change records into state. */
  sandbox?: Sandbox | undefined;
  checkpointer: BaseCheckpointSaver;
  /** Where a call that became an MCP task is noted, so a resumed run follows that task. */
  store?: BaseStore | undefined;
  /** The calls of a turn that share one task (see `readOnlyAllowedCalls`); default none. */
  group?: ((call: ToolCall) => boolean) | undefined;
}

/** The compiled graph, its current tools, and the subscription to drop on stop. */
export interface CompiledActorGraph {
  graph: ActorGraph;
  /** The current tools (refreshed in place when the registry changes). */
  tools: StructuredTool[];
  /** Stops following the registry's changes. */
  unsubscribe(): void;
}

/**
 * Compiles the actor graph: an agent node (instructions + model with the tools bound) and the
 * tracked ToolNode, over `checkpointer`. The tool list follows the registry's changes.
 */
export function compileActorGraph(options: ActorGraphOptions): CompiledActorGraph {
  const { toolSet, name, instructions, maxTurns } = options;
  // The tool set refreshes its array in place, so the ToolNode and the model's bound tools stay
  // in step without rebuilding the graph.
  const { tools } = toolSet;
  // The model is bound once per tool-set version, not on every turn.
  let bound: ReturnType<NonNullable<BaseChatModel['bindTools']>> | undefined;
  let boundVersion = -1;
  const toolNode = createTrackedToolNode(tools, {
    ...(options.sandbox ? { sandbox: options.sandbox } : {}),
  });
  const { budgets } = options;
  const writes = trackCheckpointWrites(options.checkpointer);
  const agent = async (state: ActorState['State'], config?: LangGraphRunnableConfig) => {
    // Before the model call: at a limit the run pauses here, every tool result saved.
    const runTurns = pauseAtTurnLimit(state.runTurns, maxTurns, name);
    const threadId = String(config?.configurable?.['thread_id'] ?? '');
    budgets?.check(threadId, state.runTurns, maxTurns);
    const model = await options.model();
    if (typeof model.bindTools !== 'function') {
      throw new AgentsError(
        AgentsErrorCode.ConfigInvalid,
        `Model of actor "${name}" cannot call tools (no bindTools); choose a tool-calling model.`,
        { details: { problems: [] } },
      );
    }
    // Rebound after a tool-set change, so tools a server adds or removes show up next turn.
    if (bound === undefined || boundVersion !== toolSet.version) {
      boundVersion = toolSet.version;
      bound = model.bindTools([...tools]);
    }
    // Each turn's results in the model's call order, grouped or not (see inCallOrder).
    const history = inCallOrder(state.messages);
    const messages = instructions === '' ? history : [new SystemMessage(instructions), ...history];
    // The checkpoint holding the run's input is durable before the model runs (#38 item 9).
    await writes.settled();
    killPoint('before-model');
    const reply = toAIMessage(await bound.invoke(messages));
    budgets?.countCalls(threadId, reply.tool_calls?.length ?? 0);
    return { messages: [reply], runTurns };
  };
  const graph = buildGraph(agent, toolNode, writes.saver, maxTurns, options.store, options.group);
  graph.name = name;
  return { graph, tools, unsubscribe: () => toolSet.close() };
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
