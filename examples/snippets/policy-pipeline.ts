// examples/snippets/policy-pipeline.ts — run: npx tsx examples/snippets/policy-pipeline.ts
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { createMcpToolAdapter } from '@agents/langgraph-mcp';
import { createToolPipeline, toStructuredTool } from '@agents/langgraph-mcp/graph';
import { createFileSpill, createMemoryPinStore, parsePolicy } from '@agents/langgraph-mcp/policy';
import type { Approver } from '@agents/langgraph-mcp/policy';
import { createSandbox } from '@agents/langgraph-mcp/sandbox';

const project = await mkdtemp(join(tmpdir(), 'my-project-'));
const sandbox = await createSandbox({ source: project }); // the tools work on a copy
const client = new Client({ name: 'my-app', version: '1.0.0' });
const fs = ['-y', '@modelcontextprotocol/server-filesystem', sandbox.root];
await client.connect(new StdioClientTransport({ command: 'npx', args: fs }));
try {
  const adapter = createMcpToolAdapter({ serverName: 'fs', client });
  // Outside a graph, `approve` asks your own way (in a graph, the default: LangGraph `interrupt`).
  const asked: string[] = [];
  const approve: Approver = ({ toolName, args }) => {
    asked.push(`${toolName} ${String(args['path'])}`);
    return args['path'] === 'notes.md'
      ? { type: 'approve', by: 'me' }
      : { type: 'reject', message: 'only notes.md', by: 'me' };
  };

  // Mode ask: read-only tools run, the others ask; a rule denies moves outright.
  const policy = parsePolicy({
    mode: 'ask',
    rules: [{ match: { tool: 'mcp:fs/move_file' }, decision: 'deny', reason: 'no moves' }],
  });
  const pipeline = createToolPipeline({
    policy: { policy, name: 'my graph', pins: createMemoryPinStore(), approve },
    budget: { maxBytes: 16_384, spill: createFileSpill(sandbox.root) },
    sandbox, // path rewriting + change tracking
  });
  const tools = (await adapter.listTools()).map((entry) =>
    toStructuredTool(entry.descriptor, pipeline.wrap(entry)),
  );

  const tool = (name: string) => tools.find((candidate) => candidate.name === name)!;
  const call = async (name: string, args: Record<string, unknown>) => {
    const message = await tool(name).invoke({ type: 'tool_call', id: name, name, args });
    console.log(`${name} ${JSON.stringify(args)} → ${message.status}: ${message.text}`);
    return message.status;
  };
  // Paths are the model's (logical, relative to the project); the sandbox maps them.
  assert.equal(await call('write_file', { path: 'notes.md', content: 'hi' }), 'success');
  assert.equal(await call('write_file', { path: 'secrets.env', content: 'x' }), 'error');
  assert.equal(await call('move_file', { source: 'notes.md', destination: 'a.md' }), 'error');
  assert.equal(await call('read_text_file', { path: 'notes.md' }), 'success'); // read-only: runs
  assert.deepEqual(asked, ['write_file notes.md', 'write_file secrets.env']);
  assert.equal(await readFile(join(sandbox.root, 'notes.md'), 'utf8'), 'hi');
  assert.ok(!existsSync(join(sandbox.root, 'secrets.env')), 'the rejected write never ran');
  assert.deepEqual(await sandbox.diff(sandbox.base, sandbox.head), [
    { status: 'A', path: 'notes.md' },
  ]);
} finally {
  await client.close(); // stops the server
  await sandbox.close(); // removes the sandbox
  await rm(project, { recursive: true, force: true });
}
console.log('policy pipeline ok');
