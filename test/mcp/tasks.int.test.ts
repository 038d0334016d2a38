/**
 * Tasks (SEP-2663) on a 2026-07-28 server: a `tools/call` answered with a task is followed with
 * `tasks/get` to its result, which callers get as the tool's ordinary result (adapter, ToolNode,
 * managed server); the tool runs once; a failed task is a typed error naming the task; an abort
 * sends `tasks/cancel`.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AIMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import {
  Command,
  END,
  InMemoryStore,
  interrupt,
  MemorySaver,
  MessagesValue,
  START,
  StateGraph,
  StateSchema,
} from '@langchain/langgraph';
import { ToolNode } from '@langchain/langgraph/prebuilt';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { NamedServerConfig } from '../../src/config/server-schema.js';
import { AgentsErrorCode, ServerError } from '../../src/errors.js';
import { withTaskHandles } from '../../src/mcp/task-handles.js';
import { TASK_LEDGER_NAMESPACE } from '../../src/mcp/tasks.js';
import { createMcpToolAdapter, type McpToolAdapter } from '../../src/mcp/tool-adapter.js';
import { createManagedServer, type ManagedServer } from '../../src/servers/managed-server.js';
import { modernStdioArgs } from '../fixtures/fixture-process.js';

let dir: string;
let counter: string;
let client: Client;
let adapter: McpToolAdapter;
let managed: ManagedServer | undefined;

async function counted(): Promise<string[]> {
  const text = await readFile(counter, 'utf8').catch(() => '');
  return text.split('\n').filter((line) => line !== '');
}

function fixtureEnv(): Record<string, string> {
  return {
    ...(process.env as Record<string, string>),
    MODERN_FIXTURE_TASKS: '1',
    MODERN_FIXTURE_POLL_MS: '20',
    MODERN_FIXTURE_COUNTER: counter,
  };
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agents-tasks-'));
  counter = join(dir, 'executions');
  client = new Client(
    { name: 'tasks-test', version: '1.0.0' },
    { capabilities: {}, versionNegotiation: { mode: 'auto' } },
  );
  await client.connect(
    withTaskHandles(
      new StdioClientTransport({
        command: process.execPath,
        args: modernStdioArgs(),
        env: fixtureEnv(),
        stderr: 'pipe',
      }),
    ),
  );
  adapter = createMcpToolAdapter({ serverName: 'modern', client, callTimeoutMs: 5_000 });
}, 30_000);

afterAll(async () => {
  await managed?.close();
  await client?.close();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

describe('a tools/call answered with a task (Tasks extension, 2026-07-28)', () => {
  it('delivers the task result through the adapter, and the tool runs once', async () => {
    expect(client.getProtocolEra()).toBe('modern');
    const before = (await counted()).length;
    const result = await adapter.execute('slow_count', { text: 'one' });
    expect(result.isError).toBeUndefined();
    expect(result.content).toEqual([{ type: 'text', text: 'counted one' }]);
    expect((await counted()).slice(before)).toEqual(['start slow_count']);
  });

  it('delivers it through ToolNode as an ordinary ToolMessage', async () => {
    const tools = await adapter.tools();
    const name = tools.find((tool) => tool.name.endsWith('slow_count'))!.name;
    const output = (await new ToolNode(tools).invoke({
      messages: [
        new AIMessage({
          content: '',
          tool_calls: [{ id: 't1', name, args: { text: 'two' }, type: 'tool_call' }],
        }),
      ],
    })) as { messages: ToolMessage[] };
    expect(output.messages[0]?.status).toBe('success');
    expect(JSON.stringify(output.messages[0]?.content)).toContain('counted two');
  });

  it('a failed task is a typed error naming server, tool, task id and status', async () => {
    const error = await adapter.execute('slow_fail', {}).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(ServerError);
    const failure = error as ServerError;
    expect(failure.code).toBe(AgentsErrorCode.ToolCallFailed);
    expect(failure.details).toMatchObject({
      serverName: 'modern',
      toolName: 'slow_fail',
      taskStatus: 'failed',
      mcpErrorCode: -32603,
    });
    const taskId = failure.details['taskId'] as string;
    expect(taskId).toMatch(/^task-/);
    expect(failure.message).toContain(taskId);
    expect(failure.message).toContain('backend exploded');
  });

  it('an abort sends tasks/cancel for the task and ends the call as ABORTED', async () => {
    const abort = new AbortController();
    const call = adapter.execute('slow_forever', {}, { signal: abort.signal });
    // Abort once the task exists on the server (its start is counted when it is created).
    for (let tries = 0; tries < 200 && !(await counted()).includes('start slow_forever'); tries++)
      await new Promise((resolve) => setTimeout(resolve, 25));
    abort.abort();
    const error = (await call.then(
      () => undefined,
      (caught: unknown) => caught,
    )) as ServerError;
    expect(error.code).toBe(AgentsErrorCode.Aborted);
    const taskId = error.details['taskId'] as string;
    expect(error.message).toContain(`task ${taskId}`);
    expect(await counted()).toContain(`cancel ${taskId}`);
  });

  it('a graph run that pauses after the call became a task resumes on the same task', async () => {
    // The tools step holds the task call and a tool that pauses the run (interrupt): the step
    // is replayed on resume, and the task call must follow its noted task, not call again.
    const approve = tool(() => `approved ${String(interrupt('go on?'))}`, {
      name: 'approve',
      description: 'Asks a person.',
      schema: z.object({}),
    });
    const tools = await adapter.tools();
    const name = tools.find((entry) => entry.name.endsWith('slow_count'))!.name;
    const store = new InMemoryStore();
    const script = [
      new AIMessage({
        content: '',
        tool_calls: [
          { id: 'r1', name, args: { text: 'resumed' }, type: 'tool_call' },
          { id: 'r2', name: 'approve', args: {}, type: 'tool_call' },
        ],
      }),
      new AIMessage({ content: 'done' }),
    ];
    let turn = 0;
    const graph = new StateGraph(new StateSchema({ messages: MessagesValue }))
      .addNode('agent', () => ({ messages: [script[turn++]!] }))
      .addNode('tools', new ToolNode([...tools, approve]))
      .addEdge(START, 'agent')
      .addConditionalEdges('agent', (state) =>
        (state.messages.at(-1) as AIMessage).tool_calls?.length ? 'tools' : END,
      )
      .addEdge('tools', 'agent')
      .compile({ checkpointer: new MemorySaver(), store });
    const config = { configurable: { thread_id: 'tasks-resume' } };
    const before = (await counted()).length;
    const paused = await graph.invoke({ messages: [new HumanMessage('go')] }, config);
    expect((paused as { __interrupt__?: unknown[] }).__interrupt__).toHaveLength(1);
    // The person answers later; by then the call has become a task, noted in the run's store.
    const ledger = [...TASK_LEDGER_NAMESPACE, 'tasks-resume'];
    for (let tries = 0; tries < 400 && (await store.get(ledger, 'r1')) === null; tries++)
      await new Promise((resolve) => setTimeout(resolve, 25));
    expect((await store.get(ledger, 'r1'))?.value).toMatchObject({ toolName: 'slow_count' });
    const done = await graph.invoke(new Command({ resume: 'yes' }), config);
    const results = done.messages.filter((message) => message instanceof ToolMessage);
    expect(results.map((message) => message.content)).toEqual(['counted resumed', 'approved yes']);
    expect((await counted()).slice(before)).toEqual(['start slow_count']);
  });

  it('a managed server follows the task too', async () => {
    const config = {
      name: 'managed-modern',
      transport: 'stdio',
      command: process.execPath,
      args: modernStdioArgs(),
      env: {
        MODERN_FIXTURE_TASKS: '1',
        MODERN_FIXTURE_POLL_MS: '20',
        MODERN_FIXTURE_COUNTER: counter,
      },
      trusted: true,
      timeouts: { startupMs: 30_000, callMs: 5_000, maxCallMs: 20_000 },
    } as NamedServerConfig;
    managed = createManagedServer(config, { runDir: null });
    await managed.start();
    const before = (await counted()).length;
    const result = await managed.callTool('slow_count', { text: 'three' }, {});
    expect(result.content).toEqual([{ type: 'text', text: 'counted three' }]);
    expect((await counted()).slice(before)).toEqual(['start slow_count']);
  }, 40_000);
});
