import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, realpath, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from '@langchain/langgraph';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createActor } from '../../src/actors/actor.js';
import { pendingApprovalsOf } from '../../src/actors/approvals.js';
import type { ActorInstance, ActorRunEvent } from '../../src/actors/actor-types.js';
import { readSandboxState } from '../../src/core/sandbox-state.js';
import { readAuditLog } from '../../src/policy/audit-log.js';
import { createWorkspaceStore } from '../../src/workspace/store.js';
import type { WorkspaceStore } from '../../src/workspace/workspace-types.js';
import { fixtureStdioArgs } from '../fixtures/fixture-process.js';

const exists = (path: string) =>
  stat(path).then(
    () => true,
    () => false,
  );

async function collect(events: AsyncIterable<ActorRunEvent>): Promise<ActorRunEvent[]> {
  const out: ActorRunEvent[] = [];
  for await (const event of events) out.push(event);
  return out;
}

function approvalsIn(events: readonly ActorRunEvent[]) {
  return events.flatMap((event) => (event.type === 'interrupt' ? (event.approvals ?? []) : []));
}

function toolEnds(events: readonly ActorRunEvent[]) {
  return events.flatMap((event) => (event.type === 'tool-call-end' ? [event] : []));
}

describe('actor policy (ask mode, real fixture server, SQLite checkpointer)', () => {
  let dir: string;
  let sandboxBase: string;
  let store: WorkspaceStore;
  const actors: ActorInstance[] = [];

  async function actorWith(
    script: string[],
    policy: Record<string, unknown> = { mode: 'ask' },
  ): Promise<ActorInstance> {
    await writeFile(join(dir, 'script.yaml'), script.join('\n'));
    await store.put(
      'actor',
      'careful',
      {
        skills: ['files'],
        model: 'scripted:script.yaml',
        checkpointer: { type: 'sqlite', path: '.agents/checkpoints.sqlite' },
        policy,
      },
      { overwrite: true },
    );
    const actor = await createActor({
      name: 'careful',
      workspace: store,
      sandboxBaseDir: sandboxBase,
    });
    actors.push(actor);
    await actor.activate();
    return actor;
  }

  beforeEach(async () => {
    dir = await realpath(await mkdtemp(join(tmpdir(), 'agents-policy-')));
    // Sandboxes go here, not in the OS temp folder, so even a crashed test leaves none behind.
    sandboxBase = await mkdtemp(join(tmpdir(), 'agents-policy-sandboxes-'));
    const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, stdio: 'pipe' });
    git('init', '-q', '-b', 'main');
    git('config', 'user.email', 't@example.com');
    git('config', 'user.name', 'T');
    await writeFile(join(dir, 'README.md'), 'hello\n');
    git('add', 'README.md');
    git('commit', '-q', '-m', 'init');
    store = createWorkspaceStore(join(dir, '.agents'));
    await store.put('server', 'fs', {
      transport: 'stdio',
      command: process.execPath,
      args: fixtureStdioArgs(['--tools', 'basic']),
      overrides: {
        write_file: { pathArguments: ['path'] },
        read_file: { pathArguments: ['path'] },
        delete_file: { pathArguments: ['path'] },
      },
    });
    await store.put('skill', 'files', { mcpServers: ['fs'] });
  });
  afterEach(async () => {
    for (const actor of actors.splice(0)) await actor.deactivate();
    await rm(dir, { recursive: true, force: true });
    await rm(sandboxBase, { recursive: true, force: true });
  });

  const WRITE_SCRIPT = [
    '- tool_calls: [{ name: write_file, args: { path: notes/a.txt, content: "from the model" } }]',
    '- content: done',
  ];

  it(
    'pauses a write call for approval and runs it once approved',
    { timeout: 60_000 },
    async () => {
      const actor = await actorWith(WRITE_SCRIPT);
      const root = actor.sandbox!.root;
      const paused = await collect(actor.run('write a note', { threadId: 't-approve' }));
      const approvals = approvalsIn(paused);
      expect(approvals).toHaveLength(1);
      // The preview shows the logical path (policy sits outside path rewriting) and the verdicts.
      expect(approvals[0]?.preview).toMatchObject({
        kind: 'agents/tool-approval',
        toolId: 'mcp:fs/write_file',
        serverName: 'fs',
        args: { path: 'notes/a.txt', content: 'from the model' },
        rule: 'mode ask',
      });
      expect(approvals[0]?.preview.capabilities.writes.value).toBe(true);
      expect(await exists(join(root, 'notes', 'a.txt'))).toBe(false);

      const resumed = await collect(
        actor.resume({ type: 'approve', by: 'alice' }, { threadId: 't-approve' }),
      );
      expect(toolEnds(resumed).map((end) => [end.name, end.isError])).toEqual([
        ['write_file', false],
      ]);
      expect(resumed.at(-1)).toEqual({ type: 'message', text: 'done' });
      expect(await readFile(join(root, 'notes', 'a.txt'), 'utf8')).toBe('from the model');

      const { entries } = await readAuditLog(actor.auditFile, { threadId: 't-approve' });
      expect(
        entries.map((entry) => [entry.event, entry.policy?.outcome, entry.policy?.decidedBy]),
      ).toEqual([
        ['approval-requested', undefined, undefined],
        ['tool-call', 'approved', 'alice'],
      ]);
      expect(entries[1]).toMatchObject({
        actor: 'careful',
        toolId: 'mcp:fs/write_file',
        isError: false,
      });
      expect(entries[1]?.snapshot).toMatch(/^[0-9a-f]{40}$/);
      // Pinned at the first approval, in the workspace.
      const pins = JSON.parse(await readFile(join(store.root, 'pins.json'), 'utf8')) as {
        pins: Record<string, { approvedBy: string }>;
      };
      expect(pins.pins['mcp:fs/write_file']?.approvedBy).toBe('alice');
    },
  );

  it('rejects with a message the model sees, and writes nothing', { timeout: 60_000 }, async () => {
    const actor = await actorWith(WRITE_SCRIPT);
    const config = { configurable: { thread_id: 't-reject' } };
    // From code: graph.invoke returns the interrupt, Command({ resume }) answers it.
    const paused: unknown = await actor.graph.invoke(
      { messages: [{ role: 'user', content: 'write a note' }] },
      config,
    );
    const pending = pendingApprovalsOf((paused as { __interrupt__?: unknown }).__interrupt__);
    expect(pending.map((item) => item.preview.toolId)).toEqual(['mcp:fs/write_file']);

    const done = await actor.graph.invoke(
      new Command({ resume: { type: 'reject', message: 'not that file' } }),
      config,
    );
    const toolMessage = done.messages.find((message) => message.getType() === 'tool');
    expect(toolMessage?.text).toContain('not that file');
    expect((toolMessage as { status?: string } | undefined)?.status).toBe('error');
    expect(done.messages.at(-1)?.text).toBe('done');
    expect(await exists(join(actor.sandbox!.root, 'notes', 'a.txt'))).toBe(false);

    const { entries } = await readAuditLog(actor.auditFile, { threadId: 't-reject' });
    expect(entries.at(-1)?.policy).toMatchObject({
      outcome: 'rejected',
      decidedBy: 'user',
      message: 'not that file',
    });
  });

  it('runs the edited arguments when the human edits the call', { timeout: 60_000 }, async () => {
    const actor = await actorWith(WRITE_SCRIPT);
    const root = actor.sandbox!.root;
    await collect(actor.run('write a note', { threadId: 't-edit' }));
    const resumed = await collect(
      actor.resume(
        { type: 'edit', args: { path: 'notes/edited.txt', content: 'from the human' }, by: 'bob' },
        { threadId: 't-edit' },
      ),
    );
    expect(toolEnds(resumed)[0]?.isError).toBe(false);
    expect(toolEnds(resumed)[0]?.change?.changed).toEqual([
      { status: 'A', path: 'notes/edited.txt' },
    ]);
    expect(await readFile(join(root, 'notes', 'edited.txt'), 'utf8')).toBe('from the human');
    expect(await exists(join(root, 'notes', 'a.txt'))).toBe(false);
    const { entries } = await readAuditLog(actor.auditFile, { threadId: 't-edit' });
    expect(entries.at(-1)).toMatchObject({
      event: 'tool-call',
      args: { path: 'notes/a.txt' },
      policy: {
        outcome: 'edited',
        decidedBy: 'bob',
        editedArgs: { path: 'notes/edited.txt', content: 'from the human' },
      },
    });
  });

  it(
    'runs an allowed write exactly once when a sibling call of the same turn waits for approval',
    { timeout: 60_000 },
    async () => {
      const actor = await actorWith(
        [
          '- tool_calls: [{ name: write_file, args: { path: first.txt, content: one } }, { name: delete_file, args: { path: README.md } }]',
          '- content: done',
        ],
        { mode: 'ask', tools: { 'mcp:fs/write_file': { decision: 'allow' } } },
      );
      const root = actor.sandbox!.root;
      const paused = await collect(actor.run('go', { threadId: 't-two' }));
      expect(approvalsIn(paused).map((item) => item.preview.toolId)).toEqual([
        'mcp:fs/delete_file',
      ]);
      // The allowed sibling already ran, before the approval.
      expect(await readFile(join(root, 'first.txt'), 'utf8')).toBe('one');
      expect(await exists(join(root, 'README.md'))).toBe(true);

      await collect(actor.resume({ type: 'approve' }, { threadId: 't-two' }));
      expect(await exists(join(root, 'README.md'))).toBe(false);

      const { entries } = await readAuditLog(actor.auditFile, { threadId: 't-two' });
      const calls = entries.filter((entry) => entry.event === 'tool-call');
      expect(calls.map((entry) => [entry.toolId, entry.policy?.outcome])).toEqual([
        ['mcp:fs/write_file', 'allowed'],
        ['mcp:fs/delete_file', 'approved'],
      ]);
      const state = await actor.graph.getState({ configurable: { thread_id: 't-two' } });
      const log = readSandboxState(state.values).changeLog;
      expect(log.map((record) => record.toolId)).toEqual([
        'mcp:fs/write_file',
        'mcp:fs/delete_file',
      ]);
      // The head is the last snapshot, whatever order the two tasks' writes were applied in.
      expect(readSandboxState(state.values).sandboxHead).toBe(actor.sandbox!.head);
      expect(log[1]?.parent).toBe(log[0]?.snapshot);
    },
  );

  it(
    'runs the read-only calls of a turn in one task, the write asked for alone, and each once',
    { timeout: 60_000 },
    async () => {
      const actor = await actorWith([
        '- tool_calls: [{ name: read_file, args: { path: README.md } }, { name: write_file, args: { path: g.txt, content: g } }, { name: read_file, args: { path: README.md } }]',
        '- content: done',
      ]);
      const paused = await collect(actor.run('go', { threadId: 't-group' }));
      expect(approvalsIn(paused).map((item) => item.preview.toolId)).toEqual(['mcp:fs/write_file']);
      const config = { configurable: { thread_id: 't-group' } };
      const waiting = await actor.graph.getState(config);
      // Two tasks for three calls: both reads in one (done before the approval), the write alone.
      expect(waiting.tasks.map((task) => task.name)).toEqual(['tools', 'tools']);
      expect(toolEnds(paused).map((end) => [end.name, end.text])).toEqual([
        ['read_file', 'hello\n'],
        ['read_file', 'hello\n'],
      ]);
      await collect(actor.resume({ type: 'approve' }, { threadId: 't-group' }));
      expect(await readFile(join(actor.sandbox!.root, 'g.txt'), 'utf8')).toBe('g');
      // The reads' task was saved before the pause: on resume only the write ran.
      const { entries } = await readAuditLog(actor.auditFile, { threadId: 't-group' });
      const calls = entries.filter((entry) => entry.event === 'tool-call');
      expect(calls.map((entry) => [entry.toolId, entry.policy?.outcome])).toEqual([
        ['mcp:fs/read_file', 'allowed'],
        ['mcp:fs/read_file', 'allowed'],
        ['mcp:fs/write_file', 'approved'],
      ]);
    },
  );

  it(
    'resumes a paused run from the SQLite file with a new actor instance',
    { timeout: 90_000 },
    async () => {
      const first = await actorWith(WRITE_SCRIPT);
      const paused = await collect(first.run('write a note', { threadId: 't-restart' }));
      expect(approvalsIn(paused)).toHaveLength(1);
      await first.deactivate();

      const second = await createActor({
        name: 'careful',
        workspace: store,
        sandboxBaseDir: sandboxBase,
      });
      actors.push(second);
      await second.activate();
      const state = await second.graph.getState({ configurable: { thread_id: 't-restart' } });
      const waiting = pendingApprovalsOf(state.tasks.flatMap((task) => task.interrupts));
      expect(waiting.map((item) => item.preview.args)).toEqual([
        { path: 'notes/a.txt', content: 'from the model' },
      ]);
      const resumed = await collect(second.resume({ type: 'approve' }, { threadId: 't-restart' }));
      expect(toolEnds(resumed).map((end) => end.isError)).toEqual([false]);
      expect(await readFile(join(second.sandbox!.root, 'notes', 'a.txt'), 'utf8')).toBe(
        'from the model',
      );
    },
  );

  it(
    'denies in read-only mode with a refusal naming the rule, and the run goes on',
    { timeout: 60_000 },
    async () => {
      const actor = await actorWith(
        [
          '- tool_calls: [{ name: write_file, args: { path: x.txt, content: nope } }, { name: read_file, args: { path: README.md } }]',
          '- content: done',
        ],
        { mode: 'read-only' },
      );
      const events = await collect(actor.run('go', { threadId: 't-ro' }));
      expect(approvalsIn(events)).toEqual([]);
      const ends = toolEnds(events);
      const write = ends.find((end) => end.name === 'write_file');
      const read = ends.find((end) => end.name === 'read_file');
      expect(write?.isError).toBe(true);
      expect(write?.text).toContain('mode read-only');
      expect(read).toMatchObject({ isError: false, text: 'hello\n' });
      expect(await exists(join(actor.sandbox!.root, 'x.txt'))).toBe(false);
      const { entries } = await readAuditLog(actor.auditFile, { threadId: 't-ro' });
      expect(
        entries
          .map((entry) => [entry.toolId, entry.policy?.outcome])
          .sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
      ).toEqual([
        ['mcp:fs/read_file', 'allowed'],
        ['mcp:fs/write_file', 'denied'],
      ]);
    },
  );
});
