/**
 * Issue 29: `agents checkpoints` reads a SQLite thread's checkpoints straight from the saver's
 * tables (src/thread/sqlite-checkpoint-list.ts), without LangGraph. On real threads made by the
 * CLI (parallel tool calls, a rollback fork, an undo, a run continued after them, an approval
 * interrupt and its resume) that lister must give exactly what `listCheckpoints` gives through
 * `graph.getStateHistory`, with and without `--limit`, and the command must print the same
 * either way; what it does not understand sends it back to LangGraph.
 */
import { execFile } from 'node:child_process';
import { copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { promisify } from 'node:util';
import { MemorySaver } from '@langchain/langgraph';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileActorStateGraph } from '../../src/actors/actor-graph.js';
import { createCheckpointsCommand } from '../../src/cli/commands/checkpoints.js';
import { createThreadContextOpener } from '../../src/cli/thread-context.js';
import type { OpenThreadContext } from '../../src/cli/thread-context.js';
import { readSandboxState } from '../../src/core/sandbox-state.js';
import { listCheckpoints } from '../../src/thread/checkpoint-list.js';
import {
  ACTOR_GRAPH_CHANNELS,
  ACTOR_GRAPH_TRIGGERS,
  listSqliteCheckpoints,
} from '../../src/thread/sqlite-checkpoint-list.js';
import { TSX_LOADER } from '../fixtures/fixture-process.js';
import {
  addScriptedActors,
  agents,
  agentsWithStdin,
  makeProjectRepo,
  putFixtureFilesSkill,
} from './helpers.js';

const ROOT = join(import.meta.dirname, '..', '..');
const real = createThreadContextOpener({ lock: false });
/** The same threads, listed through LangGraph (no SQLite file to read directly). */
const viaLangGraph: OpenThreadContext = async (...args) => {
  const thread = await real(...args);
  return { ...thread, checkpointFile: async () => undefined };
};

/** Runs `agents checkpoints ARGV` in this process with `open` as the thread opener. */
async function checkpointsCommand(dir: string, open: OpenThreadContext, argv: string[]) {
  let stdout = '';
  let stderr = '';
  const sink = (append: (text: string) => void) =>
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        append(chunk.toString());
        done();
      },
    });
  const json = argv.includes('--json');
  const code = await createCheckpointsCommand(open).run({
    argv: argv.filter((arg) => arg !== '--json'),
    workspace: join(dir, '.agents'),
    projectDir: dir,
    cwd: dir,
    json,
    stdout: sink((text) => (stdout += text)),
    stderr: sink((text) => (stderr += text)),
    stdin: Readable.from([]),
    signal: new AbortController().signal,
  });
  return { code, stdout, stderr };
}

describe('agents checkpoints without LangGraph (issue 29)', () => {
  let dir: string;

  /** Both listers on `thread`, all, and the newest 1 and 3; returns the fast full listing. */
  async function expectSameListings(threadId: string) {
    const thread = await real(join(dir, '.agents'), threadId, {
      cwd: dir,
      signal: new AbortController().signal,
    });
    try {
      const file = await thread.checkpointFile();
      expect(file).toBe(join(dir, '.agents', 'checkpoints.sqlite'));
      let all: Awaited<ReturnType<typeof listSqliteCheckpoints>>;
      for (const limit of [undefined, 1, 3]) {
        const options = { threadId, sandbox: thread.sandbox, ...(limit ? { limit } : {}) };
        const slow = (await listCheckpoints({ graph: thread.graph, ...options })).map(
          ({ config: _config, ...entry }) => entry,
        );
        const fast = await listSqliteCheckpoints({ file: file!, ...options });
        expect(fast, `thread ${threadId}, limit ${limit}`).toBeDefined();
        expect(fast!.entries).toEqual(slow);
        // Same keys in the same order too: the command prints them as JSON.
        expect(JSON.stringify(fast!.entries)).toBe(JSON.stringify(slow));
        all ??= fast;
      }
      const current = await thread.graph.getState({ configurable: { thread_id: threadId } });
      expect(all!.rollbacks).toEqual(readSandboxState(current.values).rollbacks);
      return all!;
    } finally {
      await thread.close();
    }
  }

  async function expectSameCommandOutput(threadId: string) {
    for (const extra of [[], ['--json'], ['--limit', '2'], ['--all']]) {
      const argv = ['--thread', threadId, ...extra];
      const fast = await checkpointsCommand(dir, real, argv);
      const slow = await checkpointsCommand(dir, viaLangGraph, argv);
      expect(fast.code).toBe(0);
      expect(fast).toEqual(slow);
    }
  }

  beforeAll(async () => {
    dir = await makeProjectRepo('agents-cp-fast-');
    await putFixtureFilesSkill(dir);
    // Turn 1: two writes and a read in parallel; turn 2: one write; then the answer.
    const turns = [
      '- tool_calls: [{ name: write_file, args: { path: a.txt, content: A1 } }, { name: write_file, args: { path: b.txt, content: B1 } }, { name: read_file, args: { path: README.md } }]',
      '- tool_calls: [{ name: write_file, args: { path: c.txt, content: C1 } }]',
      '- content: done',
    ];
    await addScriptedActors(dir, turns, { names: ['bot'], mode: 'auto' });
    // `careful` asks before each write (the default policy).
    await addScriptedActors(dir, turns, { names: ['careful'] });
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('pins the actor graph shape the lister assumes', () => {
    const graph = compileActorStateGraph(new MemorySaver(), 'shape');
    expect(Object.entries(graph.nodes).map(([name, node]) => [name, ...node.triggers])).toEqual(
      ACTOR_GRAPH_TRIGGERS.map(([name, trigger]) => [name, trigger]),
    );
    expect(Object.keys(graph.channels).sort()).toEqual([...ACTOR_GRAPH_CHANNELS].sort());
  });

  it(
    'lists runs with parallel calls, a rollback, an undo and a continued run as LangGraph does',
    { timeout: 240_000 },
    async () => {
      const run = await agents(dir, 'actor', 'run', 'bot', '--input', 'go', '--thread', 't1');
      expect(run.code, run.stderr).toBe(0);
      const first = await expectSameListings('t1');
      const afterParallel = first.entries.find((entry) =>
        entry.changed.some((change) => change.path === 'b.txt'),
      )!;
      expect(afterParallel.activity.ran).toEqual(['write_file', 'write_file', 'read_file']);
      expect(first.entries.some((entry) => entry.next.join() === 'tools,tools,tools')).toBe(true);

      const rollback = await agents(
        dir,
        'rollback',
        '--thread',
        't1',
        '--to',
        afterParallel.checkpointId,
      );
      expect(rollback.code, rollback.stderr).toBe(0);
      const undo = await agents(dir, 'rollback', '--thread', 't1', '--undo');
      expect(undo.code, undo.stderr).toBe(0);
      await expectSameListings('t1');
      // A new input on the forked thread: its state replays from the fork's stored values.
      const again = await agents(dir, 'actor', 'run', 'bot', '--input', 'again', '--thread', 't1');
      expect(again.code, again.stderr).toBe(0);
      const last = await expectSameListings('t1');
      expect(last.entries.filter((entry) => entry.rollback !== undefined)).toHaveLength(2);
      expect(last.entries[0]!.activity.answer).toBe('done');
      await expectSameCommandOutput('t1');

      // The command as a user runs it, with LangChain and LangGraph not installed.
      const hidden = await promisify(execFile)(
        process.execPath,
        [
          '--import',
          TSX_LOADER,
          '--import',
          join(ROOT, 'test', 'fixtures', 'hide-packages.mjs'),
          join(ROOT, 'src', 'cli', 'main.ts'),
          'checkpoints',
          '--thread',
          't1',
        ],
        {
          cwd: dir,
          env: {
            ...process.env,
            AGENTS_HIDE_PACKAGES:
              '@langchain/core,@langchain/langgraph,@langchain/langgraph-checkpoint,@langchain/langgraph-checkpoint-sqlite,langsmith',
          },
        },
      );
      expect(hidden.stdout).toBe((await agents(dir, 'checkpoints', '--thread', 't1')).stdout);

      // Compaction deletes older rows: the kept ones' parents are gone, their state reseeded.
      const compact = await agents(dir, 'thread', 'compact', '--thread', 't1', '--keep', '6');
      expect(compact.code, compact.stderr).toBe(0);
      expect((await expectSameListings('t1')).entries).toHaveLength(6);
    },
  );

  it(
    'lists a thread paused for approval, then resumed, as LangGraph does',
    { timeout: 240_000 },
    async () => {
      const paused = await agentsWithStdin(
        dir,
        '',
        'actor',
        'run',
        'careful',
        '--input',
        'go',
        '--thread',
        't2',
      );
      expect(paused.code, paused.stderr).toBe(8);
      const waiting = await expectSameListings('t2');
      // The pending interrupts leave the two writes' tasks to run.
      expect(waiting.entries[0]!.next).toEqual(['tools', 'tools', 'tools']);
      const resumed = await agentsWithStdin(
        dir,
        '',
        'actor',
        'resume',
        'careful',
        '--thread',
        't2',
        '--approve',
      );
      expect([0, 8]).toContain(resumed.code);
      await expectSameListings('t2');
      await expectSameCommandOutput('t2');
    },
  );

  it('falls back to LangGraph on a row it does not understand', { timeout: 60_000 }, async () => {
    const copy = join(await mkdtemp(join(tmpdir(), 'agents-cp-fast-copy-')), 'checkpoints.sqlite');
    try {
      await copyFile(join(dir, '.agents', 'checkpoints.sqlite'), copy);
      const { db } = SqliteSaver.fromConnString(copy);
      db.prepare(
        "UPDATE writes SET type = 'msgpack' WHERE thread_id = 't1' AND channel = 'messages'",
      ).run();
      db.close();
      expect(await listSqliteCheckpoints({ file: copy, threadId: 't1' })).toBeUndefined();
      expect(
        await listSqliteCheckpoints({ file: copy, threadId: 'no such thread' }),
      ).toBeUndefined();
      // Not a SQLite file at all: LangGraph's path names the problem.
      const garbage = join(copy, '..', 'garbage.sqlite');
      await writeFile(garbage, 'not a database, but long enough to be read as a header '.repeat(4));
      expect(await listSqliteCheckpoints({ file: garbage, threadId: 't1' })).toBeUndefined();
      // The command then lists through LangGraph: the same table.
      const broken: OpenThreadContext = async (...args) => ({
        ...(await real(...args)),
        checkpointFile: async () => copy,
      });
      const argv = ['--thread', 't1', '--json'];
      expect(await checkpointsCommand(dir, broken, argv)).toEqual(
        await checkpointsCommand(dir, real, argv),
      );
    } finally {
      await rm(join(copy, '..'), { recursive: true, force: true });
    }
  });
});
