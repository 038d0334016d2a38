/**
 * The prior history of a recorded thread (v3 `thread` entry): a recording that starts on a
 * thread that already ran (a run after a rollback, `actor resume` after a pause) writes the
 * thread's state as it found it (messages, turn count, active skill, which node was about to
 * run); a replay seeds a fresh thread with it before running the recorded runs, so the first
 * model turn sees the same history and a pending step runs again where it waited.
 */
import {
  AIMessage,
  HumanMessage,
  SystemMessage,
  ToolMessage,
  type BaseMessage,
} from '@langchain/core/messages';
import { AgentsError, AgentsErrorCode } from '../errors.js';
import { isInputRequestPreview } from '../policy/input-requests.js';
import type { RecordedMessage, ThreadEntry } from './cassette.js';
import { toRecordedMessage } from './chat-models.js';

/** What recording and seeding need of a thread's state (LangGraph's `StateSnapshot`). */
export interface ThreadStateView {
  values: { messages?: BaseMessage[]; runTurns?: number; activeSkill?: unknown };
  next: string[];
  tasks: ReadonlyArray<{ name: string; interrupts: ReadonlyArray<{ value?: unknown }> }>;
}

/** What seeding needs of the actor graph. */
export interface SeedableGraph {
  getState(config: { configurable: { thread_id: string } }): Promise<ThreadStateView>;
  updateState(
    config: { configurable: { thread_id: string } },
    values: Record<string, unknown>,
    asNode?: string,
  ): Promise<unknown>;
}

/**
 * The `thread` entry for a thread's state when a recording starts (redacted with `redact`), or
 * undefined for a thread that never ran (a replay starts it fresh as recorded).
 */
export function threadEntryOf(
  state: ThreadStateView,
  redact: (value: unknown) => unknown,
): ThreadEntry | undefined {
  const messages = state.values.messages ?? [];
  if (messages.length === 0) return undefined;
  const entry: ThreadEntry = {
    kind: 'thread',
    messages: redact(messages.map(toRecordedMessage)) as RecordedMessage[],
    runTurns: state.values.runTurns ?? 0,
    next: [...state.next],
  };
  if (state.values.activeSkill !== undefined && state.values.activeSkill !== null) {
    entry.activeSkill = redact(state.values.activeSkill);
  }
  const waiting = state.tasks.filter((task) => task.interrupts.length > 0);
  if (waiting.length > 0) {
    const question = waiting.some((task) =>
      task.interrupts.some((item) => isInputRequestPreview(item.value)),
    );
    entry.waiting = question ? 'question' : waiting[0]!.name === 'agent' ? 'limit' : 'approval';
    // A question is answered on resume before the call is sent again: a replay needs it.
    if (question) {
      entry.questions = waiting.flatMap((task) =>
        task.interrupts.flatMap((item) =>
          isInputRequestPreview(item.value) ? [redact(item.value)] : [],
        ),
      );
    }
  }
  // The pending step's calls that wait for nothing (no approval, no question of their own):
  // they finished before the pause, their results saved with the checkpoint (and shown in the
  // state's messages, after the step's AI message).
  const last = messages.findLast((message) => AIMessage.isInstance(message));
  const waitingIds = new Set(
    waiting.flatMap((task) =>
      task.interrupts.map((item) => (item.value as { toolCallId?: unknown } | null)?.toolCallId),
    ),
  );
  const finished =
    waiting.length > 0 && state.next.includes('tools') && last && AIMessage.isInstance(last)
      ? (last.tool_calls ?? []).flatMap((call) =>
          call.id !== undefined && !waitingIds.has(call.id) ? [call.id] : [],
        )
      : [];
  if (finished.length > 0) entry.finishedCalls = finished;
  return entry;
}

/** A recorded message as a LangChain message (ids kept: approvals and change sets use them). */
export function fromRecordedMessage(recorded: RecordedMessage): BaseMessage {
  const content = recorded.content as string;
  const name = recorded.name === undefined ? {} : { name: recorded.name };
  switch (recorded.type) {
    case 'ai':
      return new AIMessage({
        content,
        ...name,
        tool_calls: (recorded.tool_calls ?? []).map((call) => ({
          ...(call.id === undefined ? {} : { id: call.id }),
          name: call.name,
          args: call.args,
          type: 'tool_call' as const,
        })),
      });
    case 'tool':
      return new ToolMessage({ content, tool_call_id: recorded.tool_call_id ?? '', ...name });
    case 'system':
      return new SystemMessage({ content, ...name });
    default:
      return new HumanMessage({ content, ...name });
  }
}

/**
 * Refuses a `thread` entry a replay cannot seed, before anything runs: a step half done (some
 * of its calls finished before the pause: their results are not in this recording), or several
 * servers' questions waiting at once. One waiting question replays: the resume answers it first
 * (see the replay), then the call is sent again and asked again, as recorded.
 */
export function checkSeedable(entry: ThreadEntry, source: string): void {
  if (entry.finishedCalls !== undefined && entry.finishedCalls.length > 0) {
    throw new AgentsError(
      AgentsErrorCode.CassetteInvalid,
      `Cassette ${source} starts on a thread paused in a step whose calls ${entry.finishedCalls.join(', ')} had finished before the recording started; a replay cannot rebuild that step half done (it would run them again). Record the run again from before the pause (its \`actor run\` with --record, answering on the terminal).`,
      { details: { source, finishedCalls: entry.finishedCalls } },
    );
  }
  if (entry.waiting === 'question' && entry.questions?.length !== 1) {
    throw new AgentsError(
      AgentsErrorCode.CassetteInvalid,
      `Cassette ${source} starts on a thread where ${entry.questions?.length ?? 0} servers' questions waited at once; a replay answers one waiting question (the answers of several are keyed by the original run's interrupt ids). Record the run again from before the pause.`,
      { details: { source } },
    );
  }
}

/**
 * Seeds `threadId` of `graph` with the recorded history, as the node the thread was about to
 * run next: a pending tool step is written as the agent's turn (so its calls run again, and ask
 * again for the approval the recording answers), a pending model turn as the tools' result.
 * `expand` puts machine paths back (the sandbox's `.`); `sandboxHead` is the replay sandbox's
 * head (the recorded thread's snapshots are not in it). A thread paused at its turn limit or a
 * budget is seeded with its turn count at 0: the continued run goes through that pause as the
 * recorded `--continue` did, counting afresh.
 */
export async function seedThread(
  graph: SeedableGraph,
  threadId: string,
  entry: ThreadEntry,
  options: { expand: (value: unknown) => unknown; sandboxHead: string | undefined },
): Promise<void> {
  const config = { configurable: { thread_id: threadId } };
  const messages = (options.expand(entry.messages) as RecordedMessage[]).map(fromRecordedMessage);
  const asNode = entry.next.includes('tools')
    ? 'agent'
    : entry.next.includes('agent') || messages.at(-1)?.getType() === 'tool'
      ? 'tools'
      : 'agent';
  await graph.updateState(
    config,
    {
      messages,
      runTurns: entry.waiting === 'limit' ? 0 : entry.runTurns,
      ...(entry.activeSkill === undefined ? {} : { activeSkill: entry.activeSkill }),
      ...(options.sandboxHead === undefined ? {} : { sandboxHead: options.sandboxHead }),
    },
    asNode,
  );
}
