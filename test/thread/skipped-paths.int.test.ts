import { stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { HumanMessage, ToolMessage } from '@langchain/core/messages';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createChangeTrackingMiddleware } from '../../src/pipeline/change-tracking.js';
import type { Checkpointer } from '../../src/checkpoint/backend.js';
import { listCheckpoints } from '../../src/thread/checkpoint-list.js';
import { rollback } from '../../src/thread/rollback.js';
import { withActiveRun } from '../../src/thread/active-runs.js';
import { readSandboxState } from '../../src/core/sandbox-state.js';
import { composeMiddleware } from '../../src/core/tool-middleware.js';
import { toStructuredTool } from '../../src/mcp/structured-tool.js';
import type { LocalSandbox } from '../../src/sandbox/git/local-sandbox.js';
import { buildGraph, descriptor, makeThreadParts, trackedFileTools } from './helpers.js';
import type { ScriptedCall, ThreadParts } from './helpers.js';

const BIG = 60 * 1024 * 1024;

const SCRIPT: ScriptedCall[][] = [
  [{ name: 'write_file', args: { path: 'a.txt', content: 'A1' } }],
  [{ name: 'write_big', args: { path: 'big.bin' } }],
  [{ name: 'write_file', args: { path: 'b.txt', content: 'B1' } }],
];

describe('files left out of snapshots are reported', () => {
  let parts: ThreadParts;
  let sandbox: LocalSandbox;
  let checkpointer: Checkpointer;
  const threadId = 'big-1';
  const config = { configurable: { thread_id: threadId } };

  beforeEach(async () => {
    // The default size cap (50 MiB).
    parts = await makeThreadParts();
    ({ sandbox, checkpointer } = parts);
  });

  afterEach(async () => {
    await parts.cleanup(checkpointer);
  });

  it('names a 60 MB file on the call’s change record, to the model, in checkpoints and in the rollback preview', async () => {
    const tracking = createChangeTrackingMiddleware(sandbox);
    const writeBig = toStructuredTool(
      descriptor('write_big', false, { path: { type: 'string' } }),
      composeMiddleware([tracking], async ({ args }): Promise<CallToolResult> => {
        await writeFile(join(sandbox.root, String(args['path'])), Buffer.alloc(BIG, 7));
        return { content: [{ type: 'text', text: 'wrote it' }] };
      }),
    );
    const graph = buildGraph(
      [...trackedFileTools(sandbox), writeBig],
      sandbox,
      checkpointer.saver,
      SCRIPT,
    );
    const final = await withActiveRun(threadId, () =>
      graph.invoke({ messages: [new HumanMessage('go')] }, config),
    );
    const log = readSandboxState(final).changeLog;
    const bigRecord = log.find((record) => record.toolCallId === 't1-0');
    expect(bigRecord?.skipped).toEqual([{ path: 'big.bin', reason: 'size-cap', size: BIG }]);
    expect(bigRecord?.changed).toEqual([]);
    // Only the call that left it out names it.
    expect(log.filter((record) => record.skipped !== undefined)).toHaveLength(1);
    const told = final.messages.find(
      (message) => ToolMessage.isInstance(message) && message.tool_call_id === 't1-0',
    );
    expect(JSON.stringify(told?.content)).toMatch(
      /not captured by the sandbox snapshots.*big\.bin \(60\.0 MB, over the snapshot size cap\)/,
    );

    const entries = await listCheckpoints({ graph, threadId, sandbox });
    expect(entries.flatMap((entry) => entry.records.flatMap((r) => r.skipped ?? []))).toEqual([
      { path: 'big.bin', reason: 'size-cap', size: BIG },
    ]);

    const target = entries.find((entry) => entry.changed.some((c) => c.path === 'a.txt'))!;
    const dry = await rollback({
      graph,
      threadId,
      checkpointId: target.checkpointId,
      sandbox,
      dryRun: true,
    });
    expect(dry.notRestored).toEqual([{ path: 'big.bin', reason: 'size-cap', size: BIG }]);
    const done = await rollback({ graph, threadId, checkpointId: target.checkpointId, sandbox });
    expect(done.notRestored?.map((item) => item.path)).toEqual(['big.bin']);
    // It stayed, as reported, while b.txt went.
    expect((await stat(join(sandbox.root, 'big.bin'))).size).toBe(BIG);
    expect(done.preview).toEqual([{ status: 'D', path: 'b.txt' }]);
  });
});
