/**
 * A programmatic actor run: `createActor` → `activate` → `graph.invoke` → deactivate (by
 * `await using`), with the config written in code instead of YAML. The actor's skill brings the
 * filesystem MCP server inline; the project is a plain folder (not a git repo), so the sandbox
 * is a private repo copy of it. The model is a `ScriptedChatModel` built in code.
 *
 *   npx tsx examples/programmatic-actor.ts
 *
 * Exits non-zero unless the write landed in the sandbox only, was recorded in the graph state,
 * and everything was stopped and removed afterwards.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HumanMessage } from '@langchain/core/messages';
import { createActor } from '../src/index.js';
import { createWorkspaceStore } from '../src/entries/actors.js';
import { createScriptedModel } from '../src/testing/index.js';
import { check, childPids, filesystemServerEntry, isAlive } from './support/helpers.js';

const temp = await realpath(await mkdtemp(join(tmpdir(), 'agents-programmatic-')));
try {
  const project = join(temp, 'project');
  const store = createWorkspaceStore(join(temp, '.agents'));
  await store.put('skill', 'files', {
    description: 'Edit files.',
    // An inline server config (instead of a servers/NAME.yaml record).
    mcpServers: [
      {
        name: 'fs',
        transport: 'stdio',
        command: process.execPath,
        args: [filesystemServerEntry()],
      },
    ],
  });
  mkdirSync(project);
  writeFileSync(join(project, 'README.md'), '# a plain folder\n');

  const model = await createScriptedModel({
    steps: [
      {
        tool_calls: [
          { name: 'write_file', args: { path: 'hello.md', content: 'Hello from the actor\n' } },
        ],
      },
      { tool_calls: [{ name: 'read_text_file', args: { path: 'hello.md' } }] },
      { content: 'Wrote and read hello.md.' },
    ],
  });
  const before = new Set(childPids());
  let sandboxRoot = '';
  let serverPids: number[] = [];
  {
    await using actor = await createActor({
      config: {
        name: 'writer',
        skills: ['files'],
        instructions: 'Write what you are asked to.',
        sandbox: { source: project },
        checkpointer: { type: 'memory' },
        policy: { mode: 'auto' }, // writes run without asking (the default `ask` pauses them)
      },
      workspace: store,
      model,
      sandboxBaseDir: temp,
    });
    await actor.activate();
    sandboxRoot = actor.sandbox?.root ?? '';
    serverPids = childPids().filter((pid) => !before.has(pid));

    const result = await actor.graph.invoke(
      { messages: [new HumanMessage('Write hello.md, then read it back.')] },
      { configurable: { thread_id: 'programmatic' } },
    );
    const answer = result.messages.at(-1)?.text ?? '';
    console.log(`answer: ${answer}`);
    console.log(`change log: ${JSON.stringify(result.changeLog.map((record) => record.changed))}`);

    check(answer === 'Wrote and read hello.md.', `unexpected answer: ${answer}`);
    check(
      result.changeLog.length === 1,
      `expected one change record, got ${result.changeLog.length}`,
    );
    check(
      result.changeLog[0]?.changed.some(
        (change) => change.path === 'hello.md' && change.status === 'A',
      ) === true,
      'hello.md is not recorded as added',
    );
    check(
      result.sandboxHead === result.changeLog[0]?.snapshot,
      'sandboxHead is not the latest snapshot',
    );
    check(
      readFileSync(join(sandboxRoot, 'hello.md'), 'utf8') === 'Hello from the actor\n',
      'the sandbox lacks hello.md',
    );
    check(!existsSync(join(project, 'hello.md')), "the write reached the user's folder");
  } // `await using`: actor.deactivate() — server stopped, sandbox removed

  check(
    serverPids.length > 0 && serverPids.every((pid) => !isAlive(pid)),
    'the server is still running',
  );
  check(sandboxRoot !== '' && !existsSync(sandboxRoot), 'the sandbox folder remains');
  check(
    readFileSync(join(project, 'README.md'), 'utf8') === '# a plain folder\n',
    "the user's folder changed",
  );
  console.log('programmatic actor ok');
} finally {
  await rm(temp, { recursive: true, force: true });
}
