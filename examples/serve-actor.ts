/**
 * Serving an actor's tools over MCP: the same tools, the same middleware chain (path rewriting,
 * change tracking in the actor's sandbox), a second transport. Here the server and an SDK client
 * are joined in memory; `agents serve --actor NAME` does the same over stdio or HTTP.
 *
 *   npx tsx examples/serve-actor.ts
 *
 * Exits non-zero unless the client sees our capability annotations, its write lands in the
 * actor's sandbox (not the user's repo), and the result carries the change record.
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { createActor } from '../src/index.js';
import { createWorkspaceStore } from '../src/entries/actors.js';
import { ResultMetaKey } from '../src/entries/graph.js';
import { createMcpServer } from '../src/serving/index.js';
import { createScriptedModel } from '../src/testing/index.js';
import { check, makeGitRepo } from './support/helpers.js';

const temp = await realpath(await mkdtemp(join(tmpdir(), 'agents-serve-')));
try {
  const project = join(temp, 'project');
  makeGitRepo(project, { 'README.md': '# served\n' });
  const store = createWorkspaceStore(join(temp, '.agents'));
  await store.put('skill', 'files', {
    description: 'Built-in file tools.',
    tools: ['read_file', 'write_file'],
  });

  // The actor owns the sandbox and the middleware; no model is needed to serve its tools.
  await using actor = await createActor({
    config: {
      name: 'served',
      skills: ['files'],
      sandbox: { source: project },
      checkpointer: { type: 'memory' },
      // Served calls cannot pause for approval (that needs a graph), so let writes run.
      policy: { mode: 'auto' },
    },
    workspace: store,
    model: await createScriptedModel({ steps: [] }),
    sandboxBaseDir: temp,
  });
  await actor.activate();
  const server = createMcpServer({
    entries: () => actor.entries(),
    middleware: actor.middleware(),
    subscribe: (listener) => actor.onToolsChanged(listener),
  });

  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'serve-example', version: '1.0.0' });
  await client.connect(clientSide);
  try {
    const { tools } = await client.listTools();
    for (const tool of tools)
      console.log(`served ${tool.name}: readOnlyHint=${String(tool.annotations?.readOnlyHint)}`);
    const write = await client.callTool({
      name: 'write_file',
      arguments: { path: 'served.txt', content: 'written over MCP\n' },
    });
    const change = (write._meta as Record<string, unknown> | undefined)?.[ResultMetaKey.Change];
    console.log(`write_file result: ${JSON.stringify(write.content)}`);
    console.log(`change record: ${JSON.stringify(change)}`);

    const sandboxRoot = actor.sandbox?.root ?? '';
    check(
      tools.find((tool) => tool.name === 'read_file')?.annotations?.readOnlyHint === true,
      'read_file is not served as read-only',
    );
    check(
      tools.find((tool) => tool.name === 'write_file')?.annotations?.readOnlyHint === false,
      'write_file is not served as a write tool',
    );
    check(write.isError !== true, 'the served write failed');
    check(
      readFileSync(join(sandboxRoot, 'served.txt'), 'utf8') === 'written over MCP\n',
      'the write is not in the sandbox',
    );
    check(!existsSync(join(project, 'served.txt')), "the write reached the user's repo");
    check(
      JSON.stringify(change).includes('"path":"served.txt"'),
      'the result has no change record for served.txt',
    );
  } finally {
    await client.close();
    await server.close();
  }
  console.log('serve actor ok');
} finally {
  await rm(temp, { recursive: true, force: true });
}
