import { execFileSync } from 'node:child_process';
import { access, mkdtemp, readFile, readdir, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createActor } from '../../src/actors/actor.js';
import { activateSkills } from '../../src/actors/activate-skills.js';
import { openThreadDelivery } from '../../src/actors/thread-delivery.js';
import { listCheckpoints, rollback } from '../../src/entries/graph.js';
import { AgentsError, AgentsErrorCode } from '../../src/errors.js';
import { createAgentsRuntime } from '../../src/runtime/agents-runtime.js';
import { STATE_DIR_ENV } from '../../src/sandbox/state-dir.js';
import { createWorkspaceStore } from '../../src/workspace/store.js';
import type { WorkspaceStore } from '../../src/workspace/workspace-types.js';

const NOTES_SERVER = join(import.meta.dirname, '..', 'fixtures', 'workspace', 'notes-server.mjs');

const exists = (path: string): Promise<boolean> =>
  access(path).then(
    () => true,
    () => false,
  );

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('AgentsRuntime', () => {
  let dir: string;
  let store: WorkspaceStore;
  let sandboxBase: string;
  let stateDir: string;
  let previousStateDir: string | undefined;
  beforeEach(async () => {
    // Thread sandboxes go to a state folder of this test's own.
    stateDir = await realpath(await mkdtemp(join(tmpdir(), 'agents-runtime-state-')));
    previousStateDir = process.env[STATE_DIR_ENV];
    process.env[STATE_DIR_ENV] = stateDir;
    dir = await realpath(await mkdtemp(join(tmpdir(), 'agents-runtime-')));
    sandboxBase = await realpath(await mkdtemp(join(tmpdir(), 'agents-runtime-sandboxes-')));
    const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, stdio: 'pipe' });
    git('init', '-q', '-b', 'main');
    await writeFile(join(dir, 'README.md'), 'hello\n');
    store = createWorkspaceStore(join(dir, '.agents'));
    await store.put('server', 'notes', {
      transport: 'stdio',
      command: process.execPath,
      args: [NOTES_SERVER],
      overrides: { write_note: { pathArguments: ['path'] } },
    });
    await store.put('skill', 'notes', { mcpServers: ['notes'] });
    await writeFile(
      join(dir, 'script.yaml'),
      [
        '- tool_calls: [{ name: write_note, args: { path: docs/hello.md, text: "hi there" } }]',
        '- content: done',
      ].join('\n'),
    );
  });
  afterEach(async () => {
    if (previousStateDir === undefined) delete process.env[STATE_DIR_ENV];
    else process.env[STATE_DIR_ENV] = previousStateDir;
    await rm(stateDir, { recursive: true, force: true });
    await rm(dir, { recursive: true, force: true });
    await rm(sandboxBase, { recursive: true, force: true });
  });

  it('runs an actor on the memory sandbox backend chosen by config, rolls back a write, leaves nothing', async () => {
    await store.put('actor', 'mem', {
      skills: ['notes'],
      model: 'scripted:script.yaml',
      policy: { mode: 'auto' },
      checkpointer: { type: 'sqlite', path: '.agents/checkpoints.sqlite' },
      sandbox: { backend: 'memory', confine: 'required' },
    });
    const warnings: string[] = [];
    const actor = await createActor({
      name: 'mem',
      workspace: store,
      threadId: 't1',
      sandboxBaseDir: sandboxBase,
      onWarning: (message) => warnings.push(message),
    });
    await actor.activate();
    const sandbox = actor.sandbox! as typeof actor.sandbox & { backend: string; container: string };
    expect(sandbox.backend).toBe('memory');
    // The memory backend keeps a real tree: its stdio server runs confined there.
    expect(actor.confinement?.kind).toBe('bubblewrap');
    for await (const event of actor.run('write', { threadId: 't1' })) void event;
    expect(await readFile(join(sandbox.root, 'docs', 'hello.md'), 'utf8')).toBe('hi there');
    // Nothing in the user's tree, and no thread sandbox on disk: the memory backend keeps none.
    expect(await exists(join(dir, 'docs'))).toBe(false);
    expect(await readdir(sandboxBase)).toHaveLength(1);

    const checkpoints = await listCheckpoints({ graph: actor.graph, threadId: 't1', sandbox });
    // The checkpoint before the one whose tool call wrote the file.
    const wrote = checkpoints.find((entry) =>
      entry.changed.some((change) => change.path === 'docs/hello.md'),
    );
    expect(wrote?.parentCheckpointId).toBeDefined();
    await rollback({
      graph: actor.graph,
      threadId: 't1',
      checkpointId: wrote!.parentCheckpointId!,
      sandbox,
    });
    expect(await exists(join(sandbox.root, 'docs', 'hello.md'))).toBe(false);
    expect(await readFile(join(sandbox.root, 'README.md'), 'utf8')).toBe('hello\n');

    const pid = actor.servers().pid('notes')!;
    expect(isAlive(pid)).toBe(true);
    await actor.deactivate();
    expect(isAlive(pid)).toBe(false);
    expect(await exists(sandbox.container)).toBe(false);
  });

  it('reopens a kept git thread for delivery through the runtime and closes it again', async () => {
    await store.put('actor', 'kept', {
      skills: ['notes'],
      model: 'scripted:script.yaml',
      policy: { mode: 'auto' },
      checkpointer: { type: 'sqlite', path: '.agents/checkpoints.sqlite' },
      sandbox: { confine: 'off' },
    });
    const actor = await createActor({ name: 'kept', workspace: store, threadId: 't2' });
    await actor.activate();
    expect(actor.runtime?.ephemeral).toBe(false);
    for await (const event of actor.run('write', { threadId: 't2' })) void event;
    await actor.deactivate();
    expect(actor.runtime).toBeUndefined();

    const handle = await openThreadDelivery({ projectDir: dir, threadId: 't2' });
    expect(handle.actor).toBe('kept');
    const latest = await handle.thread.latestSnapshot();
    expect(latest).toMatch(/^[0-9a-f]{40}$/);
    expect((await handle.sandbox.store.readFile(latest!, 'docs/hello.md'))?.toString()).toBe(
      'hi there',
    );
    await handle.close();
    // Kept on disk for later commands, and no lock left: it opens again.
    const again = await openThreadDelivery({ projectDir: dir, threadId: 't2' });
    await again.close();
  });

  it('activateSkills: servers run on a runtime; close stops them and removes their folder', async () => {
    const active = await activateSkills({ store, skills: ['notes'], confine: 'off' });
    expect(active.registry.entries().map((entry) => entry.descriptor.originalName)).toContain(
      'write_note',
    );
    const started = await readdir(tmpdir());
    await active.close();
    await active.close(); // idempotent
    const left = new Set(await readdir(tmpdir()));
    // The throwaway working folder (agents-probe-*) is gone.
    expect(
      started.filter((name) => name.startsWith('agents-probe-') && !left.has(name)),
    ).not.toEqual([]);
  });

  it('refuses an unknown sandbox backend with CONFIG_INVALID naming the known ones, before starting anything', async () => {
    await store.put('actor', 'odd', {
      skills: ['notes'],
      model: 'scripted:script.yaml',
      checkpointer: { type: 'memory' },
      sandbox: { backend: 'docker' },
    });
    const actor = await createActor({ name: 'odd', workspace: store, sandboxBaseDir: sandboxBase });
    const error = await actor.activate().then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(AgentsError.isInstance(error)).toBe(true);
    expect((error as AgentsError).code).toBe(AgentsErrorCode.ConfigInvalid);
    expect((error as AgentsError).message).toMatch(
      /actor "odd": unknown sandbox backend "docker".*use one of: git, memory/,
    );
    expect(actor.active).toBe(false);
    expect(await readdir(sandboxBase)).toEqual([]);
  });

  it('closes what it made last-first: the server before its sandbox, then the checkpointer', async () => {
    const runtime = await createAgentsRuntime({
      owner: 'the test',
      sandbox: { backend: 'memory', confine: 'off' },
      checkpointer: { type: 'memory' },
      cwd: dir,
    });
    expect(runtime.ephemeral).toBe(true);
    const order: string[] = [];
    runtime.defer(() => void order.push('first'));
    const sandbox = await runtime.createSandbox({ source: dir, baseDir: sandboxBase });
    const server = await runtime.startServer(
      { name: 'notes', transport: 'stdio', command: process.execPath, args: [NOTES_SERVER] },
      { cwd: sandbox.root },
    );
    const pid = server.pid!;
    runtime.defer(() => {
      // Runs before the server stops (made after it).
      order.push(`server alive: ${isAlive(pid)}`);
    });
    await runtime.openCheckpointer();
    expect(runtime.size).toBe(5);
    await runtime.close();
    expect(order).toEqual(['server alive: true', 'first']);
    expect(isAlive(pid)).toBe(false);
    expect(await exists(sandbox.container)).toBe(false);
    expect(runtime.size).toBe(0);
    await runtime.close(); // idempotent
  });
});
