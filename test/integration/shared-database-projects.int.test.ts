/**
 * Two projects on one PostgreSQL with the same actor name and the same thread id (`t1`): each
 * sees only its own thread, because every thread id a shared store keeps is namespaced by
 * project and actor (`<project>/<actor>/<thread>`). Before, the second project wrote into the
 * first one's thread. They share one snapshot store too, where each project's refs have their
 * own namespace. Runs in the `e2e` vitest project (it needs the Postgres server).
 */
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { emptyCheckpoint } from '@langchain/langgraph-checkpoint';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createCheckpointer } from '../../src/checkpoint/backends.js';
import { storedThreadIdOf } from '../../src/checkpoint/thread-namespace.js';
import { projectIdOf } from '../../src/actors/project-id.js';
import {
  addFixtureFilesSkill,
  agentsProcess,
  makeProjectRepo,
  type CliRun,
} from '../cli/helpers.js';

const postgresUrl = inject('postgresUrl');

interface Project {
  dir: string;
  stateDir: string;
  id: string;
}

let root: string;
let store: string;
let first: Project;
let second: Project;

function rootCommit(dir: string): string {
  return execFileSync('git', ['rev-list', '--max-parents=0', 'HEAD'], {
    cwd: dir,
    encoding: 'utf8',
  })
    .trim()
    .split('\n')
    .at(-1)!;
}

async function makeProject(name: string, file: string): Promise<Project> {
  const dir = await makeProjectRepo(`${name}-`, root);
  // Two repos made in the same second from the same files share their root commit (and so, by
  // design, their project id: clones of one repository are one project). Name each one's root.
  execFileSync('git', ['commit', '-q', '--amend', '-m', `init ${name}`], { cwd: dir });
  await addFixtureFilesSkill(dir);
  await mkdir(join(dir, '.agents', 'actors'), { recursive: true });
  await writeFile(
    join(dir, '.agents', 'actors', 'bot.yaml'),
    [
      'skills: [files]',
      'model: scripted:bot.yaml',
      'checkpointer:',
      '  type: postgres',
      `  url: "${postgresUrl}"`,
      'snapshots:',
      `  remote: "${store}"`,
      'sandbox:',
      '  from: head',
      'policy:',
      '  mode: auto',
      '',
    ].join('\n'),
  );
  await writeFile(
    join(dir, 'bot.yaml'),
    [
      `- tool_calls: [{ name: write_file, args: { path: ${file}, content: "${name}" } }]`,
      '- content: done',
      '',
    ].join('\n'),
  );
  const stateDir = join(root, `state-${name}`);
  await mkdir(stateDir);
  return { dir, stateDir, id: await projectIdOf(dir) };
}

function on(project: Project, argv: string[]): Promise<CliRun> {
  return agentsProcess(project.dir, argv, undefined, { AGENTS_STATE_DIR: project.stateDir });
}

async function storedThreadIds(pattern: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: postgresUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ thread_id: string }>(
      'SELECT DISTINCT thread_id FROM checkpoints WHERE thread_id LIKE $1 ORDER BY thread_id',
      [pattern],
    );
    return rows.map((row) => row.thread_id);
  } finally {
    await client.end();
  }
}

beforeAll(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), 'agents-two-projects-')));
  // One snapshot store for both projects too.
  store = join(root, 'snapshots.git');
  execFileSync('git', ['init', '-q', '--bare', store]);
  first = await makeProject('first', 'first.txt');
  second = await makeProject('second', 'second.txt');
}, 60_000);

afterAll(async () => {
  if (root !== undefined) await rm(root, { recursive: true, force: true });
});

describe('two projects sharing one Postgres checkpointer', () => {
  it('keep thread t1 apart: each delivers only its own files', async () => {
    // Precondition: two repositories, so two project ids (git-<root commit>).
    expect(first.id).toBe(`git-${rootCommit(first.dir)}`);
    expect(second.id).toBe(`git-${rootCommit(second.dir)}`);
    expect(first.id).not.toBe(second.id);

    // One after the other: two processes creating the tables of a fresh database at once can
    // fail (a setup race outside this test's subject).
    const runs: CliRun[] = [];
    for (const project of [first, second]) {
      const run = await on(project, ['actor', 'run', 'bot', '--input', 'go', '--thread', 't1']);
      expect(run.code, run.stdout + run.stderr).toBe(0);
      runs.push(run);
    }
    // The second project's new t1 is its own, and it is told the database holds another one.
    expect(runs[0]!.stderr).not.toContain('also holds a thread');
    expect(runs[1]!.stderr).toContain(
      `the shared database also holds a thread "t1" of project ${first.id} (actor bot)`,
    );
    const [firstDiff, secondDiff] = await Promise.all([
      on(first, ['sandbox', 'diff', '--thread', 't1']),
      on(second, ['sandbox', 'diff', '--thread', 't1']),
    ]);
    expect(firstDiff.code, firstDiff.stderr).toBe(0);
    expect(secondDiff.code, secondDiff.stderr).toBe(0);
    expect(firstDiff.stdout.trim()).toBe('A first.txt');
    expect(secondDiff.stdout.trim()).toBe('A second.txt');

    // In the database: one thread per project, under its namespace; none under the bare id.
    const stored = await storedThreadIds('%t1');
    expect(stored).toEqual(
      [
        storedThreadIdOf({ project: first.id, actor: 'bot' }, 't1'),
        storedThreadIdOf({ project: second.id, actor: 'bot' }, 't1'),
      ].sort(),
    );

    // The shared snapshot store keeps each project's t1 under the project's namespace.
    const refs = execFileSync('git', ['-C', store, 'for-each-ref', '--format=%(refname)'], {
      encoding: 'utf8',
    });
    expect(refs.trim().split('\n').sort()).toEqual(
      [first.id, second.id].map((id) => `refs/agents/projects/${id}/threads/bot/t1/keep`).sort(),
    );

    // Another actor of the first project, on a worker that never ran t1 (a fresh state folder):
    // refused, naming the owner, instead of starting an empty thread of its own.
    await writeFile(
      join(first.dir, '.agents', 'actors', 'other.yaml'),
      await readFile(join(first.dir, '.agents', 'actors', 'bot.yaml'), 'utf8'),
    );
    const freshState = await mkdtemp(join(root, 'state-fresh-'));
    const foreign = await agentsProcess(
      first.dir,
      ['actor', 'run', 'other', '--input', 'go', '--thread', 't1'],
      undefined,
      { AGENTS_STATE_DIR: freshState },
    );
    expect(foreign.code, foreign.stdout + foreign.stderr).not.toBe(0);
    expect(foreign.stderr).toContain('Thread "t1" belongs to actor "bot" in this project');
    expect(foreign.stderr).toContain('agents actor resume bot --thread t1');
    expect(await storedThreadIds('%t1')).not.toContain(
      storedThreadIdOf({ project: first.id, actor: 'other' }, 't1'),
    );

    // Removing the thread in one project leaves the other's.
    const removed = await on(first, ['thread', 'remove', '--thread', 't1', '--yes']);
    expect(removed.code, removed.stdout + removed.stderr).toBe(0);
    expect(await storedThreadIds('%t1')).toEqual([
      storedThreadIdOf({ project: second.id, actor: 'bot' }, 't1'),
    ]);
    // About 25 s on an idle machine (five `agents` processes); room for a loaded one.
  }, 180_000);

  it('opens for two workers starting at once on a fresh database', async () => {
    // Each round a fresh schema: its tables are made by whichever worker comes first. Unguarded,
    // one of the two failed in 10 of 10 rounds (duplicate key in pg_namespace / pg_type).
    for (let round = 0; round < 5; round += 1) {
      const schema = `agents_setup_${process.pid}_${Date.now()}_${round}`;
      const opened = await Promise.allSettled(
        [0, 1].map(() =>
          createCheckpointer({ type: 'postgres', url: postgresUrl }, { postgresSchema: schema }),
        ),
      );
      for (const result of opened) {
        if (result.status === 'fulfilled') await result.value.close();
      }
      expect(opened.map((result) => result.status)).toEqual(['fulfilled', 'fulfilled']);
    }
  });

  it('adopts a thread written under its bare id before namespacing, on first use', async () => {
    const legacy = `legacy-${process.pid}-${Date.now()}`;
    const scope = { project: first.id, actor: 'bot' };
    const config = { configurable: { thread_id: legacy, checkpoint_ns: '' } };
    {
      await using bare = await createCheckpointer({ type: 'postgres', url: postgresUrl });
      const checkpoint = emptyCheckpoint();
      await bare.saver.put(config, checkpoint, { source: 'input', step: -1, parents: {} }, {});
      // Precondition: the row is under the bare id.
      expect(await storedThreadIds(legacy)).toEqual([legacy]);
    }
    await using scoped = await createCheckpointer(
      { type: 'postgres', url: postgresUrl },
      { threadScope: scope },
    );
    const tuple = await scoped.saver.getTuple(config);
    expect(tuple?.config.configurable?.['thread_id']).toBe(legacy);
    expect(await storedThreadIds(`%${legacy}`)).toEqual([storedThreadIdOf(scope, legacy)]);
    // Another actor of the same project does not see it.
    await using other = await createCheckpointer(
      { type: 'postgres', url: postgresUrl },
      { threadScope: { project: first.id, actor: 'other' } },
    );
    expect(await other.saver.getTuple(config)).toBeUndefined();
  });
});
