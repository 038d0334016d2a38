// examples/snippets/actor-approvals.ts — run: npx tsx examples/snippets/actor-approvals.ts
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createActor } from '@agents/langgraph-mcp';
import { toResumeValue } from '@agents/langgraph-mcp/actors';
import type { PendingApproval } from '@agents/langgraph-mcp/actors';
import type { ApprovalResponse } from '@agents/langgraph-mcp/policy';

// A project with its `.agents/` workspace: plain YAML files (`agents server|skill|actor add`
// writes the same). The model is scripted (offline): it writes a file, then answers.
const project = await mkdtemp(join(tmpdir(), 'my-project-'));
// The filesystem MCP server, installed in your project (`npm i -D
// @modelcontextprotocol/server-filesystem`): started from node_modules, no download on the
// first run. Its one folder, ".", is the sandbox root.
const fsServer = createRequire(import.meta.url).resolve(
  '@modelcontextprotocol/server-filesystem/dist/index.js',
);
const files = {
  'servers/fs.yaml': `command: node\nargs: [${JSON.stringify(fsServer)}, '.']\n`,
  'skills/files.yaml': 'description: Read and write files.\nmcpServers: [fs]\n',
  'actors/coder.yaml': 'skills: [files]\nmodel: scripted   # replays coder.script.yaml\n',
  'actors/coder.script.yaml': `- tool_calls: [{ name: write_file, args: { path: CONTRIBUTING.md, content: "Be kind." } }]\n- content: Added CONTRIBUTING.md.\n`,
};
for (const [file, text] of Object.entries(files)) {
  await mkdir(join(project, '.agents', file, '..'), { recursive: true });
  await writeFile(join(project, '.agents', file), text);
}

let sandboxRoot = '';
try {
  // `ephemeralThread`: this thread's sandbox goes on deactivate (a thread's sandbox is kept by
  // default, for `agents checkpoints|rollback|sandbox diff --thread task-1`).
  await using actor = await createActor({
    name: 'coder',
    workspace: join(project, '.agents'),
    threadId: 'task-1',
    ephemeralThread: true,
  });
  await actor.activate(); // starts the skills' MCP servers, opens the thread's sandbox
  sandboxRoot = actor.sandbox?.root ?? '';
  let events = actor.run('Add a CONTRIBUTING.md');
  let asked = 0;
  for (;;) {
    const pending: PendingApproval[] = [];
    for await (const event of events) {
      if (event.type === 'tool-call-start') console.log('→', event.name, event.args);
      if (event.type === 'message') console.log(event.text);
      if (event.type === 'interrupt') pending.push(...(event.approvals ?? []));
    }
    if (pending.length === 0) break; // finished
    // In mode ask (the default), write-class calls wait: show each `preview` to a person.
    for (const { preview } of pending) console.log('approve?', preview.toolId, preview.args);
    asked += pending.length;
    const answers: ApprovalResponse[] = pending.map(() => ({ type: 'approve', by: 'me' }));
    events = actor.resume(toResumeValue(pending, answers), { threadId: 'task-1' });
  }
  // The approved write is in the sandbox, not in the project.
  assert.equal(asked, 1, 'one approval asked');
  assert.equal(await readFile(join(sandboxRoot, 'CONTRIBUTING.md'), 'utf8'), 'Be kind.');
  assert.ok(!existsSync(join(project, 'CONTRIBUTING.md')), 'the project is untouched');
} finally {
  await rm(project, { recursive: true, force: true });
}
// `await using` called deactivate() on leaving the block: servers stopped, sandbox removed.
assert.ok(sandboxRoot !== '' && !existsSync(sandboxRoot), 'the sandbox is removed');
console.log('actor approvals ok');
