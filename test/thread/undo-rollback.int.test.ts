import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { HumanMessage } from '@langchain/core/messages';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AgentsError } from '../../src/errors.js';
import type { Checkpointer } from '../../src/checkpoint/backend.js';
import { listCheckpoints } from '../../src/thread/checkpoint-list.js';
import { rollback } from '../../src/thread/rollback.js';
import { withActiveRun } from '../../src/thread/active-runs.js';
import { readSandboxState, undoStack } from '../../src/core/sandbox-state.js';
import { undoRollback } from '../../src/thread/undo-rollback.js';
import type { LocalSandbox } from '../../src/sandbox/git/local-sandbox.js';
import { treeDigest } from '../helpers/tree-hash.js';
import { buildGraph, makeThreadParts, trackedFileTools } from './helpers.js';
import type { ScriptedCall, ThreadParts } from './helpers.js';

const SCRIPT: ScriptedCall[][] = [
  [{ name: 'write_file', args: { path: 'a.txt', content: 'A1' } }],
  [{ name: 'write_file', args: { path: '.gitignore', content: 'out/\n' } }],
  [{ name: 'write_file', args: { path: 'out/build.bin', content: 'binary-ish \u0000 bytes' } }],
  [{ name: 'write_file', args: { path: 'b.txt', content: 'B1' } }],
];

describe('undoRollback through a graph', () => {
  let parts: ThreadParts;
  let sandbox: LocalSandbox;
  let checkpointer: Checkpointer;
  const threadId = 'thread 1';
  const config = { configurable: { thread_id: threadId } };

  beforeEach(async () => {
    parts = await makeThreadParts();
    ({ sandbox, checkpointer } = parts);
  });

  afterEach(async () => {
    await parts.cleanup(checkpointer);
  });

  it('undoes two rollbacks one level at a time back to the exact tree, recorded in graph state across a reopen', async () => {
    const graph = buildGraph(trackedFileTools(sandbox), sandbox, checkpointer.saver, SCRIPT);
    await withActiveRun(threadId, () =>
      graph.invoke({ messages: [new HumanMessage('go')] }, config),
    );
    await writeFile(join(sandbox.root, 'late.txt'), 'written after the last snapshot');
    const before = await treeDigest(sandbox.root);
    expect(Object.keys(before)).toContain('out/build.bin');
    const headBefore = (await graph.getState(config)).config.configurable?.['checkpoint_id'];

    const entries = await listCheckpoints({ graph, threadId, sandbox });
    const afterA = entries.find((entry) => entry.changed.some((c) => c.path === 'a.txt'))!;
    const input = entries.at(-1)!;
    const first = await rollback({ graph, threadId, checkpointId: afterA.checkpointId, sandbox });
    expect(first.undoable).toBe(1);
    const middle = await treeDigest(sandbox.root);
    const second = await rollback({ graph, threadId, checkpointId: input.checkpointId, sandbox });
    expect(second.undoable).toBe(2);
    expect(Object.keys(await treeDigest(sandbox.root))).toEqual(['README.md', 'src/main.txt']);

    // The stack lives in the checkpointer: a fresh graph on a reopened file sees it.
    await checkpointer.close();
    checkpointer = await parts.openCheckpointer();
    const reopened = buildGraph(trackedFileTools(sandbox), sandbox, checkpointer.saver, SCRIPT);
    const state = readSandboxState((await reopened.getState(config)).values);
    expect(undoStack(state.rollbacks).map((item) => item.safety)).toEqual([
      first.safety,
      second.safety,
    ]);
    const listed = await listCheckpoints({ graph: reopened, threadId, sandbox });
    expect(listed.filter((entry) => entry.rollback).map((entry) => entry.rollback?.safety)).toEqual(
      [second.safety, first.safety],
    );

    const undo1 = await undoRollback({ graph: reopened, sandbox, threadId });
    expect(await treeDigest(sandbox.root)).toEqual(middle);
    expect(undo1.undoable).toBe(1);
    const undo2 = await undoRollback({ graph: reopened, sandbox, threadId });
    expect(await treeDigest(sandbox.root)).toEqual(before);
    expect(undo2.keptIgnored).toEqual(['out/build.bin']);
    expect(undo2.undoable).toBe(0);
    // State is back at the head the thread had, with the exact tree as its head snapshot.
    const back = await reopened.getState(config);
    expect(back.parentConfig?.configurable?.['checkpoint_id']).toBe(headBefore);
    expect(readSandboxState(back.values).sandboxHead).toBe(first.safety);
    expect(readSandboxState(back.values).changeLog).toHaveLength(4);

    await expect(undoRollback({ graph: reopened, sandbox, threadId })).rejects.toSatisfy(
      (error: unknown) => AgentsError.hasCode(error, 'CHECKPOINT_NOT_FOUND'),
    );
    // The undo of an undo, through its result, is a redo: undoable in turn.
    const redo = await undoRollback({ graph: reopened, sandbox, rollback: undo2 });
    expect(await treeDigest(sandbox.root)).toEqual(middle);
    expect(redo.undoable).toBe(1);
    await undoRollback({ graph: reopened, sandbox, threadId });
    expect(await treeDigest(sandbox.root)).toEqual(before);
  });
});
