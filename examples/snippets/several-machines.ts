// examples/snippets/several-machines.ts — run: npx tsx examples/snippets/several-machines.ts
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createActor } from '@agents/langgraph-mcp';
import type { ModelScriptInput } from '@agents/langgraph-mcp/testing';
import { createScriptedModel } from '@agents/langgraph-mcp/testing';

// Two "machines" in one process: each has its own checkout of the project (so its own sandbox);
// they share a bare git repo (the snapshot store) and the checkpoints (a SQLite file here, a
// Postgres database across real machines: `checkpointer: { type: postgres, url }`).
const temp = await mkdtemp(join(tmpdir(), 'several-machines-'));
const store = join(temp, 'snapshots.git');
execFileSync('git', ['init', '--quiet', '--bare', store]); // once, on shared storage

async function machine(name: string): Promise<string> {
  const project = join(temp, name);
  await mkdir(join(project, '.agents', 'skills'), { recursive: true });
  await writeFile(join(project, 'README.md'), '# the project\n');
  await writeFile(
    join(project, '.agents', 'skills', 'files.yaml'),
    'tools: [read_file, write_file]\n',
  );
  return project;
}

/** One run of thread `task-1` of actor `coder` on a machine. */
async function work(project: string, steps: ModelScriptInput): Promise<string> {
  await using actor = await createActor({
    config: {
      name: 'coder',
      skills: ['files'],
      checkpointer: { type: 'sqlite', path: join(temp, 'checkpoints.sqlite') },
      policy: { mode: 'auto' },
    },
    workspace: join(project, '.agents'),
    model: await createScriptedModel({ steps }), // offline; any chat model
    threadId: 'task-1', // a thread-bound actor: its sandbox belongs to the thread
    snapshots: { remote: store }, // wins over the YAML's `snapshots`
    ephemeralThread: true, // this example removes the machine's sandbox on leaving
  });
  await actor.activate(); // fetches the thread's snapshots; a new sandbox starts from the newest
  let said = '';
  for await (const event of actor.run('Go on with the task')) {
    if (event.type === 'tool-call-end') said += `${event.name}: ${event.text}\n`;
  }
  return said;
}

try {
  // Machine A starts the thread and writes a plan; every snapshot is pushed to the store.
  await work(await machine('machine-a'), [
    { tool_calls: [{ name: 'write_file', args: { path: 'plan.md', content: '1. ship' } }] },
    { content: 'Planned.' },
  ]);
  // Machine B, which never saw the thread, goes on with it: its sandbox has A's files.
  const machineB = await machine('machine-b');
  const said = await work(machineB, [
    { tool_calls: [{ name: 'read_file', args: { path: 'plan.md' } }] },
    { content: 'Read the plan.' },
  ]);
  console.log(said.trim());
  assert.match(said, /read_file: .*1\. ship/);
  assert.ok(!existsSync(join(machineB, 'plan.md')), "the project's files are untouched");
  const refs = execFileSync('git', ['-C', store, 'for-each-ref', '--format=%(refname)'], {
    encoding: 'utf8',
  });
  console.log(`store: ${refs.trim()}`);
  assert.equal(refs.trim(), 'refs/agents/threads/coder/task-1/keep');
} finally {
  await rm(temp, { recursive: true, force: true });
}
console.log('several machines ok');
