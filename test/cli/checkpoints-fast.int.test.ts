/**
 * Issues 29 and 39: `agents checkpoints` starts without LangGraph by printing the listing
 * LangGraph's own reader gave, stored beside the checkpoints in the SQLite file (with the thread's
 * stamp) by the run that wrote them, by a rollback or undo, or by the first listing of a thread
 * written before the store existed. On real threads made by the CLI (parallel tool calls, a
 * rollback fork, an undo, a run continued after them, an approval interrupt and its resume) the
 * stored listing must equal `listCheckpoints` through `graph.getStateHistory`, with and without
 * `--limit`, the command must print the same either way, and a thread changed behind the
 * store's back is read through LangGraph again.
 */
import { execFile } from 'node:child_process';
import { copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { promisify } from 'node:util';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSqliteListing } from '../../src/checkpoint/sqlite-listing.js';
import { createCheckpointsCommand } from '../../src/cli/commands/checkpoints.js';
import { listThreadCheckpoints } from '../../src/cli/commands/checkpoints-listing.js';
import { createThreadContextOpener } from '../../src/actors/open-thread.js';
import type { OpenThreadContext } from '../../src/actors/open-thread.js';
import { readSandboxState } from '../../src/core/sandbox-state.js';
import { listCheckpoints } from '../../src/thread/checkpoint-list.js';
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
/** The same threads, listed through LangGraph (no SQLite file to read a stored listing from). */
const viaLangGraph: OpenThreadContext = async (...args) => {
  const thread = await real(...args);
  return { ...thread, checkpointFile: async () => undefined };
};
const HIDDEN =
  '@langchain/core,@langchain/langgraph,@langchain/langgraph-checkpoint,@langchain/langgraph-checkpoint-sqlite,langsmith';

/** `agents checkpoints ARGV` as a user runs it, with LangChain and LangGraph not installed. */
async function withoutLangGraph(dir: string, ...argv: string[]) {
  return promisify(execFile)(
    process.execPath,
    [
      '--import',
      TSX_LOADER,
      '--import',
      join(ROOT, 'test', 'fixtures', 'hide-packages.mjs'),
      join(ROOT, 'src', 'cli', 'main.ts'),
      'checkpoints',
      ...argv,
    ],
    { cwd: dir, env: { ...process.env, AGENTS_HIDE_PACKAGES: HIDDEN } },
  );
}

/** The listing stored for `threadId` in `file` while it is fresh (undefined when stale or none). */
async function storedListing(file: string, threadId: string) {
  const store = await openSqliteListing(file, { writable: false });
  try {
    return store?.read(threadId, store.stamp(threadId));
  } finally {
    store?.close();
  }
}

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

describe('agents checkpoints from the stored listing (issues 29, 39)', () => {
  let dir: string;
  let file: string;

  /**
   * The stored listing is there (unless `stored: false`) and equals LangGraph's, all and the
   * newest 1 and 3; returns the full listing.
   */
  async function expectSameListings(threadId: string, { stored = true } = {}) {
    if (stored) expect(await storedListing(file, threadId), threadId).toBeDefined();
    const thread = await real(join(dir, '.agents'), threadId, {
      cwd: dir,
      signal: new AbortController().signal,
    });
    try {
      expect(await thread.checkpointFile()).toBe(file);
      let all: Awaited<ReturnType<typeof listThreadCheckpoints>> | undefined;
      for (const limit of [undefined, 1, 3]) {
        const options = { threadId, sandbox: thread.sandbox, ...(limit ? { limit } : {}) };
        const slow = (await listCheckpoints({ graph: thread.graph, ...options })).map(
          ({ config: _config, ...entry }) => entry,
        );
        const listed = await listThreadCheckpoints(thread, options);
        expect(listed.entries, `thread ${threadId}, limit ${limit}`).toEqual(slow);
        // Same keys in the same order too: the command prints them as JSON.
        expect(JSON.stringify(listed.entries)).toBe(JSON.stringify(slow));
        all ??= listed;
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
      const stored = await checkpointsCommand(dir, real, argv);
      const slow = await checkpointsCommand(dir, viaLangGraph, argv);
      expect(stored.code).toBe(0);
      expect(stored).toEqual(slow);
    }
    // Without LangGraph installed: only the stored listing can answer.
    expect((await withoutLangGraph(dir, '--thread', threadId)).stdout).toBe(
      (await agents(dir, 'checkpoints', '--thread', threadId)).stdout,
    );
  }

  beforeAll(async () => {
    dir = await makeProjectRepo('agents-cp-fast-');
    file = join(dir, '.agents', 'checkpoints.sqlite');
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

  it(
    'stores the listing of runs with parallel calls, a rollback, an undo and a continued run',
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
      // Stored by the run: the first listing after it needs no LangGraph.
      expect((await withoutLangGraph(dir, '--thread', 't1')).stdout).toContain(
        afterParallel.checkpointId,
      );

      const rollback = await agents(
        dir,
        'rollback',
        '--thread',
        't1',
        '--to',
        afterParallel.checkpointId,
      );
      expect(rollback.code, rollback.stderr).toBe(0);
      await expectSameListings('t1');
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

      // Compaction deletes older rows: the kept ones' parents are gone, their state reseeded.
      const compact = await agents(dir, 'thread', 'compact', '--thread', 't1', '--keep', '6');
      expect(compact.code, compact.stderr).toBe(0);
      expect((await expectSameListings('t1')).entries).toHaveLength(6);

      // Changed behind the store's back (another tool deletes the newest checkpoint): the stored
      // listing is stale, LangGraph lists the thread again, and that listing is stored.
      const { db } = SqliteSaver.fromConnString(file);
      const newest = last.entries[0]!.checkpointId;
      db.prepare("DELETE FROM checkpoints WHERE thread_id = 't1' AND checkpoint_id = ?").run(
        newest,
      );
      db.prepare("DELETE FROM writes WHERE thread_id = 't1' AND checkpoint_id = ?").run(newest);
      db.close();
      expect(await storedListing(file, 't1')).toBeUndefined();
      const relisted = await expectSameListings('t1', { stored: false });
      expect(relisted.entries.map((entry) => entry.checkpointId)).not.toContain(newest);
      expect(await storedListing(file, 't1')).toBeDefined();
    },
  );

  it(
    'stores the listing of a thread paused for approval, then resumed',
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

  it(
    'lists a thread written before the store through LangGraph once, then from the store',
    { timeout: 60_000 },
    async () => {
      const copyDir = await mkdtemp(join(tmpdir(), 'agents-cp-fast-copy-'));
      const copy = join(copyDir, 'checkpoints.sqlite');
      const onCopy: OpenThreadContext = async (...args) => ({
        ...(await real(...args)),
        checkpointFile: async () => copy,
      });
      try {
        await copyFile(file, copy);
        // As a file written before issue 39: no listing table.
        const { db } = SqliteSaver.fromConnString(copy);
        db.exec('DROP TABLE agents_checkpoint_listing');
        db.close();
        expect(await storedListing(copy, 't2')).toBeUndefined();
        const argv = ['--thread', 't2', '--json'];
        const listed = await checkpointsCommand(dir, onCopy, argv);
        expect(listed).toEqual(await checkpointsCommand(dir, viaLangGraph, argv));
        // The one-time migration: that listing is stored now.
        expect(await storedListing(copy, 't2')).toBeDefined();

        // Not a SQLite file at all: LangGraph's path answers (here: from the thread's real file).
        const garbage = join(copyDir, 'garbage.sqlite');
        await writeFile(
          garbage,
          'not a database, but long enough to be read as a header '.repeat(4),
        );
        const broken: OpenThreadContext = async (...args) => ({
          ...(await real(...args)),
          checkpointFile: async () => garbage,
        });
        expect(await checkpointsCommand(dir, broken, argv)).toEqual(
          await checkpointsCommand(dir, viaLangGraph, argv),
        );
      } finally {
        await rm(copyDir, { recursive: true, force: true });
      }
    },
  );
});
