import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, readdir, realpath, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { describeServerStart } from '../../src/servers/server-start-line.js';
import { createActor } from '../../src/actors/actor.js';
import type { ActorRunEvent } from '../../src/actors/actor-types.js';
import { createScriptedModel } from '../../src/actors/scripted-model.js';
import { createWorkspaceStore } from '../../src/workspace/store.js';
import type { WorkspaceStore } from '../../src/workspace/workspace-types.js';

const NOTES_SERVER = join(import.meta.dirname, '..', 'fixtures', 'workspace', 'notes-server.mjs');
const FAULT_SERVER = join(import.meta.dirname, '..', 'fixtures', 'fault-server.mjs');
const SKILLS = join(import.meta.dirname, '..', 'fixtures', 'workspace', 'skills');

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('actor (scripted model, real server, git sandbox)', () => {
  let dir: string;
  let store: WorkspaceStore;
  let sandboxBase: string;
  beforeEach(async () => {
    dir = await realpath(await mkdtemp(join(tmpdir(), 'agents-actor-')));
    // Sandboxes go here, not in the OS temp folder, so even a crashed test leaves none behind.
    sandboxBase = await mkdtemp(join(tmpdir(), 'agents-actor-sandboxes-'));
    const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, stdio: 'pipe' });
    git('init', '-q', '-b', 'main');
    git('config', 'user.email', 't@example.com');
    git('config', 'user.name', 'T');
    await writeFile(join(dir, 'README.md'), 'hello\n');
    git('add', 'README.md');
    git('commit', '-q', '-m', 'init');
    store = createWorkspaceStore(join(dir, '.agents'));
    await store.put('server', 'notes', {
      transport: 'stdio',
      command: process.execPath,
      args: [NOTES_SERVER],
      overrides: {
        write_note: { pathArguments: ['path'] },
        read_note: { pathArguments: ['path'] },
      },
    });
    await store.put('skill', 'notes', {
      tools: ['read_file', 'list_directory'],
      mcpServers: ['notes'],
      agentSkills: [join(SKILLS, 'git-helper')],
    });
    await writeFile(
      join(dir, 'script.yaml'),
      [
        '- tool_calls: [{ name: get_pid }]',
        '- tool_calls: [{ name: write_note, args: { path: docs/hello.md, text: "hi there" } }]',
        '- tool_calls: [{ name: read_file, args: { path: docs/hello.md } }, { name: read_file, args: { path: ../outside.txt } }]',
        '- content: done',
      ].join('\n'),
    );
    await store.put('actor', 'writer', {
      skills: ['notes'],
      model: 'scripted:script.yaml',
      instructions: 'Write notes.',
      // The scripted writes run unattended; approvals are tested in policy.int.test.ts.
      policy: { mode: 'auto' },
      checkpointer: { type: 'sqlite', path: '.agents/checkpoints.sqlite' },
    });
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
    await rm(sandboxBase, { recursive: true, force: true });
  });

  it("applies the actor's sandbox snapshot settings: size cap and extra excludes", async () => {
    await writeFile(
      join(dir, 'capped.yaml'),
      [
        '- tool_calls: [{ name: write_note, args: { path: big.md, text: "over the cap" } }]',
        '- tool_calls: [{ name: write_note, args: { path: run.log, text: "x" } }]',
        '- tool_calls: [{ name: write_note, args: { path: ok.md, text: "ok" } }]',
        '- content: done',
      ].join('\n'),
    );
    await store.put('actor', 'capped', {
      skills: ['notes'],
      model: 'scripted:capped.yaml',
      policy: { mode: 'auto' },
      checkpointer: { type: 'memory' },
      sandbox: { maxFileBytes: 5, exclude: ['*.log'] },
    });
    await using actor = await createActor({
      name: 'capped',
      workspace: store,
      sandboxBaseDir: sandboxBase,
    });
    await actor.activate();
    const changes: string[][] = [];
    for await (const event of actor.run('write')) {
      if (event.type === 'tool-call-end' && event.name === 'write_note')
        changes.push((event.change?.changed ?? []).map((item) => `${item.status} ${item.path}`));
    }
    // big.md (12 bytes) is over the 5-byte cap and run.log is excluded: neither is captured.
    expect(changes).toEqual([[], [], ['A ok.md']]);
    const root = actor.sandbox!.root;
    expect(await readFile(join(root, 'big.md'), 'utf8')).toBe('over the cap');
    expect(await readFile(join(root, 'run.log'), 'utf8')).toBe('x');
  });

  it('activates, runs tool calls through the sandbox with change tracking, and deactivates cleanly', async () => {
    await using actor = await createActor({
      name: 'writer',
      workspace: store,
      sandboxBaseDir: sandboxBase,
    });
    // The slow steps are named (the CLI shows each with a spinner), in order.
    const steps: string[] = [];
    await actor.activate({
      step: async (text, work) => {
        steps.push(text);
        return work();
      },
    });
    expect(steps).toEqual([
      `preparing the sandbox (a private copy of ${dir})`,
      `starting ${describeServerStart({ name: 'notes', command: process.execPath, args: [NOTES_SERVER] })}`,
    ]);
    const sandbox = actor.sandbox!;
    expect(sandbox.root).not.toBe(dir);
    expect(
      actor
        .entries()
        .map((entry) => entry.descriptor.id)
        .sort(),
    ).toEqual([
      'builtin:list_directory',
      'builtin:read_file',
      'mcp:notes/get_pid',
      'mcp:notes/read_note',
      'mcp:notes/wait',
      'mcp:notes/write_note',
      'skill:activate',
    ]);

    const events: ActorRunEvent[] = [];
    for await (const event of actor.run('write a note', { threadId: 't1' })) events.push(event);
    const summary = events.map((event) =>
      event.type === 'tool-call-end'
        ? `end:${event.name}:${event.isError}`
        : event.type === 'tool-call-start'
          ? `start:${event.name}`
          : `${event.type}`,
    );
    // The two read_file calls of one turn run as parallel tasks: their ends may come in any order.
    expect([...summary.slice(0, 6), ...summary.slice(6, 8).sort(), ...summary.slice(8)]).toEqual([
      'start:get_pid',
      'end:get_pid:false',
      'start:write_note',
      'end:write_note:false',
      'start:read_file',
      'start:read_file',
      'end:read_file:false',
      'end:read_file:true',
      'message',
    ]);
    const pidEvent = events[1];
    expect(pidEvent?.type === 'tool-call-end' && Number(pidEvent.text) > 0).toBe(true);
    // The host's pid of the server (its process group): under bubblewrap the server runs in
    // its own pid namespace, so the pid it reports itself is not one the host can check.
    const pid = actor.servers().pid('notes')!;
    expect(isAlive(pid)).toBe(true);

    const write = events[3];
    if (write?.type !== 'tool-call-end') throw new Error('expected a tool result');
    // Path rewriting: the server saw the sandbox path; the model sees the logical one.
    expect(write.text).not.toContain(sandbox.root);
    expect(write.change?.changed).toEqual([{ status: 'A', path: 'docs/hello.md' }]);
    const readEnds = events.filter(
      (event) => event.type === 'tool-call-end' && event.name === 'read_file',
    );
    const reads = readEnds.map((event) => (event.type === 'tool-call-end' ? event.text : ''));
    expect(reads).toContain('hi there');
    // The escaping read was refused before it reached the server.
    expect(reads.find((text) => text !== 'hi there')).toMatch(/outside\.txt/);
    expect(await readFile(join(sandbox.root, 'docs', 'hello.md'), 'utf8')).toBe('hi there');
    await expect(stat(join(dir, 'docs'))).rejects.toThrow(); // the user's tree is untouched

    const state = await actor.graph.getState({ configurable: { thread_id: 't1' } });
    expect(state.values.changeLog).toHaveLength(1);
    expect(state.values.sandboxHead).toBe(write.change?.snapshot);

    await actor.deactivate();
    expect(actor.active).toBe(false);
    expect(isAlive(pid)).toBe(false);
    await expect(stat(sandbox.root)).rejects.toThrow();
    expect(() => actor.graph).toThrow(/not active/);
  });

  it('fails activation with SERVER_START_FAILED-class errors and leaves nothing running', async () => {
    await store.put(
      'server',
      'notes',
      { transport: 'stdio', command: join(dir, 'no-such-binary') },
      { overwrite: true },
    );
    await using actor = await createActor({
      name: 'writer',
      workspace: store,
      sandboxBaseDir: sandboxBase,
    });
    await expect(actor.activate()).rejects.toMatchObject({ name: 'ServerError' });
    expect(actor.active).toBe(false);
    // The sandbox made for the activation is gone with it.
    expect(await readdir(sandboxBase)).toEqual([]);
    await actor.deactivate();
  });

  it('enforces allowed-tools of an active Agent Skill inside a graph run', async () => {
    await writeFile(
      join(dir, 'skill-script.yaml'),
      [
        '- tool_calls: [{ name: activate_skill, args: { skill: git-helper } }]',
        '- tool_calls: [{ name: write_note, args: { path: x.md, text: nope } }, { name: list_directory, args: { path: . } }]',
        '- content: done',
      ].join('\n'),
    );
    await using actor = await createActor({
      config: {
        name: 'skilled',
        skills: ['notes'],
        model: 'scripted:skill-script.yaml',
        checkpointer: { type: 'memory' },
      },
      workspace: store,
      sandboxBaseDir: sandboxBase,
    });
    await actor.activate();
    const ends: Array<{ name: string; isError: boolean; text: string }> = [];
    for await (const event of actor.run('summarise', { threadId: 's1' })) {
      if (event.type === 'tool-call-end')
        ends.push({ name: event.name, isError: event.isError, text: event.text });
    }
    expect(ends[0]).toMatchObject({ name: 'activate_skill', isError: false });
    expect(ends[0]?.text).toContain('<skill name="git-helper">');
    expect(ends[1]).toMatchObject({ name: 'write_note', isError: true });
    expect(ends[1]?.text).toContain('not allowed while skill "git-helper" is active');
    expect(ends[2]).toMatchObject({ name: 'list_directory', isError: false });
    expect(ends[2]?.text).toContain('README.md');
    await expect(stat(join(actor.sandbox!.root, 'x.md'))).rejects.toThrow();
  });

  it("refuses grouped read-only calls outside the active skill's allowed-tools, one message each", async () => {
    await writeFile(
      join(dir, 'grouped-skill.yaml'),
      [
        '- tool_calls: [{ name: activate_skill, args: { skill: git-helper } }]',
        '- tool_calls: [{ name: read_note, args: { path: README.md } }, { name: list_directory, args: { path: . } }, { name: get_pid }]',
        '- content: done',
      ].join('\n'),
    );
    await using actor = await createActor({
      config: {
        name: 'skilled',
        skills: ['notes'],
        model: 'scripted:grouped-skill.yaml',
        checkpointer: { type: 'memory' },
      },
      workspace: store,
      sandboxBaseDir: sandboxBase,
    });
    await actor.activate();
    const ends: Array<[string, boolean, string]> = [];
    for await (const event of actor.run('summarise', { threadId: 'g1' }))
      if (event.type === 'tool-call-end') ends.push([event.name, event.isError, event.text]);
    // The precondition: the two notes reads (read-only MCP calls) shared one task.
    const config = { configurable: { thread_id: 'g1' } };
    const steps: number[] = [];
    for await (const snapshot of actor.graph.getStateHistory(config))
      if (snapshot.next.includes('tools')) steps.unshift(snapshot.tasks.length);
    expect(steps).toEqual([1, 2]);
    const byName = new Map(ends.map(([name, isError, text]) => [name, { isError, text }]));
    expect(ends).toHaveLength(4);
    for (const name of ['read_note', 'get_pid']) {
      expect(byName.get(name)?.isError, name).toBe(true);
      expect(byName.get(name)?.text).toContain('not allowed while skill "git-helper" is active');
    }
    expect(byName.get('list_directory')).toMatchObject({ isError: false });
  });

  it('picks up tools a server adds at run time (tools/list_changed), without a sandbox', async () => {
    await store.put('server', 'dyn', {
      transport: 'stdio',
      command: process.execPath,
      args: [FAULT_SERVER, 'list-changed'],
    });
    await store.put('skill', 'dyn', { mcpServers: ['dyn'] });
    await writeFile(
      join(dir, 'dyn-script.yaml'),
      [
        '- tool_calls: [{ name: add_tool, args: { name: fresh_tool } }]',
        '- tool_calls: [{ name: slow, args: { ms: 1500 } }]',
        '- tool_calls: [{ name: fresh_tool }]',
        '- content: done',
      ].join('\n'),
    );
    // Record every tool set the model is bound with: once per tool-set version, not per turn.
    const model = await createScriptedModel({ file: join(dir, 'dyn-script.yaml') });
    const bindings: string[][] = [];
    const bindTools = model.bindTools.bind(model);
    model.bindTools = (tools, kwargs) => {
      bindings.push(tools.map((tool) => ('name' in tool ? String(tool.name) : '?')));
      return bindTools(tools, kwargs);
    };
    await using actor = await createActor({
      model,
      config: {
        name: 'dyn',
        skills: ['dyn'],
        model: 'scripted:dyn-script.yaml',
        sandbox: { enabled: false },
        policy: { mode: 'auto' },
        checkpointer: { type: 'memory' },
      },
      workspace: store,
    });
    await actor.activate();
    expect(actor.sandbox).toBeUndefined();
    expect(actor.tools().map((tool) => tool.name)).not.toContain('fresh_tool');
    const ends: string[] = [];
    for await (const event of actor.run('go')) {
      if (event.type === 'tool-call-end') ends.push(`${event.name}:${event.isError}:${event.text}`);
    }
    expect(ends).toEqual([
      'add_tool:false:added fresh_tool',
      'slow:false:slept 1500',
      'fresh_tool:false:fresh_tool ran',
    ]);
    expect(actor.tools().map((tool) => tool.name)).toContain('fresh_tool');
    // Four model turns, two tool-set versions: bound before and after fresh_tool appeared.
    expect(bindings).toHaveLength(2);
    expect(bindings[0]).not.toContain('fresh_tool');
    expect(bindings[1]).toContain('fresh_tool');
  });
});
