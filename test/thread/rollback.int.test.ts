import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { HumanMessage } from '@langchain/core/messages';
import { AgentsError } from '../../src/errors.js';
import { readSandboxState } from '../../src/core/sandbox-state.js';
import type { Checkpointer } from '../../src/checkpoint/backend.js';
import { listCheckpoints } from '../../src/thread/checkpoint-list.js';
import { markRunActive, withActiveRun } from '../../src/thread/active-runs.js';
import { rollback } from '../../src/thread/rollback.js';
import { undoRollback } from '../../src/thread/undo-rollback.js';
import type { LocalSandbox } from '../../src/sandbox/git/local-sandbox.js';
import { buildGraph, makeThreadParts, readTree, trackedFileTools } from './helpers.js';
import type { ThreadParts } from './helpers.js';

describe('tracked ToolNode + SQLite checkpointer + rollback', () => {
  let parts: ThreadParts;
  let sandbox: LocalSandbox;
  let checkpointer: Checkpointer;
  const threadId = 'thread-1';
  const config = { configurable: { thread_id: threadId } };

  beforeEach(async () => {
    parts = await makeThreadParts();
    ({ sandbox, checkpointer } = parts);
  });

  afterEach(async () => {
    await parts.cleanup(checkpointer);
  });

  async function runScript() {
    const graph = buildGraph(trackedFileTools(sandbox), sandbox, checkpointer.saver);
    const final = await withActiveRun(threadId, () =>
      graph.invoke({ messages: [new HumanMessage('go')] }, config),
    );
    return { graph, final };
  }

  it('records every write in changeLog and sandboxHead, and lists checkpoints with their file changes', async () => {
    const { graph, final } = await runScript();
    const state = readSandboxState(final);
    expect(state.changeLog.map((record) => [record.toolCallId, record.changed])).toEqual([
      ['t0-0', [{ status: 'A', path: 'a.txt' }]],
      // Parallel calls: records come in tool-call order, each with only its own file.
      ['t1-0', [{ status: 'A', path: 'b.txt' }]],
      ['t1-1', [{ status: 'M', path: 'src/main.txt' }]],
      ['t2-0', [{ status: 'D', path: 'README.md' }]],
      ['t2-1', [{ status: 'A', path: 'half.txt' }]],
    ]);
    expect(state.sandboxHead).toBe(sandbox.head);
    // The crashed call's error reached the model as an error ToolMessage.
    const crash = final.messages.find(
      (message) =>
        message.getType() === 'tool' &&
        (message as { tool_call_id?: string }).tool_call_id === 't2-1',
    );
    expect(crash?.content).toContain('disk on fire');

    const entries = await listCheckpoints({ graph, threadId, sandbox });
    const withChanges = entries.filter((entry) => entry.changed.length > 0).reverse();
    expect(withChanges.map((entry) => entry.changed)).toEqual([
      [{ status: 'A', path: 'a.txt' }],
      [
        { status: 'A', path: 'b.txt' },
        { status: 'M', path: 'src/main.txt' },
      ],
      [
        { status: 'D', path: 'README.md' },
        { status: 'A', path: 'half.txt' },
      ],
    ]);
    expect(withChanges.every((entry) => entry.next.includes('agent'))).toBe(true);
  });

  it('rolls back files and state to an earlier checkpoint, survives a reopen of the SQLite file, and can be undone', async () => {
    const { graph } = await runScript();
    const treeAtEnd = await readTree(sandbox.root);
    // A file edited after the last snapshot, by something other than a tool.
    await writeFile(join(sandbox.root, 'scratch.txt'), 'late edit');
    const entries = await listCheckpoints({ graph, threadId, sandbox });
    const afterFirstWrite = entries.find((entry) =>
      entry.changed.some((change) => change.path === 'a.txt'),
    )!;
    const historyBefore = entries.length;

    // Refused while a run is active.
    {
      using _mark = markRunActive(threadId);
      await expect(
        rollback({ graph, threadId, checkpointId: afterFirstWrite.checkpointId, sandbox }),
      ).rejects.toSatisfy((error: unknown) => AgentsError.hasCode(error, 'RUN_ACTIVE'));
    }

    const dry = await rollback({
      graph,
      threadId,
      checkpointId: afterFirstWrite.checkpointId,
      sandbox,
      dryRun: true,
    });
    expect(dry.preview.map((change) => change.path).sort()).toEqual([
      'README.md',
      'b.txt',
      'half.txt',
      'src/main.txt',
    ]);
    expect(await readTree(sandbox.root)).toEqual({ ...treeAtEnd, 'scratch.txt': 'late edit' });

    const result = await rollback({
      graph,
      threadId,
      checkpointId: afterFirstWrite.checkpointId,
      sandbox,
      note: 'Files were rolled back to after the first write.',
    });
    expect(await readTree(sandbox.root)).toEqual({
      'README.md': '# readme\n',
      'a.txt': 'A1',
      'src/main.txt': 'main v1\n',
    });
    expect(result.safety).toBeDefined();
    expect(result.preview.map((change) => change.path).sort()).toEqual([
      'README.md',
      'b.txt',
      'half.txt',
      'scratch.txt',
      'src/main.txt',
    ]);
    const forked = await graph.getState(config);
    expect(forked.config.configurable?.['checkpoint_id']).toBe(
      result.forkConfig?.configurable?.['checkpoint_id'],
    );
    expect(forked.values.sandboxHead).toBe(afterFirstWrite.sandboxHead);
    expect(forked.values.changeLog).toHaveLength(1);
    expect(forked.values.messages.at(-1)?.content).toBe(
      'Files were rolled back to after the first write.',
    );

    // Close and reopen the SQLite file: history (both branches) and rollback still work.
    await checkpointer.close();
    checkpointer = await parts.openCheckpointer();
    const reopened = buildGraph(trackedFileTools(sandbox), sandbox, checkpointer.saver);
    const after = await listCheckpoints({ graph: reopened, threadId, sandbox });
    expect(after.length).toBeGreaterThan(historyBefore);
    expect(after.map((entry) => entry.checkpointId)).toContain(entries[0]!.checkpointId);

    // Undo the rollback: the exact tree before it, including the late edit, and the old state.
    const undone = await undoRollback({ graph: reopened, sandbox, rollback: result });
    expect(await readTree(sandbox.root)).toEqual({ ...treeAtEnd, 'scratch.txt': 'late edit' });
    const restored = await reopened.getState(config);
    expect(restored.values.changeLog).toHaveLength(5);
    expect(restored.values.sandboxHead).toBe(result.safety);

    // Roll back again on the reopened store, to the newest checkpoint of the old branch, then resume.
    const again = await rollback({
      graph: reopened,
      threadId,
      checkpointId: afterFirstWrite.checkpointId,
      sandbox,
    });
    expect(await readTree(sandbox.root)).toEqual({
      'README.md': '# readme\n',
      'a.txt': 'A1',
      'src/main.txt': 'main v1\n',
    });
    const resumed = await withActiveRun(threadId, () => reopened.invoke(null, again.forkConfig));
    expect(readSandboxState(resumed).changeLog.map((record) => record.changed[0]?.path)).toEqual([
      'a.txt',
      'b.txt',
      'src/main.txt',
      'README.md',
      'half.txt',
    ]);
    expect(await readTree(sandbox.root)).toEqual({
      'a.txt': 'A1',
      'b.txt': 'B1',
      'half.txt': 'half',
      'src/main.txt': 'main v2\n',
    });
    expect(undone.safety).toBeDefined();
  });

  it('two rollbacks started together on one thread: one runs, the other is refused', async () => {
    const { graph } = await runScript();
    const entries = await listCheckpoints({ graph, threadId, sandbox });
    const target = entries.find((entry) =>
      entry.changed.some((change) => change.path === 'a.txt'),
    )!;
    const outcomes = await Promise.allSettled([
      rollback({ graph, threadId, checkpointId: target.checkpointId, sandbox }),
      rollback({ graph, threadId, checkpointId: target.checkpointId, sandbox }),
    ]);
    expect(outcomes.map((outcome) => outcome.status).sort()).toEqual(['fulfilled', 'rejected']);
    const refused = outcomes.find((outcome) => outcome.status === 'rejected');
    expect(AgentsError.hasCode(refused?.reason, 'RUN_ACTIVE')).toBe(true);
    expect(await readTree(sandbox.root)).toEqual({
      'README.md': '# readme\n',
      'a.txt': 'A1',
      'src/main.txt': 'main v1\n',
    });
  });

  it('refuses an unknown checkpoint with CHECKPOINT_NOT_FOUND and changes nothing', async () => {
    const { graph } = await runScript();
    const tree = await readTree(sandbox.root);
    await expect(
      rollback({ graph, threadId, checkpointId: '1f000000-0000-6000-8000-000000000000', sandbox }),
    ).rejects.toSatisfy((error: unknown) => AgentsError.hasCode(error, 'CHECKPOINT_NOT_FOUND'));
    expect(await readTree(sandbox.root)).toEqual(tree);
  });
});
