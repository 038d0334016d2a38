/**
 * "Works in LangGraph Studio", tested locally: the real dev server from
 * `@langchain/langgraph-cli` loads `langgraph.json` on 127.0.0.1 (analytics and tracing off), and
 * the same HTTP API that the hosted Studio page calls is driven with `@langchain/langgraph-sdk`.
 * The graphs' tool calls reach a real MCP server (the filesystem server, over stdio) inside a git
 * sandbox. Covered: `actor` (streaming, state, history, fork, replay, breakpoints) and
 * `approvals` (the policy's interrupt shown in thread state, resumed with approve / reject).
 * One dev server serves both graphs. This is API compatibility with the dev server Studio
 * drives, not a UI test.
 */
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, type Checkpoint } from '@langchain/langgraph-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isAlive, startDevServer, type DevServer } from '../helpers/dev-server.js';

const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const SANDBOX_ID = 'studio-test';
/** `graphs/approvals.ts` appends `-approvals` to the id it reads from the environment. */
const APPROVALS_SANDBOX_ID = `${SANDBOX_ID}-approvals`;

interface Message {
  type?: string;
  content?: unknown;
  id?: string;
  tool_calls?: Array<{ id?: string; name: string; args: Record<string, unknown> }>;
  status?: string;
  tool_call_id?: string;
}
interface ChangeRecordValue {
  toolId: string;
  toolCallId?: string;
  snapshot: string;
  parent: string;
  changed: Array<{ status: string; path: string }>;
}
interface ThreadStateLike {
  values: unknown;
  next: string[];
  checkpoint: { checkpoint_id?: string | null };
  parent_checkpoint?: { checkpoint_id?: string | null } | null;
}
interface CapabilityValue {
  value: boolean;
  source: string;
  reason: string;
}
/** The interrupt value the policy raises (`ApprovalPreview`, as JSON). */
interface ApprovalPreviewValue {
  kind: string;
  toolId: string;
  toolCallId?: string;
  args: Record<string, unknown>;
  capabilities: Record<'readOnly' | 'writes' | 'destructive' | 'openWorld', CapabilityValue>;
  rule: string;
}
interface ActorValues {
  messages: Message[];
  changeLog?: ChangeRecordValue[];
  sandboxHead?: string;
}

function asValues(value: unknown): ActorValues {
  expect(value).toMatchObject({ messages: expect.any(Array) });
  return value as ActorValues;
}

function text(message: Message | undefined): string {
  const content = message?.content;
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((part: unknown) =>
        typeof part === 'object' && part !== null && 'text' in part
          ? String((part as { text: unknown }).text)
          : '',
      )
      .join('');
  }
  return '';
}

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: {
      PATH: process.env['PATH'] ?? '/usr/bin:/bin',
      HOME: cwd,
      GIT_AUTHOR_NAME: 'test',
      GIT_AUTHOR_EMAIL: 'test@localhost',
      GIT_COMMITTER_NAME: 'test',
      GIT_COMMITTER_EMAIL: 'test@localhost',
    },
  });
}

/**
 * The filesystem servers among `pids`: the server processes themselves, not the bubblewrap
 * processes around a confined one (whose arguments name the server too).
 */
function filesystemServers(pids: number[]): number[] {
  return pids.filter((pid) => {
    const argv = cmdline(pid);
    return (
      argv.includes('server-filesystem') && path.basename(argv.split(' ')[0] ?? '') !== 'bwrap'
    );
  });
}

function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return '';
  }
}

const ask = (content: string): { messages: Array<{ role: string; content: string }> } => ({
  messages: [{ role: 'user', content }],
});

describe('reference actor graph in the LangGraph dev server', () => {
  let workDir: string;
  let sourceRepo: string;
  let baseDir: string;
  let server: DevServer | undefined;
  let client: Client;
  let threadId: string;

  /** A sandbox tree: `<baseDir>/agents-sandbox-XXXX/<id>` (one container per graph module). */
  function sandboxRoot(id: string = SANDBOX_ID): string {
    const roots = readdirSync(baseDir)
      .filter((name) => name.startsWith('agents-sandbox-'))
      .map((name) => path.join(baseDir, name, id))
      .filter((root) => existsSync(root));
    expect(roots).toHaveLength(1);
    return roots[0]!;
  }

  /** A file of a snapshot, read from the sandbox's private snapshot store (`run/git`). */
  function snapshotFile(id: string, sha: string, file: string): string {
    const store = path.join(path.dirname(sandboxRoot(id)), 'run', 'git');
    return git(sourceRepo, '--git-dir', store, 'show', `${sha}:${file}`);
  }

  beforeAll(async () => {
    workDir = realpathSync(mkdtempSync(path.join(tmpdir(), 'agents-studio-test-')));
    sourceRepo = path.join(workDir, 'repo');
    baseDir = path.join(workDir, 'sandboxes');
    execFileSync('git', ['init', '-q', '-b', 'main', sourceRepo]);
    execFileSync('mkdir', ['-p', baseDir]);
    writeFileSync(path.join(sourceRepo, 'README.md'), '# user project\n');
    git(sourceRepo, 'add', 'README.md');
    git(sourceRepo, 'commit', '-q', '-m', 'initial');
    server = await startDevServer({
      cwd: projectRoot,
      env: {
        AGENTS_STUDIO_SOURCE: sourceRepo,
        AGENTS_STUDIO_BASE_DIR: baseDir,
        AGENTS_STUDIO_SANDBOX_ID: SANDBOX_ID,
      },
    });
    client = new Client({ apiUrl: server.url });
  }, 150_000);

  afterAll(async () => {
    await server?.stop();
    if (workDir !== undefined) rmSync(workDir, { recursive: true, force: true });
  }, 30_000);

  it('loads the graph at startup: one assistant, the agent/tools graph, StateSchema schemas', async () => {
    const assistants = await client.assistants.search({ graphId: 'actor' });
    expect(assistants).toHaveLength(1);
    const graph = await client.assistants.getGraph(assistants[0]!.assistant_id);
    expect(graph.nodes.map((node) => String(node.id)).sort()).toEqual([
      '__end__',
      '__start__',
      'agent',
      'tools',
    ]);
    const schemas = await client.assistants.getSchemas(assistants[0]!.assistant_id);
    const stateProperties = (
      schemas.state_schema as { properties?: Record<string, unknown> } | undefined
    )?.properties;
    expect(Object.keys(stateProperties ?? {})).toEqual(
      expect.arrayContaining(['messages', 'changeLog', 'sandboxHead']),
    );
    // Runtime schemas from StateSchema: Studio renders `messages` as a chat input.
    expect(JSON.stringify(stateProperties?.['messages'])).toContain('"langgraph_type":"messages"');
    // The approvals graph is the same actor with the policy: same nodes, its own assistant.
    const approvals = await client.assistants.search({ graphId: 'approvals' });
    expect(approvals).toHaveLength(1);
    expect(approvals[0]!.assistant_id).not.toBe(assistants[0]!.assistant_id);
    const approvalsGraph = await client.assistants.getGraph(approvals[0]!.assistant_id);
    expect(approvalsGraph.nodes.map((node) => String(node.id)).sort()).toEqual([
      '__end__',
      '__start__',
      'agent',
      'tools',
    ]);
  });

  it('activated the filesystem MCP server and the sandbox when the graph module loaded', () => {
    const pids = server!.treePids();
    // One filesystem server per graph module (actor, approvals), each in its own sandbox.
    expect(filesystemServers(pids)).toHaveLength(2);
    for (const id of [SANDBOX_ID, APPROVALS_SANDBOX_ID]) {
      const root = sandboxRoot(id);
      expect(readFileSync(path.join(root, 'README.md'), 'utf8')).toBe('# user project\n');
      // A repository of its own: the user's repo has no record of it.
      expect(git(sourceRepo, 'worktree', 'list')).not.toContain(root);
      expect(git(sourceRepo, 'for-each-ref', '--format=%(refname)')).not.toContain('agents');
    }
  });

  it('streams a run whose tool call reaches the MCP server and writes into the sandbox', async () => {
    threadId = (await client.threads.create()).thread_id;
    const counts: Record<string, number> = {};
    const toolCallNames: string[] = [];
    let toolsUpdate: Record<string, unknown> | undefined;
    let final: ActorValues | undefined;
    for await (const event of client.runs.stream(threadId, 'actor', {
      input: ask('write notes.md: hello from studio'),
      streamMode: ['values', 'updates', 'messages-tuple', 'debug'],
    })) {
      counts[event.event] = (counts[event.event] ?? 0) + 1;
      expect(event.event, JSON.stringify(event.data)).not.toBe('error');
      if (event.event === 'values') final = asValues(event.data);
      if (event.event === 'updates') {
        const data = event.data as Record<
          string,
          { messages?: Message[] } & Record<string, unknown>
        >;
        for (const call of data['agent']?.messages?.flatMap(
          (message) => message.tool_calls ?? [],
        ) ?? []) {
          toolCallNames.push(call.name);
        }
        if (data['tools'] !== undefined) toolsUpdate = data['tools'];
      }
    }
    for (const kind of ['metadata', 'values', 'updates', 'messages', 'debug']) {
      expect(counts[kind] ?? 0, `${kind} events: ${JSON.stringify(counts)}`).toBeGreaterThan(0);
    }
    expect(toolCallNames).toEqual(['write_file']);
    // The tools step carries the change record into state in the same superstep.
    expect(toolsUpdate?.['changeLog']).toEqual([
      expect.objectContaining({
        toolId: 'mcp:fs/write_file',
        changed: [{ status: 'A', path: 'notes.md' }],
      }),
    ]);
    const messages = final!.messages;
    expect(text(messages.at(-1))).toBe('Wrote notes.md.');
    const toolMessage = messages.find((message) => message.type === 'tool');
    expect(toolMessage?.status).not.toBe('error');
    // The server saw an absolute sandbox path; the model sees the logical one again.
    expect(text(toolMessage)).toContain('notes.md');
    expect(text(toolMessage)).not.toContain(sandboxRoot());
    expect(readFileSync(path.join(sandboxRoot(), 'notes.md'), 'utf8')).toBe('hello from studio');
    // The user's own tree never sees the file.
    expect(existsSync(path.join(sourceRepo, 'notes.md'))).toBe(false);
  });

  it('shows the change log in state and history, and the snapshot holds the file', async () => {
    const state = await client.threads.getState(threadId);
    const values = asValues(state.values);
    expect(state.next).toEqual([]);
    expect(values.changeLog).toHaveLength(1);
    const record = values.changeLog![0]!;
    expect(record).toMatchObject({
      toolId: 'mcp:fs/write_file',
      changed: [{ status: 'A', path: 'notes.md' }],
    });
    expect(record.toolCallId).toBe(
      values.messages.find((message) => message.type === 'tool')?.tool_call_id,
    );
    expect(values.sandboxHead).toBe(record.snapshot);
    expect(record.parent).not.toBe(record.snapshot);
    // The snapshot is a commit in the sandbox's private store; the user's repo has none of it.
    expect(snapshotFile(SANDBOX_ID, record.snapshot, 'notes.md')).toBe('hello from studio');
    expect(() => git(sourceRepo, 'cat-file', '-e', record.snapshot)).toThrow();
    expect(git(sourceRepo, 'branch', '--list')).toContain('main');

    const history = await client.threads.getHistory(threadId, { limit: 50 });
    expect(history.map((entry) => entry.next[0] ?? null)).toEqual([
      null,
      'agent',
      'tools',
      'agent',
      '__start__',
    ]);
    const beforeTools = history.find((entry) => entry.next.includes('tools'))!;
    const afterTools = history.find(
      (entry) => entry.next.includes('agent') && asValues(entry.values).messages.length === 3,
    )!;
    expect(asValues(beforeTools.values).changeLog ?? []).toEqual([]);
    expect(asValues(afterTools.values).changeLog).toEqual([record]);
  });

  it('forks from an earlier checkpoint: updateState at the tool-call checkpoint, then run', async () => {
    const history = await client.threads.getHistory(threadId, { limit: 50 });
    const checkpoint = history.find((entry) => entry.next.includes('tools'))!;
    const aiMessage = asValues(checkpoint.values).messages.at(-1)!;
    expect(aiMessage.tool_calls?.[0]?.name).toBe('write_file');
    const edited = {
      ...aiMessage,
      tool_calls: [
        { ...aiMessage.tool_calls![0]!, args: { path: 'forked.md', content: 'from a fork' } },
      ],
    };
    const forked = (await client.threads.updateState(threadId, {
      values: { messages: [edited] },
      checkpoint: checkpoint.checkpoint,
      asNode: 'agent',
    })) as unknown as { checkpoint?: Omit<Checkpoint, 'thread_id'> };
    expect(forked.checkpoint?.checkpoint_id).toEqual(expect.any(String));
    const result = asValues(
      await client.runs.wait(threadId, 'actor', {
        input: null,
        ...(forked.checkpoint === undefined ? {} : { checkpoint: forked.checkpoint }),
      }),
    );
    expect(text(result.messages.at(-1))).toBe('Wrote forked.md.');
    expect(readFileSync(path.join(sandboxRoot(), 'forked.md'), 'utf8')).toBe('from a fork');
    // The fork's branch has its own change log: only the forked write, parented on the
    // snapshot of the earlier write (the sandbox is shared by the server's threads).
    const state = await client.threads.getState(threadId);
    const changeLog = asValues(state.values).changeLog ?? [];
    expect(changeLog.map((record) => record.changed)).toEqual([
      [{ status: 'A', path: 'forked.md' }],
    ]);
    expect(asValues(state.values).sandboxHead).toBe(changeLog[0]!.snapshot);
    expect(snapshotFile(SANDBOX_ID, changeLog[0]!.snapshot, 'forked.md')).toBe('from a fork');
    const fullHistory = await client.threads.getHistory(threadId, { limit: 50 });
    expect(fullHistory.length).toBeGreaterThan(history.length);
  });

  it('replays from a checkpoint: input null + checkpoint re-runs the tool on a new branch', async () => {
    const thread = (await client.threads.create()).thread_id;
    const first = asValues(
      await client.runs.wait(thread, 'actor', { input: ask('write replay.md: original') }),
    );
    expect(text(first.messages.at(-1))).toBe('Wrote replay.md.');
    const file = path.join(sandboxRoot(), 'replay.md');
    expect(readFileSync(file, 'utf8')).toBe('original');
    const history = await client.threads.getHistory(thread, { limit: 50 });
    const headBefore = history[0]!.checkpoint.checkpoint_id;
    const beforeTools = history.find((entry) => entry.next.includes('tools'))!;
    // Change the file behind the graph's back: only a real re-run of the tool restores it.
    writeFileSync(file, 'changed outside the graph');

    const replayed = asValues(
      await client.runs.wait(thread, 'actor', { input: null, checkpoint: beforeTools.checkpoint }),
    );
    expect(text(replayed.messages.at(-1))).toBe('Wrote replay.md.');
    expect(readFileSync(file, 'utf8')).toBe('original');
    // Same conversation, not a second turn appended after the first one.
    expect(replayed.messages.map((message) => message.type)).toEqual(['human', 'ai', 'tool', 'ai']);

    const state = (await client.threads.getState(thread)) as unknown as ThreadStateLike;
    expect(state.next).toEqual([]);
    expect(state.checkpoint.checkpoint_id).not.toBe(headBefore);
    const after = await client.threads.getHistory(thread, { limit: 50 });
    expect(after.length).toBeGreaterThan(history.length);
    // The new head descends from the replayed checkpoint, not from the old head: a new branch.
    const parents = new Map(
      after.map((entry) => [
        entry.checkpoint.checkpoint_id,
        entry.parent_checkpoint?.checkpoint_id,
      ]),
    );
    const ancestors: string[] = [];
    for (let id = parents.get(state.checkpoint.checkpoint_id ?? ''); id; id = parents.get(id))
      ancestors.push(id);
    expect(ancestors).toContain(beforeTools.checkpoint.checkpoint_id);
    expect(ancestors).not.toContain(headBefore);
  });

  it('stops at a breakpoint (interruptBefore tools) and resumes with input null', async () => {
    const thread = (await client.threads.create()).thread_id;
    const file = path.join(sandboxRoot(), 'breakpoint.md');
    // A run stopped at a breakpoint answers `{ __interrupt__: [] }`; the state holds the rest.
    const stopped = await client.runs.wait(thread, 'actor', {
      input: ask('write breakpoint.md: after the pause'),
      interruptBefore: ['tools'],
    });
    expect(stopped).toMatchObject({ __interrupt__: [] });
    const pausedState = await client.threads.getState(thread);
    expect(pausedState.next).toEqual(['tools']);
    expect(asValues(pausedState.values).messages.at(-1)?.tool_calls?.[0]).toMatchObject({
      name: 'write_file',
      args: { path: 'breakpoint.md', content: 'after the pause' },
    });
    expect(existsSync(file)).toBe(false);

    const resumed = asValues(await client.runs.wait(thread, 'actor', { input: null }));
    expect(text(resumed.messages.at(-1))).toBe('Wrote breakpoint.md.');
    expect(readFileSync(file, 'utf8')).toBe('after the pause');
    const state = await client.threads.getState(thread);
    expect(state.next).toEqual([]);
    expect(asValues(state.values).changeLog?.map((record) => record.changed)).toEqual([
      [{ status: 'A', path: 'breakpoint.md' }],
    ]);
  });

  describe('approvals graph (policy in ask mode)', () => {
    /** The thread the first test leaves paused, resumed with `approve` by the second. */
    let approvedThread: string | undefined;

    /** Starts a run that asks to write `file` and returns the thread, paused on the approval. */
    async function pausedWrite(
      file: string,
      content: string,
    ): Promise<{ thread: string; preview: ApprovalPreviewValue }> {
      const thread = (await client.threads.create()).thread_id;
      const waited = await client.runs.wait(thread, 'approvals', {
        input: ask(`write ${file}: ${content}`),
      });
      // The run's answer carries the interrupt too (what a client without state polling sees).
      expect(waited).toMatchObject({
        __interrupt__: [{ value: { kind: 'agents/tool-approval' } }],
      });
      const state = await client.threads.getState(thread);
      expect(state.next).toEqual(['tools']);
      const interrupts = state.tasks.flatMap((task) => task.interrupts);
      expect(interrupts).toHaveLength(1);
      return { thread, preview: interrupts[0]!.value as ApprovalPreviewValue };
    }

    it('pauses a write call with the approval preview visible in thread state', async () => {
      const { thread, preview } = await pausedWrite('approved.md', 'approved content');
      expect(preview).toMatchObject({
        kind: 'agents/tool-approval',
        toolId: 'mcp:fs/write_file',
        toolName: 'write_file',
        serverName: 'fs',
        // Logical paths, as the model wrote them: the policy runs before path rewriting.
        args: { path: 'approved.md', content: 'approved content' },
        allowedResponses: ['approve', 'edit', 'reject'],
      });
      expect(JSON.stringify(preview)).not.toContain(baseDir);
      expect(preview.toolCallId).toEqual(expect.any(String));
      for (const capability of ['readOnly', 'writes', 'destructive', 'openWorld'] as const) {
        expect(preview.capabilities[capability], capability).toEqual({
          value: expect.any(Boolean),
          source: expect.any(String),
          reason: expect.any(String),
        });
      }
      expect(preview.capabilities.writes.value).toBe(true);
      expect(preview.capabilities.readOnly.value).toBe(false);
      expect(preview.rule).toEqual(expect.any(String));
      // Nothing ran yet: no file, no change record.
      expect(existsSync(path.join(sandboxRoot(APPROVALS_SANDBOX_ID), 'approved.md'))).toBe(false);
      const state = await client.threads.getState(thread);
      expect(asValues(state.values).changeLog ?? []).toEqual([]);
      approvedThread = thread;
    });

    it('approve: resuming with Command({ resume }) writes the file and the change log shows it', async () => {
      expect(approvedThread).toBeDefined();
      const result = asValues(
        await client.runs.wait(approvedThread!, 'approvals', {
          command: { resume: { type: 'approve' } },
        }),
      );
      expect(text(result.messages.at(-1))).toBe('Wrote approved.md.');
      const root = sandboxRoot(APPROVALS_SANDBOX_ID);
      expect(readFileSync(path.join(root, 'approved.md'), 'utf8')).toBe('approved content');
      // The other graph's sandbox and the user's tree are untouched.
      expect(existsSync(path.join(sandboxRoot(), 'approved.md'))).toBe(false);
      expect(existsSync(path.join(sourceRepo, 'approved.md'))).toBe(false);
      const state = await client.threads.getState(approvedThread!);
      expect(state.next).toEqual([]);
      expect(state.tasks.flatMap((task) => task.interrupts)).toEqual([]);
      const values = asValues(state.values);
      expect(values.changeLog).toEqual([
        expect.objectContaining({
          toolId: 'mcp:fs/write_file',
          changed: [{ status: 'A', path: 'approved.md' }],
        }),
      ]);
      expect(values.sandboxHead).toBe(values.changeLog![0]!.snapshot);
      expect(snapshotFile(APPROVALS_SANDBOX_ID, values.sandboxHead!, 'approved.md')).toBe(
        'approved content',
      );
      // Exactly one tool message: the approval resumed the paused call, it did not add another.
      expect(values.messages.filter((message) => message.type === 'tool')).toHaveLength(1);
    });

    it('reject: a second thread resumed with a message writes nothing and the model sees the message', async () => {
      const { thread, preview } = await pausedWrite('rejected.md', 'should never exist');
      expect(preview.args).toEqual({ path: 'rejected.md', content: 'should never exist' });
      const result = asValues(
        await client.runs.wait(thread, 'approvals', {
          command: { resume: { type: 'reject', message: 'not in this folder, please' } },
        }),
      );
      const toolMessage = result.messages.find((message) => message.type === 'tool');
      expect(toolMessage?.status).toBe('error');
      expect(text(toolMessage)).toContain('not in this folder, please');
      // The scripted model answers from the tool message it got.
      expect(text(result.messages.at(-1))).toMatch(
        /^The write failed: .*not in this folder, please/s,
      );
      expect(existsSync(path.join(sandboxRoot(APPROVALS_SANDBOX_ID), 'rejected.md'))).toBe(false);
      const state = await client.threads.getState(thread);
      expect(state.next).toEqual([]);
      expect(asValues(state.values).changeLog ?? []).toEqual([]);
    });
  });

  it('stops on SIGINT and leaves nothing running (dev server, graph workers, MCP servers)', async () => {
    const pids = server!.treePids();
    const mcpServer = filesystemServers(pids);
    const roots = [sandboxRoot(), sandboxRoot(APPROVALS_SANDBOX_ID)];
    expect(mcpServer).toHaveLength(2);
    await server!.stop();
    const deadline = Date.now() + 5_000;
    while (pids.some(isAlive) && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 100));
    expect(pids.filter(isAlive).map((pid) => `${pid} ${cmdline(pid)}`)).toEqual([]);
    // The graphs closed their sandboxes on the way out: their folders are gone.
    for (const root of roots) {
      expect(git(sourceRepo, 'worktree', 'list')).not.toContain(root);
      expect(existsSync(root)).toBe(false);
    }
  }, 30_000);
});
