import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { AIMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { fakeModel } from '@langchain/core/testing';
import { MemorySaver } from '@langchain/langgraph';
import { createAgent } from 'langchain';
import { z } from 'zod';
import { createSandboxAgentMiddleware } from '../../src/pipeline/agent-middleware.js';
import { findChangeRecord } from '../../src/pipeline/change-tracking.js';
import { listCheckpoints } from '../../src/thread/checkpoint-list.js';
import { rollback } from '../../src/thread/rollback.js';
import { readSandboxState } from '../../src/core/sandbox-state.js';
import { createSandbox } from '../../src/sandbox/git/local-sandbox.js';
import type { LocalSandbox } from '../../src/sandbox/git/local-sandbox.js';
import { makeRepo, readTree, trackedFileTools } from '../thread/helpers.js';

describe('createAgent middleware (real git sandbox)', () => {
  let repo: Awaited<ReturnType<typeof makeRepo>>;
  let sandbox: LocalSandbox;

  beforeEach(async () => {
    repo = await makeRepo();
    sandbox = await createSandbox({ source: repo.dir });
  });
  afterEach(async () => {
    await sandbox.close();
    await repo.cleanup();
  });

  function plainTools() {
    const writeFileTool = tool(
      async ({ path, content, delayMs }) => {
        if (delayMs !== undefined) await new Promise((resolve) => setTimeout(resolve, delayMs));
        await mkdir(dirname(join(sandbox.root, path)), { recursive: true });
        await writeFile(join(sandbox.root, path), content);
        return `wrote ${path}`;
      },
      {
        name: 'write_file',
        description: 'write a file',
        schema: z.object({ path: z.string(), content: z.string(), delayMs: z.number().optional() }),
      },
    );
    const crashTool = tool(
      async ({ path }) => {
        await writeFile(join(sandbox.root, path), 'half');
        throw new Error('disk on fire');
      },
      { name: 'crash_write', description: 'crashes', schema: z.object({ path: z.string() }) },
    );
    const lookTool = tool(async () => 'nothing to see', {
      name: 'look',
      description: 'reads',
      schema: z.object({}),
    });
    return [writeFileTool, crashTool, lookTool];
  }

  it('tracks parallel calls, survives a throwing tool, fills changeLog/sandboxHead, and rolls back', async () => {
    const model = fakeModel()
      .respondWithTools([
        { name: 'write_file', args: { path: 'slow.txt', content: 'S', delayMs: 50 }, id: 'w1' },
        { name: 'write_file', args: { path: 'fast.txt', content: 'F' }, id: 'w2' },
        { name: 'look', args: {}, id: 'r1' },
      ])
      .respondWithTools([{ name: 'crash_write', args: { path: 'half.txt' }, id: 'c1' }])
      .respond(new AIMessage('done'));
    const agent = createAgent({
      model,
      tools: plainTools(),
      middleware: [createSandboxAgentMiddleware({ sandbox, readOnlyTools: ['look'] })],
      checkpointer: new MemorySaver(),
    });
    const config = { configurable: { thread_id: 'a1' } };
    const final = await agent.invoke({ messages: [new HumanMessage('go')] }, config);
    const state = readSandboxState(final);
    expect(
      state.changeLog.map((record) => [record.toolCallId, record.toolId, record.changed]),
    ).toEqual(
      expect.arrayContaining([
        ['w1', 'tool:write_file', [{ status: 'A', path: 'slow.txt' }]],
        ['w2', 'tool:write_file', [{ status: 'A', path: 'fast.txt' }]],
        ['c1', 'tool:crash_write', [{ status: 'A', path: 'half.txt' }]],
      ]),
    );
    expect(state.changeLog).toHaveLength(3);
    expect(state.sandboxHead).toBe(sandbox.head);
    const crash = final.messages.find(
      (message) => ToolMessage.isInstance(message) && message.tool_call_id === 'c1',
    );
    expect(ToolMessage.isInstance(crash) && crash.status).toBe('error');
    expect(crash?.content).toContain('disk on fire');
    expect(
      ToolMessage.isInstance(crash) ? findChangeRecord(crash.artifact)?.changed : undefined,
    ).toEqual([{ status: 'A', path: 'half.txt' }]);

    // The checkpoint right after the parallel step has the head after both writes.
    const entries = await listCheckpoints({ graph: agent.graph, threadId: 'a1', sandbox });
    const parallelStep = entries.find((entry) =>
      entry.records.some((record) => record.toolCallId === 'w1'),
    )!;
    expect(parallelStep.changed).toEqual([
      { status: 'A', path: 'fast.txt' },
      { status: 'A', path: 'slow.txt' },
    ]);
    await rollback({
      graph: agent.graph,
      threadId: 'a1',
      checkpointId: parallelStep.checkpointId,
      sandbox,
    });
    expect(await readTree(sandbox.root)).toEqual({
      'README.md': '# readme\n',
      'fast.txt': 'F',
      'slow.txt': 'S',
      'src/main.txt': 'main v1\n',
    });
  });

  it('does not snapshot twice when the tool is itself tracked by the ToolMiddleware', async () => {
    const model = fakeModel()
      .respondWithTools([{ name: 'write_file', args: { path: 'x.txt', content: 'X' }, id: 'x1' }])
      .respond(new AIMessage('done'));
    const agent = createAgent({
      model,
      tools: trackedFileTools(sandbox).filter((t) => t.name === 'write_file'),
      middleware: [createSandboxAgentMiddleware({ sandbox })],
      checkpointer: new MemorySaver(),
    });
    const final = await agent.invoke(
      { messages: [new HumanMessage('go')] },
      { configurable: { thread_id: 'a2' } },
    );
    const state = readSandboxState(final);
    expect(state.changeLog).toEqual([
      {
        toolCallId: 'x1',
        toolId: 'custom:write_file',
        parent: sandbox.base,
        snapshot: sandbox.head,
        changed: [{ status: 'A', path: 'x.txt' }],
        scan: 'full',
        scanReason: expect.any(String),
      },
    ]);
  });
});
