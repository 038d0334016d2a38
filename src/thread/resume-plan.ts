import { AIMessage, ToolMessage } from '@langchain/core/messages';
import type { StateSnapshot } from '@langchain/langgraph';
import { readSandboxState } from '../core/sandbox-state.js';
import { isHeadClaim, reduceSandboxHead } from '../core/head-claim.js';
import type { HeadClaim } from '../core/head-claim.js';
import type { ToolTaskStore } from '../core/tool-descriptor.js';
import { TASK_LEDGER_NAMESPACE } from '../mcp/task-handles.js';

/*
 * What `--continue` will do with a thread whose last run ended mid-way (issue 38, items 3, 9):
 * decided from the thread's latest checkpoint and the results its tasks saved, the same on
 * every worker, and printed before anything runs.
 */

/** One tool call of the step that did not finish. */
export interface PlannedCall {
  id: string;
  name: string;
  /**
   * The MCP task this call became before the run stopped (noted in the run's store, see
   * {@link withNotedTasks}): `--continue` follows that task instead of calling the tool again.
   */
  taskId?: string;
}

/** What continuing a thread will run again, and from which files. */
export interface ResumePlan {
  /** True when the latest checkpoint has steps left to run (the run did not finish). */
  unfinished: boolean;
  /** The step's results were all saved, its checkpoint not written: nothing of it runs again. */
  savedStep: boolean;
  /** The nodes that run next (`agent`: the model turn; `tools`: the calls below). */
  next: string[];
  /** Calls whose result was saved: they never run again. */
  completed: PlannedCall[];
  /**
   * Calls with no saved result (they never finished, or never started): they run again, or,
   * those with a `taskId`, follow their server's task.
   */
  rerun: PlannedCall[];
  /**
   * The sandbox head the continued run must start from: the checkpoint's head, advanced by the
   * head claims of the calls that completed (their files stay). `undefined` before any snapshot.
   */
  head: string | undefined;
}

/** Reads the {@link ResumePlan} of a thread from its latest state (`graph.getState`). */
export function planResume(state: Pick<StateSnapshot, 'next' | 'tasks' | 'values'>): ResumePlan {
  const values = state.values as { messages?: unknown[] } | undefined;
  const last = values?.messages?.at(-1);
  const calls =
    last !== undefined && AIMessage.isInstance(last)
      ? (last.tool_calls ?? []).map((call) => ({ id: call.id ?? '', name: call.name }))
      : [];
  const done = new Set<string>();
  const claims: HeadClaim[] = [];
  const plainHeads: string[] = [];
  for (const task of state.tasks) {
    const result = task.result as Record<string, unknown> | undefined;
    if (result === undefined) continue;
    const messages = result['messages'];
    for (const message of Array.isArray(messages) ? messages : [messages]) {
      if (ToolMessage.isInstance(message)) done.add(message.tool_call_id);
    }
    const head = result['sandboxHead'];
    if (isHeadClaim(head)) claims.push(head);
    else if (typeof head === 'string' && head !== '') plainHeads.push(head);
  }
  let head = readSandboxState(state.values).sandboxHead ?? '';
  for (const plain of plainHeads) head = reduceSandboxHead(head, plain);
  for (const claim of claims) head = reduceSandboxHead(head, claim);
  // `next` omits tasks whose results were saved; a step killed before its checkpoint was
  // written has all of them saved, so its tasks tell which step it was (#38 item 9).
  const next =
    state.next.length > 0 ? [...state.next] : [...new Set(state.tasks.map((t) => t.name))];
  const toolsNext = next.includes('tools');
  return {
    unfinished: next.length > 0,
    savedStep: state.next.length === 0 && next.length > 0,
    next,
    completed: toolsNext ? calls.filter((call) => done.has(call.id)) : [],
    rerun: toolsNext ? calls.filter((call) => !done.has(call.id)) : [],
    head: head === '' ? undefined : head,
  };
}

/**
 * The plan with the MCP task of each unfinished call that became one, read from the run's store
 * where `src/mcp/tasks.ts` notes it (namespace {@link TASK_LEDGER_NAMESPACE} and the thread, key
 * the tool call id, value `{ call, serverName, toolName, taskId, requestState? }`). When the call
 * is sent again, the ledger also compares a digest of server, tool and arguments as the pipeline
 * rewrote them, which the plan cannot rebuild; a tool call id names one call of a thread. A store
 * that does not answer gives no task, as it gives none to the call (which is then sent again).
 */
export async function withNotedTasks(
  plan: ResumePlan,
  store: Pick<ToolTaskStore, 'get'> | undefined,
  threadId: string,
): Promise<ResumePlan> {
  if (store === undefined || plan.rerun.length === 0) return plan;
  const namespace = [...TASK_LEDGER_NAMESPACE, threadId];
  const rerun = await Promise.all(
    plan.rerun.map(async (call) => {
      let taskId: unknown;
      try {
        taskId = (await store.get(namespace, call.id))?.value['taskId'];
      } catch {
        return call;
      }
      return typeof taskId === 'string' && taskId !== '' ? { ...call, taskId } : call;
    }),
  );
  return { ...plan, rerun };
}

/** The plan in one line for people: which calls run again, which follow a task, which are kept. */
export function describeResumePlan(plan: ResumePlan, threadId: string): string {
  const list = (calls: PlannedCall[]): string =>
    calls
      .map(
        (call) =>
          `${call.name} (${call.id}${call.taskId === undefined ? '' : `, task ${call.taskId}`})`,
      )
      .join(', ');
  if (plan.savedStep && plan.rerun.length === 0 && plan.completed.length === 0) {
    return `Continuing thread ${threadId} from its last checkpoint: the results of its last step (${plan.next.join(', ')}) were saved before the process stopped; the run goes on from them, nothing runs again.`;
  }
  if (plan.rerun.length === 0 && plan.completed.length === 0) {
    return `Continuing thread ${threadId} from its last checkpoint: ${plan.next.includes('agent') ? 'the model turn that did not finish runs again' : `the step(s) ${plan.next.join(', ')} run again`}; no tool call runs again.`;
  }
  const again = plan.rerun.filter((call) => call.taskId === undefined);
  const followed = plan.rerun.filter((call) => call.taskId !== undefined);
  const parts: string[] = [];
  if (again.length > 0) {
    parts.push(
      `these calls never completed (no result was saved) and run again: ${list(again)} (what they left in the sandbox is discarded, kept in a safety snapshot; write calls pass the policy again)`,
    );
  }
  if (followed.length > 0) {
    parts.push(
      `these calls became tasks on their server before the process stopped and follow the server's task (tasks/get) instead of calling the tool again: ${list(followed)}`,
    );
  }
  const kept =
    plan.completed.length === 0 ? '' : `; kept, never run again: ${list(plan.completed)}`;
  return `Continuing thread ${threadId} from its last checkpoint: ${parts.length === 0 ? 'no tool call runs again' : parts.join('; ')}${kept}.`;
}
