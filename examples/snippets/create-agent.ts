// examples/snippets/create-agent.ts — run: npx tsx examples/snippets/create-agent.ts
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemorySaver } from '@langchain/langgraph';
import { tool } from '@langchain/core/tools';
import { createAgent } from 'langchain';
import { z } from 'zod';
import { createSandbox } from '@agents/langgraph-mcp/sandbox';
import { createSandboxAgentMiddleware } from '@agents/langgraph-mcp/langchain';
import { createScriptedModel } from '@agents/langgraph-mcp/testing';

const project = await mkdtemp(join(tmpdir(), 'my-project-'));
const sandbox = await createSandbox({ source: project }); // a copy of it, outside your tree
try {
  const writeFileTool = tool(
    async ({ path, content }) => {
      await writeFile(join(sandbox.root, path), content);
      return `wrote ${path}`;
    },
    {
      name: 'write_file',
      description: 'Write a file',
      schema: z.object({ path: z.string(), content: z.string() }),
    },
  );
  // Any tool-calling chat model; this offline one calls write_file, then answers.
  const model = await createScriptedModel({
    steps: [
      { tool_calls: [{ name: 'write_file', args: { path: 'hello.txt', content: 'hi' } }] },
      { content: 'done' },
    ],
  });
  const agent = createAgent({
    model,
    tools: [writeFileTool], // adapter tools, or any LangChain tools
    middleware: [createSandboxAgentMiddleware({ sandbox })],
    checkpointer: new MemorySaver(), // needed for rollback
  });
  await agent.invoke(
    { messages: [{ role: 'user', content: 'write hello.txt' }] },
    { configurable: { thread_id: 't1' } },
  );
  // Every write was snapshotted in the sandbox; your project is untouched.
  console.log('changed in the sandbox:', await sandbox.diff(sandbox.base, sandbox.head));
} finally {
  await sandbox.close(); // removes the sandbox
  await rm(project, { recursive: true, force: true });
}
