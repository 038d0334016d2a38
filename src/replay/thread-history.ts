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
  getState(config: { configurable: { thread_id: string } }): Promise<
    Omit<ThreadStateView, 'tasks'> & {
      config: unknown;
      tasks: ReadonlyArray<{ id: string; name: string; path?: ReadonlyArray<unknown> }>;
    }
  >;
  updateState(
    config: { configurable: { thread_id: string } },
    values: Record<string, unknown>,
    asNode?: string,
  ): Promise<unknown>;
  /** The graph's checkpointer: a finished call's result is saved as its task's pending write. */
  checkpointer?: unknown;
}

/** The part of LangGraph's `BaseCheckpointSaver` that saves a task's writes. */
interface TaskWriter {
  putWrites(config: unknown, writes: Array<[string, unknown]>, taskId: string): Promise<void>;
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
    waiting.some((task) => task.name === 'tools') && last && AIMessage.isInstance(last)
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
 * The pending step of `messages`: its AI message's index, and the results of its calls that
 * finished before the pause (the tool messages after it), by call id.
 */
function pendingStep(messages: readonly RecordedMessage[]): {
  at: number;
  finished: Map<string, number>;
} {
  const at = messages.findLastIndex((message) => message.type === 'ai');
  const finished = new Map<string, number>();
  messages.forEach((message, index) => {
    if (index > at && message.type === 'tool' && message.tool_call_id !== undefined) {
      finished.set(message.tool_call_id, index);
    }
  });
  return { at, finished };
}

/**
 * Refuses a `thread` entry a replay cannot seed, before anything runs: a step half done whose
 * finished calls' results are not in its messages, or a waiting question naming no tool call.
 * Otherwise the step replays (see {@link seedThread}): the finished calls' results and the
 * waiting questions' recorded answers are saved for their tasks, and only the waiting calls run.
 */
export function checkSeedable(entry: ThreadEntry, source: string): void {
  const { finished } = pendingStep(entry.messages);
  const missing = (entry.finishedCalls ?? []).filter((id) => !finished.has(id));
  if (missing.length > 0) {
    throw new AgentsError(
      AgentsErrorCode.CassetteInvalid,
      `Cassette ${source} starts on a thread paused in a step whose calls ${missing.join(', ')} had finished before the recording started, but their results are not in its \`thread\` entry, so a replay cannot rebuild that step. Record the run again from before the pause (its \`actor run\` with --record, answering on the terminal).`,
      { details: { source, finishedCalls: missing } },
    );
  }
  const unplaced = (entry.questions ?? []).filter(
    (question) => typeof (question as { toolCallId?: unknown }).toolCallId !== 'string',
  );
  if (entry.waiting === 'question' && unplaced.length > 0) {
    throw new AgentsError(
      AgentsErrorCode.CassetteInvalid,
      `Cassette ${source} starts on a thread waiting at a server's question that names no tool call, so a replay cannot tell which call to answer. Record the run again from before the pause.`,
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
  options: {
    expand: (value: unknown) => unknown;
    sandboxHead: string | undefined;
    /**
     * The resume values answering a waiting question (its preview), its call's earlier rounds
     * first; undefined: not all recorded.
     */
    answers?: (question: unknown) => unknown[] | undefined;
    /** The recorded approval of a call, as a resume value; undefined: it was not asked. */
    approval?: (toolCallId: string) => unknown;
  },
): Promise<void> {
  const config = { configurable: { thread_id: threadId } };
  const recorded = options.expand(entry.messages) as RecordedMessage[];
  // A thread paused again in a resumed step (approved, then asked) shows no next node: its
  // waiting calls say the tool step is pending all the same.
  const pending =
    entry.next.includes('tools') || entry.waiting === 'approval' || entry.waiting === 'question';
  // A step half done: its AI message is seeded (its calls become tasks again), and each
  // finished call's result (a tool message after it) is saved as its task's write, so only the
  // waiting calls run. The messages say which finished (`finishedCalls` lists them since v3's
  // recorder found them; cassettes before that have the messages only).
  const { at, finished } = pendingStep(recorded);
  const done = pending && finished.size > 0;
  const messages = (done ? recorded.slice(0, at + 1) : recorded).map(fromRecordedMessage);
  const asNode = pending
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
  const writes = new Map<string, Array<[string, unknown]>>();
  for (const [id, index] of done ? finished : []) {
    writes.set(id, [['messages', [fromRecordedMessage(recorded[index]!)]]]);
  }
  // Each waiting question's recorded answer, saved as its task's resume value (the run then
  // continues with no resume of its own): the call is asked again and answered at once, as in
  // the recording; any number of questions, none keyed by the original run's interrupt ids.
  const questions = pending && entry.waiting === 'question' ? entry.questions : undefined;
  for (const question of options.expand(questions ?? []) as unknown[]) {
    const id = (question as { toolCallId?: string }).toolCallId!;
    const answers = options.answers?.(question);
    // None recorded (the recording ended paused there too): the replay pauses there as well.
    if (answers === undefined) continue;
    // A call approved before its server asked: the policy's interrupt comes first in its task.
    const approval = options.approval?.(id);
    writes.set(id, [[RESUME, approval === undefined ? answers : [approval, ...answers]]]);
  }
  if (writes.size > 0) await saveTaskWrites(graph, config, recorded[at]?.tool_calls ?? [], writes);
}

/**
 * LangGraph's channel for a task's resume values (`interrupt()` returns them in order): the
 * name its checkpoints store, not exported as a constant.
 */
const RESUME = '__resume__';

/**
 * Saves `writes` (by call id) as the pending writes of the seeded step's tasks (one task per
 * call, in the AI message's call order: `routeToolCallsPerTask`), as the paused step had them.
 * A replayed actor groups no calls into one task (its replay middleware turns grouping off, see
 * `actors/call-grouping.ts`), so a recorded step whose reads shared a task is seeded one task
 * per call as well, each read keeping its recorded result.
 */
async function saveTaskWrites(
  graph: SeedableGraph,
  config: { configurable: { thread_id: string } },
  calls: NonNullable<RecordedMessage['tool_calls']>,
  writes: ReadonlyMap<string, Array<[string, unknown]>>,
): Promise<void> {
  const state = await graph.getState(config);
  const order = (path: ReadonlyArray<unknown> | undefined) =>
    typeof path?.[1] === 'number' ? path[1] : 0;
  const tasks = state.tasks
    .filter((task) => task.name === 'tools')
    .sort((a, b) => order(a.path) - order(b.path));
  const saver = graph.checkpointer as TaskWriter | undefined;
  if (tasks.length !== calls.length || typeof saver?.putWrites !== 'function') {
    throw new AgentsError(
      AgentsErrorCode.CassetteInvalid,
      `The recorded thread's pending step has ${calls.length} call(s), the seeded one ${tasks.length} task(s): the replay cannot rebuild what ${[...writes.keys()].join(', ')} had done or were answered. Record the run again from before the pause.`,
    );
  }
  for (const [id, taskWrites] of writes) {
    const task = tasks[calls.findIndex((call) => call.id === id)];
    if (task === undefined) continue;
    await saver.putWrites(state.config, taskWrites, task.id);
  }
}
