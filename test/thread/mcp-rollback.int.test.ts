import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HumanMessage } from '@langchain/core/messages';
import { MemorySaver } from '@langchain/langgraph';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { toStructuredTool } from '../../src/mcp/structured-tool.js';
import { createMcpToolAdapter } from '../../src/mcp/tool-adapter.js';
import { createChangeTrackingMiddleware } from '../../src/pipeline/change-tracking.js';
import { listCheckpoints } from '../../src/thread/checkpoint-list.js';
import { rollback } from '../../src/thread/rollback.js';
import { readSandboxState } from '../../src/core/sandbox-state.js';
import { composeMiddleware } from '../../src/core/tool-middleware.js';
import { createSandbox } from '../../src/sandbox/git/local-sandbox.js';
import type { LocalSandbox } from '../../src/sandbox/git/local-sandbox.js';
import { fixtureStdioArgs } from '../fixtures/fixture-process.js';
import { buildGraph, makeRepo, readTree } from './helpers.js';

describe('rollback of a graph whose tools write through a real MCP server (stdio)', () => {
  let repo: Awaited<ReturnType<typeof makeRepo>>;
  let sandbox: LocalSandbox;
  let client: Client;

  beforeEach(async () => {
    repo = await makeRepo();
    sandbox = await createSandbox({ source: repo.dir });
    client = new Client({ name: 'checkpoints-test', version: '0.0.0' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: fixtureStdioArgs(['--tools', 'basic', '--cwd', sandbox.root]),
        stderr: 'ignore',
      }),
    );
  });
  afterEach(async () => {
    await client.close();
    await sandbox.close();
    await repo.cleanup();
  });

  it('tracks the server-side writes per call and rolls files and state back to any checkpoint', async () => {
    const adapter = createMcpToolAdapter({ serverName: 'fx', client });
    const entries = await adapter.listTools();
    const tracking = createChangeTrackingMiddleware(sandbox);
    const tools = entries.map((entry) =>
      toStructuredTool(
        entry.descriptor,
        composeMiddleware([tracking], (request) =>
          entry.execute(request.args, request.context, request.capabilities),
        ),
      ),
    );
    const nameOf = (original: string): string =>
      entries.find((entry) => entry.descriptor.originalName === original)!.descriptor.name;
    const script = [
      [{ name: nameOf('write_file'), args: { path: 'docs/a.md', content: 'A1' } }],
      [
        { name: nameOf('write_file'), args: { path: 'docs/a.md', content: 'A2' } },
        { name: nameOf('delete_file'), args: { path: 'README.md' } },
      ],
      [{ name: nameOf('read_file'), args: { path: 'docs/a.md' } }],
    ];
    const graph = buildGraph(tools, sandbox, new MemorySaver(), script);
    const config = { configurable: { thread_id: 'mcp-1' } };
    const final = await graph.invoke({ messages: [new HumanMessage('go')] }, config);
    expect(await readTree(sandbox.root)).toEqual({
      'docs/a.md': 'A2',
      'src/main.txt': 'main v1\n',
    });
    const log = readSandboxState(final).changeLog;
    expect(log.map((record) => [record.toolId, record.changed])).toEqual([
      ['mcp:fx/write_file', [{ status: 'A', path: 'docs/a.md' }]],
      ['mcp:fx/write_file', [{ status: 'M', path: 'docs/a.md' }]],
      ['mcp:fx/delete_file', [{ status: 'D', path: 'README.md' }]],
    ]);

    const checkpoints = await listCheckpoints({ graph, threadId: 'mcp-1', sandbox });
    const afterFirst = checkpoints.find(
      (entry) => entry.records.length === 1 && entry.records[0]!.changed[0]?.status === 'A',
    )!;
    await rollback({ graph, threadId: 'mcp-1', checkpointId: afterFirst.checkpointId, sandbox });
    expect(await readTree(sandbox.root)).toEqual({
      'README.md': '# readme\n',
      'docs/a.md': 'A1',
      'src/main.txt': 'main v1\n',
    });
    const state = await graph.getState(config);
    expect(readSandboxState(state.values)).toEqual({
      changeLog: [log[0]],
      sandboxHead: log[0]!.snapshot,
      rollbacks: [expect.objectContaining({ kind: 'rollback', to: afterFirst.checkpointId })],
    });

    // Back to the start: the base tree.
    const first = checkpoints.at(-1)!;
    await rollback({ graph, threadId: 'mcp-1', checkpointId: first.checkpointId, sandbox });
    expect(await readTree(sandbox.root)).toEqual({
      'README.md': '# readme\n',
      'src/main.txt': 'main v1\n',
    });
  });
});
