/**
 * Rollback, step by step: an actor edits a git repo through its sandbox (three tracked writes
 * with the built-in file tools), then the thread is rolled back to the checkpoint after the first
 * write — previewed first with a dry run, applied, and finally undone again. Files and graph
 * state move together; the user's repo never changes.
 *
 *   npx tsx examples/rollback.ts
 *
 * Exits non-zero unless every step leaves exactly the expected files.
 */
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createActor } from '../src/index.js';
import { createWorkspaceStore } from '../src/entries/actors.js';
import { listCheckpoints, rollback, undoRollback } from '../src/entries/graph.js';
import type { ChangedPath } from '../src/entries/graph.js';
import { createScriptedModel } from '../src/testing/index.js';
import { check, makeGitRepo, readTree, repoState } from './support/helpers.js';

const THREAD = 'rollback-example';
const show = (changes: readonly ChangedPath[]): string =>
  changes.map((change) => `${change.status} ${change.path}`).join(', ') || '(none)';
const files = (root: string): string =>
  [...readTree(root)].map(([path, content]) => `${path}=${JSON.stringify(content)}`).join(' ');

const temp = await realpath(await mkdtemp(join(tmpdir(), 'agents-rollback-')));
try {
  const project = join(temp, 'project');
  makeGitRepo(project, { 'config.txt': 'debug=false\n' });
  const projectBefore = repoState(project);

  const store = createWorkspaceStore(join(temp, '.agents'));
  await store.put('skill', 'editor', {
    description: 'Built-in file tools.',
    tools: ['read_file', 'write_file', 'edit_file'],
  });
  const model = await createScriptedModel({
    steps: [
      { tool_calls: [{ name: 'write_file', args: { path: 'notes.md', content: 'first\n' } }] },
      {
        tool_calls: [
          { name: 'edit_file', args: { path: 'config.txt', old_text: 'false', new_text: 'true' } },
        ],
      },
      { tool_calls: [{ name: 'write_file', args: { path: 'notes.md', content: 'second\n' } }] },
      { content: 'done' },
    ],
  });
  await using actor = await createActor({
    config: {
      name: 'editor',
      skills: ['editor'],
      sandbox: { source: project },
      checkpointer: { type: 'memory' },
      policy: { mode: 'auto' },
    },
    workspace: store,
    model,
    sandboxBaseDir: temp,
  });
  await actor.activate();
  const sandbox = actor.sandbox;
  check(sandbox !== undefined, 'no sandbox');
  await actor.graph.invoke(
    { messages: [{ role: 'user', content: 'edit things' }] },
    { configurable: { thread_id: THREAD } },
  );
  const edited = files(sandbox.root);
  console.log(`after the run:  ${edited}`);

  // Checkpoints, newest first; pick the oldest one that changed files (after the first write).
  const checkpoints = await listCheckpoints({ graph: actor.graph, threadId: THREAD, sandbox });
  const changing = checkpoints.filter((entry) => entry.changed.length > 0);
  for (const entry of changing)
    console.log(`  checkpoint step ${entry.step}: ${show(entry.changed)}`);
  const target = changing.at(-1);
  check(
    changing.length === 3 && target !== undefined,
    `expected 3 checkpoints with changes, got ${changing.length}`,
  );

  // 1. Dry run: what would change, nothing touched.
  const preview = await rollback({
    graph: actor.graph,
    threadId: THREAD,
    checkpointId: target.checkpointId,
    sandbox,
    dryRun: true,
  });
  console.log(`dry run would change: ${show(preview.preview)}`);
  check(files(sandbox.root) === edited, 'the dry run changed files');
  check(
    show(preview.preview) === 'M config.txt, M notes.md',
    `unexpected preview: ${show(preview.preview)}`,
  );

  // 2. Roll back: files restored, state forked at the checkpoint (the old branch stays in history).
  const done = await rollback({
    graph: actor.graph,
    threadId: THREAD,
    checkpointId: target.checkpointId,
    sandbox,
  });
  const restored = files(sandbox.root);
  console.log(`after rollback: ${restored}`);
  check(
    restored === 'config.txt="debug=false\\n" notes.md="first\\n"',
    "rollback did not restore the first write's files",
  );
  const state = await actor.graph.getState({ configurable: { thread_id: THREAD } });
  check(
    state.values.changeLog.length === 1,
    `the forked state has ${state.values.changeLog.length} change records, not 1`,
  );

  // 3. Undo the rollback: the exact tree from before it comes back.
  await undoRollback({ graph: actor.graph, sandbox, rollback: done });
  console.log(`after undo:     ${files(sandbox.root)}`);
  check(files(sandbox.root) === edited, 'undo did not bring the edits back');

  check(repoState(project) === projectBefore, "the user's repo changed");
  console.log('rollback ok');
} finally {
  await rm(temp, { recursive: true, force: true });
}
