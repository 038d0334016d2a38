/**
 * A hand-built LangGraph `StateGraph` whose `ToolNode` runs tools from a real MCP server
 * (`@modelcontextprotocol/server-everything`, spawned over stdio with the SDK's own client).
 * `createMcpToolAdapter` lists the connected client's tools, each with its capability verdict;
 * `createToolPipeline` wraps every call in the library's middleware (here an audit log, the
 * safety policy and the output budget, in the same order an actor uses), and LangGraph's
 * `ToolNode` runs the resulting `StructuredTool`s unchanged.
 *
 *   npx tsx examples/hand-built-graph.ts
 *
 * The model is the library's offline `ScriptedChatModel`; swap in any tool-calling chat model.
 * Exits non-zero if the tool results are not what the server should return.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AIMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import {
  END,
  MemorySaver,
  MessagesValue,
  START,
  StateGraph,
  StateSchema,
} from '@langchain/langgraph';
import { ToolNode } from '@langchain/langgraph/prebuilt';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { createMcpToolAdapter, createToolRegistry } from '../src/index.js';
import { createToolPipeline, createToolSet } from '../src/entries/graph.js';
import { createAuditLog, parsePolicy, readAuditLog } from '../src/entries/policy.js';
import { createScriptedModel } from '../src/testing/index.js';
import { check, isAlive } from './support/helpers.js';

const serverEntry = createRequire(import.meta.url).resolve(
  '@modelcontextprotocol/server-everything/dist/index.js',
);

// 1. Connect to the server the way any SDK user does.
const transport = new StdioClientTransport({
  command: process.execPath,
  args: [serverEntry, 'stdio'],
  stderr: 'ignore',
});
const client = new Client({ name: 'hand-built-graph', version: '1.0.0' });
await client.connect(transport);
const serverPid = transport.pid;
const auditDir = await mkdtemp(join(tmpdir(), 'hand-built-graph-'));
const auditFile = join(auditDir, 'audit.jsonl');
const auditLog = createAuditLog(auditFile);
try {
  // 2. The adapter: every tool (all pages) with a descriptor and capabilities.
  const adapter = createMcpToolAdapter({ serverName: 'everything', client });
  const entries = await adapter.listTools();
  for (const entry of entries) {
    if (['echo', 'get-sum'].includes(entry.descriptor.originalName)) {
      const { readOnly } = entry.descriptor.capabilities;
      console.log(
        `tool ${entry.descriptor.name}: ${readOnly.value ? 'read-only' : 'may write'} (${readOnly.source}: ${readOnly.reason})`,
      );
    }
  }
  // The pipeline: every call is audited, checked by the policy (`auto`: run what it allows
  // without asking) and cut to the output budget. Add `sandbox` for path rewriting and change
  // tracking, `allowedTools` for Agent Skills.
  const pipeline = createToolPipeline({
    audit: { log: auditLog, actor: 'hand-built' },
    policy: { policy: parsePolicy({ mode: 'auto' }, 'the hand-built graph') },
    budget: { maxBytes: 16 * 1024 },
  });
  // The tool set: the registry's tools as StructuredTools whose calls run through the pipeline,
  // kept in step with the registry (replace the server's group when it sends list_changed, and
  // the ToolNode runs the new tools on its next call).
  const registry = createToolRegistry();
  registry.replaceGroup('everything', entries);
  const toolSet = createToolSet({ registry, pipeline });
  const { tools } = toolSet;

  // 3. A model that calls two tools in one turn, then answers (replace with a real chat model).
  const model = await createScriptedModel({
    steps: [
      {
        tool_calls: [
          { name: 'echo', args: { message: 'hello graph' } },
          { name: 'get-sum', args: { a: 2, b: 3 } },
        ],
      },
      { content: 'The server echoed and added.' },
    ],
  });
  const boundModel = model.bindTools(tools);

  // 4. The graph: agent ⇄ ToolNode, the standard LangGraph loop.
  const State = new StateSchema({ messages: MessagesValue });
  const graph = new StateGraph(State)
    .addNode('agent', async (state) => ({ messages: [await boundModel.invoke(state.messages)] }))
    .addNode('tools', new ToolNode(tools))
    .addEdge(START, 'agent')
    .addConditionalEdges(
      'agent',
      (state) => {
        const last = state.messages.at(-1);
        return last !== undefined &&
          AIMessage.isInstance(last) &&
          (last.tool_calls?.length ?? 0) > 0
          ? 'tools'
          : END;
      },
      ['tools', END],
    )
    .addEdge('tools', 'agent')
    .compile({ checkpointer: new MemorySaver() });

  const result = await graph.invoke(
    { messages: [new HumanMessage('Echo "hello graph" and add 2 and 3.')] },
    { configurable: { thread_id: 'hand-built' } },
  );
  const toolMessages = result.messages.filter((message) => ToolMessage.isInstance(message));
  for (const message of toolMessages) console.log(`${message.name} -> ${message.text}`);
  console.log(`answer: ${result.messages.at(-1)?.text ?? ''}`);

  check(toolMessages.length === 2, `expected 2 tool results, got ${toolMessages.length}`);
  check(toolMessages[0]?.text === 'Echo: hello graph', `echo returned ${toolMessages[0]?.text}`);
  check(/\b5\b/.test(toolMessages[1]?.text ?? ''), `get-sum returned ${toolMessages[1]?.text}`);
  check(
    toolMessages.every((message) => message.status !== 'error'),
    'a tool call failed',
  );
  await auditLog.close();
  const { entries: audited } = await readAuditLog(auditFile);
  console.log(`audit: ${audited.map((entry) => `${entry.toolName} ${entry.event}`).join(', ')}`);
  check(audited.length === 2, `expected 2 audit entries, got ${audited.length}`);
  toolSet.close();
} finally {
  await auditLog.close();
  await client.close(); // the SDK transport ends the server process
  await rm(auditDir, { recursive: true, force: true });
}
// Give the child a moment to exit after its stdin closed.
for (let attempt = 0; attempt < 50 && serverPid !== null && isAlive(serverPid); attempt++) {
  await new Promise((resolve) => setTimeout(resolve, 100));
}
check(serverPid === null || !isAlive(serverPid), `the server (pid ${serverPid}) is still running`);
console.log('hand-built graph ok');
