/**
 * The main job (`npm start`): offline, no API key. An actor whose one skill is backed by a real
 * MCP server (`@modelcontextprotocol/server-filesystem`, spawned over stdio) works on a throwaway
 * git repo through a sandbox (a repository of its own, outside the project) made from the repo's
 * working tree as it is, an uncommitted edit included. Every tool call is printed with its
 * capability verdict and the files it changed; then the thread's checkpoints are listed, the run
 * is rolled back to an earlier one, and the files are shown restored while the user's repo was
 * never touched. Last, the sandbox's work is reviewed (a diffstat and the patch) and applied to
 * the repo's working tree: exactly those files change, nothing else (HEAD, refs, index).
 *
 *   npm start                                   # scripted model (examples/scripts/main-job.yaml)
 *   npm start -- --model openai:gpt-4.1-mini    # a real model (needs @langchain/openai + OPENAI_API_KEY)
 *
 * Exits non-zero if any check fails. Everything it makes is removed again.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { AgentsError, createActor, errorMessage } from '../src/index.js';
import { createWorkspaceStore } from '../src/entries/actors.js';
import { listCheckpoints, rollback } from '../src/entries/graph.js';
import { applySandbox, isDeliverySandbox, formatSandboxDiff } from '../src/entries/sandbox.js';
import type { ToolDescriptor } from '../src/index.js';
import type { ChangedPath, CheckpointEntry } from '../src/entries/graph.js';
import {
  ExampleCheckError,
  check,
  childPids,
  filesystemServerEntry,
  isAlive,
  makeGitRepo,
  readTree,
  repoState,
} from './support/helpers.js';

const SCRIPT = fileURLToPath(new URL('./scripts/main-job.yaml', import.meta.url));
const THREAD = 'demo-thread';
const TASK =
  'Let greet() take a name. Write the plan to notes/plan.md, document usage in docs/usage.md, ' +
  'and move TODO.txt into docs/.';
const PROJECT_FILES = {
  'README.md': '# greeter\nA tiny project the demo actor works on.\n',
  'src/greet.ts': "export function greet(): string {\n  return 'Hello, world!';\n}\n",
  'TODO.txt': '- accept a name\n',
};

const { values: flags } = parseArgs({
  options: { model: { type: 'string' } },
  allowPositionals: false,
});
const scripted = flags.model === undefined;
const out = (line = ''): void => void process.stdout.write(`${line}\n`);

/** `write (annotation: destructiveHint=false)` — the verdict the policy and the sandbox act on. */
function verdictOf(descriptor: ToolDescriptor | undefined): string {
  if (descriptor === undefined) return 'unknown tool';
  const { readOnly, writes } = descriptor.capabilities;
  const verdict = readOnly.value ? readOnly : writes;
  return `${readOnly.value ? 'read ' : 'write'} (${verdict.source}: ${verdict.reason})`;
}

const formatChanges = (changed: readonly ChangedPath[]): string =>
  changed.map((change) => `${change.status} ${change.path}`).join(', ');

function shortArgs(args: Record<string, unknown>): string {
  const text = JSON.stringify(args);
  return text.length > 70 ? `${text.slice(0, 67)}...` : text;
}

function printTree(title: string, root: string): void {
  out(`  ${title}`);
  for (const [path, content] of readTree(root)) {
    const firstLine = content.split('\n').find((line) => line.trim() !== '') ?? '';
    out(`    ${path.padEnd(18)} ${firstLine.slice(0, 50)}`);
  }
}

/**
 * The git parts of a `repoState`: HEAD, branches and tags, the index (`ls-files --stage`), and
 * with sandbox traces every ref and worktree; not the status or the files, which an apply
 * changes.
 */
function gitParts(state: string): string {
  const parts = state.split('\n--\n');
  return [...parts.slice(0, 3), ...parts.slice(4, 6)].join('\n--\n');
}

async function runDemo(temp: string, signal: AbortSignal): Promise<void> {
  // 1. The user's project: a git repo we must never change.
  const project = join(temp, 'project');
  makeGitRepo(project, PROJECT_FILES);
  // An edit the user has not committed: the sandbox starts from the files as they are.
  const editedReadme = `${PROJECT_FILES['README.md']}Uncommitted: greet() should take a name.\n`;
  writeFileSync(join(project, 'README.md'), editedReadme);
  const projectBefore = repoState(project);
  const projectBeforeAll = repoState(project, { includeSandboxTraces: true });

  // 2. A workspace (.agents/) outside the project: server record, skill, actor. Plain YAML files.
  const store = createWorkspaceStore(join(temp, 'workspace', '.agents'));
  await store.put('server', 'fs', {
    transport: 'stdio',
    command: process.execPath,
    // No directory argument: the server takes its allowed folder from the client's MCP roots,
    // which the actor sets to the sandbox.
    args: [filesystemServerEntry()],
  });
  await store.put('skill', 'files', {
    description: 'Read and edit files in the project.',
    mcpServers: ['fs'],
  });
  await store.put('actor', 'demo', {
    skills: ['files'],
    model: `scripted:${SCRIPT}`,
    instructions: 'You edit the project with the file tools. Use paths relative to the project.',
    sandbox: { source: project },
    // Every call runs: the sandbox and rollback are the safety net here. The default, `ask`,
    // pauses each write-class call for a human's approval.
    policy: { mode: 'auto' },
  });

  out('agents demo: an actor + a real MCP server in a git sandbox, checkpoints, rollback');
  out(`  project   ${project} (git repo: ${Object.keys(PROJECT_FILES).join(', ')})`);
  out('            README.md has an uncommitted edit; the sandbox starts from the working tree');
  out(`  workspace ${store.root} (servers/fs.yaml, skills/files.yaml, actors/demo.yaml)`);
  out('  policy    auto (every call runs; the sandbox and rollback are the safety net)');
  out(`  model     ${scripted ? `scripted (${relative(process.cwd(), SCRIPT)})` : flags.model}`);

  // 3. Activate: sandbox + server (spawned, initialized, tools listed) + checkpointer.
  await using actor = await createActor({
    name: 'demo',
    workspace: store,
    sandboxBaseDir: temp,
    ...(flags.model === undefined ? {} : { model: flags.model }),
  });
  const childrenBefore = new Set(childPids()); // e.g. tsx's esbuild service
  await actor.activate({ signal });
  const sandbox = actor.sandbox;
  check(sandbox !== undefined, 'the actor has no sandbox');
  const serverPids = childPids().filter((pid) => !childrenBefore.has(pid));
  const descriptors = new Map(
    actor.entries().map((entry) => [entry.descriptor.name, entry.descriptor]),
  );
  const writeTools = [...descriptors.values()].filter(
    (descriptor) => !descriptor.capabilities.readOnly.value,
  );
  out(`  sandbox   ${sandbox.root} (a repository of its own, outside the project)`);
  check(
    readFileSync(join(sandbox.root, 'README.md'), 'utf8') === editedReadme,
    "the sandbox does not hold the user's uncommitted README.md edit",
  );
  out(
    `  server    fs (pid ${serverPids.join(', ') || '?'}): ${descriptors.size} tools, ` +
      `${descriptors.size - writeTools.length} read-only, ${writeTools.length} write`,
  );

  // 4. Run: each tool call with its verdict, then the files it changed (from its change record).
  out();
  out(`run "${TASK}"`);
  let answer = '';
  for await (const event of actor.run(TASK, { threadId: THREAD, signal })) {
    if (event.type === 'tool-call-start') {
      out(`  ${event.name} ${shortArgs(event.args)}`);
      out(`      ${verdictOf(descriptors.get(event.name))}`);
    } else if (event.type === 'tool-call-end') {
      const outcome = event.isError ? `error: ${event.text.slice(0, 100)}` : 'ok';
      const changes =
        event.change && event.change.changed.length > 0
          ? `; changed ${formatChanges(event.change.changed)}`
          : '';
      out(`    <- ${event.name}: ${outcome}${changes}`);
      if (scripted) check(!event.isError, `tool call ${event.name} failed: ${event.text}`);
    } else if (event.type === 'message') {
      answer = event.text;
    } else if (event.type === 'interrupt') {
      check(false, `the run paused for approval (${JSON.stringify(event.value).slice(0, 200)})`);
    }
  }
  out(`  answer: ${answer}`);

  // 5. Checkpoints: LangGraph's history of the thread, each with the files it changed.
  const checkpoints = (
    await listCheckpoints({ graph: actor.graph, threadId: THREAD, sandbox })
  ).reverse();
  out();
  out(
    `checkpoints of thread "${THREAD}": ${checkpoints.length} (one per graph step); those that changed files:`,
  );
  checkpoints.forEach((entry, index) => {
    if (entry.changed.length === 0) return;
    out(
      `  #${String(index).padEnd(2)} step ${String(entry.step).padStart(2)}  ${formatChanges(entry.changed)}`,
    );
  });
  const withChanges = checkpoints.filter((entry) => entry.changed.length > 0);
  check(
    !scripted || withChanges.length >= 2,
    `expected several checkpoints with file changes, got ${withChanges.length}`,
  );
  const passed = (message: string): void => out(`  ok  ${message}`);

  if (withChanges.length >= 2) {
    // 6. Roll back to the first checkpoint that changed files: later changes are undone.
    const target = withChanges[0] as CheckpointEntry;
    const before = readTree(sandbox.root);
    out();
    out(
      `rollback to #${checkpoints.indexOf(target)} (step ${target.step}, checkpoint ${target.checkpointId})`,
    );
    printTree('files before:', sandbox.root);
    const result = await rollback({
      graph: actor.graph,
      threadId: THREAD,
      checkpointId: target.checkpointId,
      sandbox,
      note: 'The files were rolled back to an earlier checkpoint.',
    });
    out(`  restored: ${formatChanges(result.preview)}`);
    printTree('files after:', sandbox.root);
    const after = readTree(sandbox.root);

    // 7. Checks: the sandbox matches the target snapshot and the state forked there.
    out();
    out('checks');
    const current = await sandbox.snapshot('after rollback');
    check(
      (await sandbox.diff(current.sha, result.target.sandboxHead)).length === 0,
      'sandbox files differ from the checkpoint',
    );
    passed("sandbox files equal the checkpoint's snapshot");
    const state = await actor.graph.getState({ configurable: { thread_id: THREAD } });
    check(
      state.values.sandboxHead === result.target.sandboxHead,
      'graph state does not point at the restored snapshot',
    );
    passed('graph state forked at the checkpoint (its sandboxHead is the restored snapshot)');
    if (scripted) {
      check(
        after.get('notes/plan.md') === before.get('notes/plan.md'),
        'notes/plan.md (made before the checkpoint) changed',
      );
      check(
        after.get('src/greet.ts') === PROJECT_FILES['src/greet.ts'],
        'src/greet.ts was not restored',
      );
      check(after.get('TODO.txt') === PROJECT_FILES['TODO.txt'], 'TODO.txt was not restored');
      check(
        !after.has('docs/usage.md') && !after.has('docs/TODO.txt'),
        'files made after the checkpoint remain',
      );
      check(
        before.get('src/greet.ts') !== PROJECT_FILES['src/greet.ts'],
        'the run did not edit src/greet.ts',
      );
      passed(
        'restored files: src/greet.ts, TODO.txt back; docs/usage.md, docs/TODO.txt gone; notes/plan.md kept',
      );
    }
  } else {
    // Only a real model gets here: it made too few changes to show a rollback.
    out('  (the model made fewer than two file changes; nothing to roll back to)');
    out();
    out('checks');
  }
  // The user's repo: exactly as it was.
  check(repoState(project) === projectBefore, "the user's repo changed");
  passed('user repo untouched (HEAD, branches, index, status, files)');
  passed('the sandbox started from the working tree (the uncommitted README.md edit is in it)');

  // 8. Review the work against the sandbox's base (the working tree as it was), then take it
  // into the user's tree: a three-way apply that writes files only (no index, no refs).
  out();
  out('review: what the sandbox changed (agents sandbox diff --thread ID --stat / --patch)');
  check(isDeliverySandbox(sandbox), 'the sandbox has no snapshot store to diff and apply from');
  const stat = await formatSandboxDiff(sandbox, { stat: true });
  for (const line of stat.trimEnd().split('\n')) out(`  ${line}`);
  const patch = (await formatSandboxDiff(sandbox, { patch: true })).trimEnd().split('\n');
  const shown = patch.slice(0, 14);
  for (const line of shown) out(`  ${line}`);
  if (patch.length > shown.length) out(`  ... (${patch.length - shown.length} more lines)`);
  out();
  out('apply: take the work into the project (agents sandbox apply --thread ID)');
  const applied = await applySandbox(sandbox);
  for (const change of applied.changes) out(`  ${change.action.padEnd(6)} ${change.path}`);
  check(applied.applied && applied.conflicts.length === 0, 'the apply did not go through');
  check(applied.changes.length > 0, 'the apply wrote nothing');
  check(
    JSON.stringify([...readTree(project)]) === JSON.stringify([...readTree(sandbox.root)]),
    "the project's files differ from the sandbox's after the apply",
  );
  check(
    readFileSync(join(project, 'README.md'), 'utf8') === editedReadme,
    "the user's uncommitted README.md edit was lost",
  );
  // Only files changed: HEAD, branches, tags and the index are as they were.
  check(gitParts(repoState(project)) === gitParts(projectBefore), 'the apply touched git state');
  passed(
    `applied ${applied.changes.length} file(s): the project's files equal the sandbox's; HEAD, branches, index unchanged`,
  );

  // 9. Deactivate (also what `await using` does): server stopped, sandbox removed.
  await actor.deactivate();
  check(
    serverPids.length > 0 && serverPids.every((pid) => !isAlive(pid)),
    'a server process is still running',
  );
  check(
    childPids().every((pid) => childrenBefore.has(pid)),
    'a process started by the actor is still running',
  );
  passed(`server stopped (pid ${serverPids.join(', ')} gone)`);
  check(!existsSync(sandbox.root), 'the sandbox folder remains');
  // The apply changed files and status only; every ref and worktree record is as it was.
  check(
    gitParts(repoState(project, { includeSandboxTraces: true })) === gitParts(projectBeforeAll),
    "the sandbox left a worktree or ref in the user's repo",
  );
  passed('sandbox removed: no folder, worktree or ref left in the user repo');
}

// The temp folder is created here and removed whatever happens, so nothing is left behind.
const started = performance.now();
// A closed stdout (`npm start | head`) must not kill the demo before it cleans up.
process.stdout.on('error', () => undefined);
// Ctrl-C stops the run but still cleans up (servers, sandbox, temp folder); a second one exits.
const interrupt = new AbortController();
process.once('SIGINT', () => {
  process.stderr.write('\ninterrupted; cleaning up (Ctrl-C again to quit at once)\n');
  interrupt.abort(new Error('interrupted'));
  process.once('SIGINT', () => process.exit(130));
});
const temp = await realpath(await mkdtemp(join(tmpdir(), 'agents-demo-')));
try {
  await runDemo(temp, interrupt.signal);
  out();
  out(`main job ok (${((performance.now() - started) / 1000).toFixed(1)} s)`);
} catch (error) {
  if (interrupt.signal.aborted) {
    process.stderr.write('main job interrupted; everything it made was removed\n');
    process.exitCode = 130;
  } else {
    process.stderr.write(
      `\nmain job FAILED: ${error instanceof ExampleCheckError ? error.message : errorMessage(error)}\n`,
    );
    // Our own errors say what to do next; anything else is a bug worth its stack.
    if (
      !(error instanceof ExampleCheckError) &&
      !AgentsError.isInstance(error) &&
      error instanceof Error
    ) {
      process.stderr.write(`${error.stack ?? ''}\n`);
    }
    process.exitCode = 1;
  }
} finally {
  await rm(temp, { recursive: true, force: true });
}
