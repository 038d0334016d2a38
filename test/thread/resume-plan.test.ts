import { AIMessage, ToolMessage } from '@langchain/core/messages';
import { InMemoryStore } from '@langchain/langgraph';
import { describe, expect, it } from 'vitest';
import { taskLedger } from '../../src/mcp/tasks.js';
import { describeResumePlan, planResume, withNotedTasks } from '../../src/thread/resume-plan.js';

/*
 * The resume plan of a thread killed mid-turn (issue 38): a call noted as an MCP task in the
 * run's store is said to follow that task, not to run again; the ledger's own writer
 * (`taskLedger`) notes it, so the plan reads the layout the call will recall.
 */

/** A turn of two calls, `append` finished (its result saved), `slow` not. */
function killedTurn() {
  const turn = new AIMessage({
    content: '',
    tool_calls: [
      { id: 'call_a', name: 'append', args: { text: 'x' } },
      { id: 'call_s', name: 'slow', args: { text: 'sheep' } },
    ],
  });
  const saved = new ToolMessage({ content: 'ok', tool_call_id: 'call_a', name: 'append' });
  return planResume({
    next: ['tools'],
    values: { messages: [turn] },
    tasks: [
      { id: 't1', name: 'tools', interrupts: [], result: { messages: [saved] } },
      { id: 't2', name: 'tools', interrupts: [] },
    ],
  } as never);
}

describe('resume plan of a call that became an MCP task', () => {
  it('without a noted task, says the call never completed and runs again', async () => {
    const plan = await withNotedTasks(killedTurn(), new InMemoryStore(), 't1');
    expect(plan.rerun).toEqual([{ id: 'call_s', name: 'slow' }]);
    expect(describeResumePlan(plan, 't1')).toBe(
      'Continuing thread t1 from its last checkpoint: these calls never completed (no result was saved) and run again: slow (call_s) (what they left in the sandbox is discarded, kept in a safety snapshot; write calls pass the policy again); kept, never run again: append (call_a).',
    );
  });

  it('with a noted task, names the task it follows instead of calling again', async () => {
    const store = new InMemoryStore();
    const context = { threadId: 't1', toolCallId: 'call_s', taskStore: store };
    await taskLedger(context, 'remote', 'slow_count', { text: 'sheep' })?.note({
      taskId: 'task-7',
    });
    // Another thread's note for the same call id is not this thread's.
    const other = { threadId: 't2', toolCallId: 'call_a', taskStore: store };
    await taskLedger(other, 'remote', 'append', { text: 'x' })?.note({ taskId: 'task-8' });
    expect(await store.get(['agents', 'mcp-tasks', 't1'], 'call_s')).not.toBeNull();

    const plan = await withNotedTasks(killedTurn(), store, 't1');
    expect(plan.rerun).toEqual([{ id: 'call_s', name: 'slow', taskId: 'task-7' }]);
    const line = describeResumePlan(plan, 't1');
    expect(line).toBe(
      "Continuing thread t1 from its last checkpoint: these calls became tasks on their server before the process stopped and follow the server's task (tasks/get) instead of calling the tool again: slow (call_s, task task-7); kept, never run again: append (call_a).",
    );
    expect(line).not.toContain('never completed');
  });

  it('a store that fails to answer leaves today’s wording', async () => {
    const broken = { get: () => Promise.reject(new Error('database is down')) };
    const plan = await withNotedTasks(killedTurn(), broken, 't1');
    expect(describeResumePlan(plan, 't1')).toContain('never completed (no result was saved)');
  });
});
