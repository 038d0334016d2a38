import { setMaxListeners } from 'node:events';
import { AIMessage, isBaseMessage, ToolMessage } from '@langchain/core/messages';
import type { BaseMessage, ToolCall } from '@langchain/core/messages';
import type { DynamicTool, StructuredToolInterface } from '@langchain/core/tools';
import type { RunnableToolLike } from '@langchain/core/runnables';
import { END, isCommand, isGraphBubbleUp, Send } from '@langchain/langgraph';
import type { Command } from '@langchain/langgraph';
import type { LangGraphRunnableConfig } from '@langchain/langgraph';
import { ToolNode } from '@langchain/langgraph/prebuilt';
import type { ChangeRecord } from '../core/change-record.js';
import type { Sandbox } from '../sandbox/types.js';
import { createChangeTracker, findChangeRecord } from './change-tracking.js';
import type { ChangeTracker } from './change-tracking.js';
import { isHumanOnlyToolError, toolErrorMessage } from './tool-errors.js';
import { ACTIVE_SKILL_META_KEY, chainTip, readActiveSkill } from '../core/sandbox-state.js';
import type { ActiveSkillState } from '../core/sandbox-state.js';
import type { SandboxStateUpdate } from '../thread/state.js';
import type { HeadClaim } from '../core/head-claim.js';
import { isGroupedToolCalls, refusedAsChanged, runGroupedCalls } from './grouped-calls.js';
import type { GroupedToolCallsInput } from './grouped-calls.js';

/** Abort listeners allowed on one superstep's signal: one per parallel call of a turn. */
const MAX_PARALLEL_CALL_LISTENERS = 1_000;

/** Options of {@link createTrackedToolNode}. */
export interface TrackedToolNodeOptions {
  /** Node name (default `tools`). */
  name?: string;
  tags?: string[];
  /** As on LangGraph's `ToolNode` (default `true`: thrown errors become error ToolMessages). */
  handleToolErrors?: boolean;
  /**
   * The sandbox the tools' change-tracking middleware snapshots. When given, records of calls
   * that threw (which `ToolNode` turns into plain error messages) are recovered from the shared
   * tracker, so the change log and `sandboxHead` stay complete.
   */
  sandbox?: Sandbox;
}

/** Any tool LangGraph's `ToolNode` accepts. */
export type ToolNodeTool = StructuredToolInterface | DynamicTool | RunnableToolLike;

/** Collects the ToolMessages of a ToolNode output, in order, wherever they sit. */
function collectToolMessages(output: unknown, into: ToolMessage[] = []): ToolMessage[] {
  if (Array.isArray(output)) {
    for (const item of output) collectToolMessages(item, into);
  } else if (isBaseMessage(output)) {
    if (ToolMessage.isInstance(output)) into.push(output);
  } else if (isCommand(output)) {
    const update: unknown = output.update;
    if (typeof update === 'object' && update !== null && !Array.isArray(update)) {
      collectToolMessages((update as Record<string, unknown>)['messages'], into);
    }
  } else if (typeof output === 'object' && output !== null) {
    collectToolMessages((output as Record<string, unknown>)['messages'], into);
  }
  return into;
}

/**
 * Extracts the change records carried by a node's tool messages (`artifact._meta['agents/change']`)
 * and turns them into a state update, or `undefined` when no call changed anything tracked.
 */
export function changeUpdateFromMessages(
  messages: readonly BaseMessage[],
  tracker?: ChangeTracker,
): SandboxStateUpdate | undefined {
  const records: ChangeRecord[] = [];
  for (const message of messages) {
    if (!ToolMessage.isInstance(message)) continue;
    const fromArtifact = findChangeRecord(message.artifact);
    // Always drain the stash for this call, so records of handled errors never pile up.
    const stashed = tracker?.takeFailedRecord(message.tool_call_id);
    const record = fromArtifact ?? stashed;
    if (record === undefined) continue;
    records.push(
      record.toolCallId === undefined ? { ...record, toolCallId: message.tool_call_id } : record,
    );
  }
  const head = chainTip(records);
  if (head === undefined) return undefined;
  return { changeLog: records, sandboxHead: head };
}

/**
 * The skill the last successful activation among these tool messages activated
 * (`artifact._meta['agents/skill']`), or undefined when none of them activated one.
 */
export function activeSkillFromMessages(
  messages: readonly BaseMessage[],
): ActiveSkillState | undefined {
  let found: ActiveSkillState | undefined;
  for (const message of messages) {
    if (!ToolMessage.isInstance(message) || message.status === 'error') continue;
    const artifact: unknown = message.artifact;
    if (typeof artifact !== 'object' || artifact === null) continue;
    const meta: unknown = (artifact as Record<string, unknown>)['_meta'];
    if (typeof meta !== 'object' || meta === null) continue;
    found = readActiveSkill((meta as Record<string, unknown>)[ACTIVE_SKILL_META_KEY]) ?? found;
  }
  return found;
}

/**
 * LangGraph's prebuilt `ToolNode` that also moves each call's `ChangeRecord` (put on the
 * ToolMessage artifact by the change-tracking middleware) into the `changeLog` and
 * `sandboxHead` state fields (see `sandboxStateFields`), in the same superstep as the messages.
 * So the checkpoint written after the tools step records the file state it belongs to.
 */
class TrackedToolNode extends ToolNode {
  private readonly tracker: ChangeTracker | undefined;
  /** Thrown errors become error ToolMessages (ToolNode's own handling is off, see runTool). */
  private readonly handleErrors: boolean;

  constructor(tools: ToolNodeTool[], options: TrackedToolNodeOptions) {
    super(tools, {
      name: options.name ?? 'tools',
      ...(options.tags === undefined ? {} : { tags: options.tags }),
      handleToolErrors: false,
    });
    this.handleErrors = options.handleToolErrors ?? true;
    this.tracker = options.sandbox === undefined ? undefined : createChangeTracker(options.sandbox);
  }

  /**
   * ToolNode's error handling, with two differences: an error only a person can clear (a login
   * or scope step-up, `AUTH_REQUIRED`) ends the step and reaches the caller instead of the model
   * (the run stops at the checkpoint before this call; resume runs the call again), and an
   * infrastructure fault is not called the model's mistake.
   */
  protected override async runTool(
    call: ToolCall,
    config: LangGraphRunnableConfig,
    state: unknown,
  ): Promise<ToolMessage | Command> {
    try {
      return await super.runTool(call, config, state);
    } catch (error) {
      if (!this.handleErrors || isGraphBubbleUp(error) || isHumanOnlyToolError(error)) throw error;
      return toolErrorMessage(error, call);
    }
  }

  protected override async run(input: unknown, config: LangGraphRunnableConfig): Promise<unknown> {
    // LangChain adds one abort listener per running task to the superstep's signal (made by
    // LangGraph for this step only) and removes it when the task ends, so the count is the
    // number of parallel calls of one turn, not a leak. Node warns from 11; this runs before
    // LangChain adds this task's listener. Bounded: a turn of over 1,000 calls still warns.
    if (config.signal) setMaxListeners(MAX_PARALLEL_CALL_LISTENERS, config.signal);
    const output: unknown = isGroupedToolCalls(input)
      ? await this.runGroup(input, config)
      : await super.run(input, config);
    // A bare message-list graph has no state fields to write.
    if (Array.isArray(input)) return output;
    const messages = collectToolMessages(output);
    const changes = changeUpdateFromMessages(messages, this.tracker);
    // Only graphs with an `activeSkill` field (it defaults to null, so the key is in the state,
    // and routeToolCallsPerTask carries it into each task) get the activated skill written.
    const skill = hasActiveSkillField(input) ? activeSkillFromMessages(messages) : undefined;
    if (changes === undefined && skill === undefined) return output;
    const update: SandboxStateUpdate = {
      ...changes,
      ...(skill === undefined ? {} : { activeSkill: skill }),
    };
    const perTask = isToolCallTask(input) || isGroupedToolCalls(input) ? input : undefined;
    if (changes !== undefined && perTask !== undefined && this.tracker !== undefined) {
      // Tasks per call or group (routeToolCallsPerTask): sibling tasks of the superstep each write
      // `sandboxHead`, applied in task order, not finishing order, and a sibling may not even
      // have taken the lock yet when this one is done. So each task claims the newest head it
      // saw, with the chain it descends from, and the reducer keeps the newest claim of the
      // step (core/head-claim.ts): never last write wins.
      await this.tracker.idle();
      update.sandboxHead = headClaimOf(this.tracker, perTask, config);
    }
    if (Array.isArray(output)) return [...output, update];
    if (typeof output === 'object' && output !== null) return { ...output, ...update };
    return output;
  }

  /**
   * A task of grouped calls (routeToolCallsPerTask's `group`): each call runs as ToolNode runs a
   * one-call task, pauses deferred until it runs alone (see runGroupedCalls), and the outputs are
   * merged in call order as ToolNode merges a turn's.
   */
  private async runGroup(
    input: GroupedToolCallsInput,
    config: LangGraphRunnableConfig,
  ): Promise<unknown> {
    const { lg_tool_calls: calls, ...state } = input;
    const outputs = await runGroupedCalls(
      calls,
      async (call) =>
        refusedAsChanged(this.tools, call) ?? super.run({ ...state, lg_tool_call: call }, config),
    );
    const messages: unknown[] = [];
    for (const output of outputs) {
      const plain = !Array.isArray(output) && typeof output === 'object' && output !== null;
      const list: unknown = plain ? (output as Record<string, unknown>)['messages'] : undefined;
      if (!Array.isArray(list) || Object.keys(output as object).length !== 1) {
        // A tool returned a Command: keep each output as its own update, as ToolNode does.
        return outputs.flatMap((each) => (Array.isArray(each) ? (each as unknown[]) : [each]));
      }
      messages.push(...(list as unknown[]));
    }
    return { messages };
  }
}

/** The input LangGraph's `ToolNode` receives from a `Send` carrying one tool call. */
export interface ToolCallTaskInput {
  lg_tool_call: ToolCall;
  [key: string]: unknown;
}

/** The claim of a task on its step's head: the sandbox's head now and the chain to it. */
function headClaimOf(
  tracker: ChangeTracker,
  input: ToolCallTaskInput | GroupedToolCallsInput,
  config: LangGraphRunnableConfig,
): HeadClaim {
  const sha = tracker.sandbox.head;
  const base = typeof input['sandboxHead'] === 'string' ? input['sandboxHead'] : undefined;
  const thread = String(config.configurable?.['thread_id'] ?? '');
  // The task's namespace ends with its own `node:taskId` segment; siblings share the rest.
  const namespace = String(config.configurable?.['checkpoint_ns'] ?? '')
    .split('|')
    .slice(0, -1)
    .join('|');
  const stepValue: unknown = config.metadata?.['langgraph_step'];
  const step = typeof stepValue === 'number' || typeof stepValue === 'string' ? stepValue : '';
  return {
    kind: 'head-claim',
    sha,
    step: `${thread}|${namespace}|${step}`,
    ancestors: tracker.ancestors(sha, base === '' ? undefined : base),
  };
}

function hasActiveSkillField(input: unknown): boolean {
  return typeof input === 'object' && input !== null && 'activeSkill' in input;
}

function isToolCallTask(input: unknown): input is ToolCallTaskInput {
  return typeof input === 'object' && input !== null && 'lg_tool_call' in input;
}

/** Options of {@link routeToolCallsPerTask}. */
export interface ToolCallRouteOptions {
  /** Name of the tools node (default `tools`). */
  tools?: string;
  /** Where to go when the last message has no tool calls (default `END`). */
  end?: string;
  /**
   * Calls that may share ONE task (default: none, every call its own task). Only calls that
   * change nothing when run again may be grouped (read-only tools): a grouped task's results are
   * saved together at its end, so a crash or a pause inside it runs all of its calls again. A
   * grouped call that would pause still pauses alone, after its siblings (see runGroupedCalls);
   * say true only for calls unlikely to pause (policy `allow`), or the group waits on it. An MCP
   * tool that is no longer read-only when its grouped call runs (relisted) is refused, not run.
   */
  group?: (call: ToolCall) => boolean;
}

/**
 * A conditional edge for `agent → tools` that sends each tool call of the last AI message to the
 * tools node as its own task (`Send(tools, { lg_tool_call })`: the call alone, not the state, so
 * a checkpoint stores each call once), or goes to `end`. Tools that read `runtime.state` see
 * only `activeSkill` there (when the graph has that field).
 *
 * Why: LangGraph's `ToolNode` runs a turn's calls in one task, and when one of them pauses on
 * `interrupt()` (an approval) the whole task re-runs on resume, so calls that already ran (allowed
 * writes included) run again. With one task per call, finished calls keep their saved writes and
 * only the paused call re-runs. The calls `options.group` picks (read-only ones) share one task
 * instead (`Send(tools, { lg_tool_calls })`), which saves LangGraph's per-task cost; only
 * {@link createTrackedToolNode} runs such a task. Use with it:
 *
 * ```ts
 * graph.addConditionalEdges('agent', routeToolCallsPerTask(), ['tools', END])
 * ```
 */
export function routeToolCallsPerTask(
  options: ToolCallRouteOptions = {},
): (state: {
  messages: BaseMessage[];
  activeSkill?: ActiveSkillState | null;
  sandboxHead?: string;
}) => Send[] | string {
  const tools = options.tools ?? 'tools';
  const end = options.end ?? END;
  return (state) => {
    const last = state.messages.at(-1);
    const calls = last !== undefined && AIMessage.isInstance(last) ? (last.tool_calls ?? []) : [];
    if (calls.length === 0) return end;
    // Only the call: a Send's argument is stored with the checkpoint, so `{ ...state }` here
    // would store every message once per call (quadratic storage). The tools need no state but
    // the active skill, whose `allowed-tools` the tool pipeline enforces (a few names).
    const skill = 'activeSkill' in state ? { activeSkill: state.activeSkill ?? null } : {};
    // The step's starting head: where a task's head claim stops walking back (one sha).
    const head =
      typeof state.sandboxHead === 'string' && state.sandboxHead !== ''
        ? { sandboxHead: state.sandboxHead }
        : {};
    const grouped = options.group === undefined ? [] : calls.filter(options.group);
    if (grouped.length < 2) {
      return calls.map((call) => new Send(tools, { lg_tool_call: call, ...skill, ...head }));
    }
    // The group takes the place of its first call; the others keep their own tasks.
    const sends: Send[] = [];
    for (const call of calls) {
      if (call === grouped[0])
        sends.push(new Send(tools, { lg_tool_calls: grouped, ...skill, ...head }));
      else if (!grouped.includes(call))
        sends.push(new Send(tools, { lg_tool_call: call, ...skill, ...head }));
    }
    return sends;
  };
}

/**
 * Creates the tools node for hand-built `StateGraph`s: runs the tools like LangGraph's
 * `ToolNode` (parallel calls, error ToolMessages) and records their file changes in state.
 * It also accepts one call per task (`Send` input with `lg_tool_call`, see
 * {@link routeToolCallsPerTask}), which graphs with approvals should use.
 * The graph's state must include `sandboxStateFields`. The tools themselves do the tracking
 * (their handler is composed with `createChangeTrackingMiddleware`); this node only carries the
 * records into state.
 */
export function createTrackedToolNode(
  tools: ToolNodeTool[],
  options: TrackedToolNodeOptions = {},
): ToolNode {
  return new TrackedToolNode(tools, options);
}
