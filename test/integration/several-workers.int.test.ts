/**
 * Threads that move between machines: two worker processes (the `agents` binary, each with a
 * state folder and a project checkout of its own) share one PostgreSQL (checkpoints + lease)
 * and one bare git repository (snapshots). Runs in the `int-postgres` vitest project.
 */
import { execFileSync } from 'node:child_process';
import { access, cp, mkdir, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { findThreadSandboxes } from '../../src/actors/thread-sandbox.js';
import { openThreadDelivery } from '../../src/entries/actors.js';
import { applySandbox, commitSandbox, diffSandbox } from '../../src/entries/sandbox.js';
import {
  addFixtureFilesSkill,
  agentsProcess,
  makeProjectRepo,
  type CliRun,
} from '../cli/helpers.js';
import { treeHash } from '../helpers/tree-hash.js';
import { AgentsError, AgentsErrorCode } from '../../src/errors.js';
import { acquireThreadLease } from '../../src/checkpoint/postgres-lease.js';

const postgresUrl = inject('postgresUrl');
const suffix = `${process.pid}-${Date.now()}`;

interface Worker {
  name: string;
  project: string;
  stateDir: string;
}

let root: string;
let bare: string;
let workerA: Worker;
let workerB: Worker;
let workerC: Worker;

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', stdio: 'pipe' });
}

/** Runs `agents ...` as a child process of a worker (its own state folder). */
function on(
  worker: Worker,
  argv: string[],
  onStdout?: Parameters<typeof agentsProcess>[2],
): Promise<CliRun> {
  return agentsProcess(worker.project, argv, onStdout, { AGENTS_STATE_DIR: worker.stateDir });
}

async function sandboxRoot(worker: Worker, threadId: string): Promise<string | undefined> {
  const location = (
    await findThreadSandboxes(join(worker.project, '.agents'), threadId, {
      stateDir: worker.stateDir,
    })
  )[0];
  if (location === undefined) return undefined;
  try {
    const marker = JSON.parse(
      await readFile(join(location.sandboxDir, 'run', 'sandbox.json'), 'utf8'),
    ) as { root: string };
    return marker.root;
  } catch {
    return undefined;
  }
}

/** The tree hash of a worker's sandbox of a thread. */
async function workerTree(worker: Worker, threadId: string): Promise<string> {
  const tree = await sandboxRoot(worker, threadId);
  if (tree === undefined) throw new Error(`${worker.name} has no sandbox for ${threadId}`);
  return treeHash(tree);
}

/** The tree hash of a folder holding exactly `files`. */
async function expectedTree(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(join(root, 'expected-'));
  for (const [path, content] of Object.entries(files)) {
    await mkdir(join(dir, path, '..'), { recursive: true });
    await writeFile(join(dir, path), content);
  }
  return treeHash(dir);
}

async function makeWorker(name: string, origin: string): Promise<Worker> {
  const project = join(root, `project-${name}`);
  git(root, 'clone', '-q', origin, project);
  const stateDir = join(root, `state-${name}`);
  await mkdir(stateDir);
  return { name, project, stateDir };
}

beforeAll(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), 'agents-workers-')));
  const origin = await makeProjectRepo('origin-', root);
  bare = join(root, 'snapshots.git');
  git(root, 'init', '-q', '--bare', bare);
  workerA = await makeWorker('A', origin);
  workerB = await makeWorker('B', origin);
  workerC = await makeWorker('C', origin);
  // One workspace, written on A and copied to B (as a checkout of the same project would be).
  const a = workerA.project;
  await addFixtureFilesSkill(a);
  await mkdir(join(a, '.agents', 'actors'), { recursive: true });
  const shared = [
    'checkpointer:',
    '  type: postgres',
    `  url: "${postgresUrl}"`,
    'snapshots:',
    `  remote: "${bare}"`,
    // The committed project, not each worker's untracked files (the scripts, .agents/).
    'sandbox:',
    '  from: head',
  ];
  await writeFile(
    join(a, '.agents', 'actors', 'bot.yaml'),
    [
      'skills: [files]',
      'model: scripted:bot.yaml',
      ...shared,
      'policy:',
      '  mode: ask',
      '  tools:',
      '    write_file: { decision: allow }',
      '    write_then_wait: { decision: allow }',
      '    delete_file: { decision: ask }',
      '',
    ].join('\n'),
  );
  await writeFile(
    join(a, '.agents', 'actors', 'slow.yaml'),
    ['skills: [files]', 'model: scripted:slow.yaml', ...shared, 'policy:', '  mode: auto', ''].join(
      '\n',
    ),
  );
  await cp(join(a, '.agents'), join(workerB.project, '.agents'), { recursive: true });
  await cp(join(a, '.agents'), join(workerC.project, '.agents'), { recursive: true });
  // The model's script: turn N after the latest user message (the same on both workers).
  const botScript = [
    '- tool_calls: [{ name: write_file, args: { path: a.txt, content: "A1" } }, { name: write_file, args: { path: dir/x.txt, content: "X1" } }]',
    '- tool_calls: [{ name: delete_file, args: { path: README.md } }]',
    '- tool_calls: [{ name: write_file, args: { path: a.txt, content: "A2" } }]',
    '- content: done',
    '',
  ].join('\n');
  await writeFile(join(workerA.project, 'bot.yaml'), botScript);
  await writeFile(join(workerB.project, 'bot.yaml'), botScript);
  // A writes a.txt, then is killed in the middle of write_then_wait; B's own run writes c.txt.
  await writeFile(
    join(workerA.project, 'slow.yaml'),
    [
      '- tool_calls: [{ name: write_file, args: { path: a.txt, content: "A1" } }]',
      '- tool_calls: [{ name: write_then_wait, args: { path: killed.txt, content: "K", ms: 120000 } }]',
      '- content: done',
      '',
    ].join('\n'),
  );
  await writeFile(
    join(workerB.project, 'slow.yaml'),
    [
      '- tool_calls: [{ name: write_file, args: { path: c.txt, content: "C1" } }]',
      '- content: done',
      '',
    ].join('\n'),
  );
}, 120_000);

afterAll(async () => {
  if (root !== undefined) await rm(root, { recursive: true, force: true });
});

interface CheckpointJson {
  checkpointId: string;
  source: string;
  sandboxHead?: string;
  records: Array<{ toolId: string; changed: Array<{ status: string; path: string }> }>;
}

describe('a thread that moves between two workers (shared Postgres + shared git store)', () => {
  it(
    'starts on A, is approved and continued on B, rolled back on A, undone on B: files exact at every step',
    // About 7 minutes on a loaded 2-core machine: a dozen `agents` processes.
    { timeout: 900_000 },
    async () => {
      const thread = `moving-${suffix}`;
      const readme = 'hello\n';

      // 1. Worker A: writes two files, then pauses at the approval of delete_file.
      const started = await on(workerA, [
        'actor',
        'run',
        'bot',
        '--input',
        'go',
        '--thread',
        thread,
        '--no-prompt',
      ]);
      expect(started.code, started.stdout + started.stderr).toBe(8);
      const afterA = await expectedTree({ 'README.md': readme, 'a.txt': 'A1', 'dir/x.txt': 'X1' });
      expect(await workerTree(workerA, thread)).toBe(afterA);
      // Every snapshot of the thread is in the shared store, under the thread's own namespace.
      const refs = git(bare, 'for-each-ref', '--format=%(refname)');
      // Under the project's namespace (the workers are clones: one root commit, one project id).
      const projectId = `git-${git(workerA.project, 'rev-list', '--max-parents=0', 'HEAD').trim()}`;
      expect(refs).toMatch(
        new RegExp(`^refs/agents/projects/${projectId}/threads/bot/${thread}/keep$`, 'm'),
      );
      expect(refs).not.toMatch(/refs\/heads\//);

      // 2. Worker B has never seen the thread: it rebuilds the sandbox from the store, exact.
      expect(await sandboxRoot(workerB, thread)).toBeUndefined();
      const approved = await on(workerB, [
        'actor',
        'resume',
        'bot',
        '--thread',
        thread,
        '--approve',
      ]);
      expect(approved.code, approved.stdout + approved.stderr).toBe(0);
      expect(approved.stdout).toMatch(/done/);
      const afterB = await expectedTree({ 'a.txt': 'A2', 'dir/x.txt': 'X1' });
      expect(await workerTree(workerB, thread)).toBe(afterB);
      // A's sandbox is untouched until A opens the thread again.
      expect(await workerTree(workerA, thread)).toBe(afterA);

      // Delivery on A (behind) reads the thread's latest checkpoint, B's work (#26): diff,
      // apply --dry-run and commit --branch all see README.md deleted and a.txt at A2.
      const diffA = await on(workerA, ['sandbox', 'diff', '--thread', thread]);
      expect(diffA.code, diffA.stderr).toBe(0);
      expect(diffA.stdout.split('\n').filter(Boolean).sort()).toEqual([
        'A a.txt',
        'A dir/x.txt',
        'D README.md',
      ]);
      const headDiff = await on(workerA, ['sandbox', 'diff', '--thread', thread, '--to', 'head']);
      expect(headDiff.stdout).toBe(diffA.stdout);
      const patchA = await on(workerA, ['sandbox', 'diff', '--thread', thread, '--patch', 'a.txt']);
      expect(patchA.stdout).toContain('+A2');
      const dryA = await on(workerA, ['sandbox', 'apply', '--thread', thread, '--dry-run']);
      expect(dryA.code, dryA.stderr).toBe(0);
      expect(dryA.stdout).toMatch(/delete +README\.md/);
      const branch = `from-a-${suffix}`;
      const commitA = await on(workerA, [
        'sandbox',
        'commit',
        '--thread',
        thread,
        '--branch',
        branch,
      ]);
      expect(commitA.code, commitA.stderr).toBe(0);
      expect(git(workerA.project, 'show', `${branch}:a.txt`)).toBe('A2');
      expect(git(workerA.project, 'ls-tree', '--name-only', branch)).not.toContain('README.md');
      // The same from code on A (#26): openThreadDelivery + { thread } read B's work; without
      // the thread the functions read A's own (stale) sandbox head.
      const handle = await openThreadDelivery({
        projectDir: workerA.project,
        threadId: thread,
        stateDir: workerA.stateDir,
      });
      try {
        const { sandbox } = handle;
        const paths = (diff: { files: Array<{ path: string; status: string }> }) =>
          diff.files.map((file) => `${file.status} ${file.path}`).sort();
        expect(paths(await diffSandbox(sandbox, { thread: handle.thread }))).toEqual([
          'A a.txt',
          'A dir/x.txt',
          'D README.md',
        ]);
        const head = await diffSandbox(sandbox, { thread: handle.thread, to: 'head' });
        expect(head.patch).toContain('+A2');
        expect(paths(await diffSandbox(sandbox))).toEqual(['A a.txt', 'A dir/x.txt']);
        const dryApi = await applySandbox(sandbox, { thread: handle.thread, dryRun: true });
        expect(dryApi.changes).toContainEqual({ path: 'README.md', action: 'delete' });
        const apiBranch = `api-${suffix}`;
        await commitSandbox(sandbox, { thread: handle.thread, branch: apiBranch, squash: true });
        expect(git(workerA.project, 'show', `${apiBranch}:a.txt`)).toBe('A2');
      } finally {
        await handle.close();
      }
      // Reading changed nothing on A: its sandbox still waits to be brought up to date by a run.
      expect(await workerTree(workerA, thread)).toBe(afterA);

      // 3. Worker A rolls back to the checkpoint B wrote after the approved delete.
      const listed = await on(workerA, ['checkpoints', '--thread', thread, '--json']);
      expect(listed.code, listed.stderr).toBe(0);
      const checkpoints = JSON.parse(listed.stdout) as CheckpointJson[];
      const afterDelete = checkpoints.find((entry) =>
        entry.records.some((record) =>
          record.changed.some((change) => change.status === 'D' && change.path === 'README.md'),
        ),
      );
      expect(afterDelete, listed.stdout).toBeDefined();
      const rolled = await on(workerA, [
        'rollback',
        '--thread',
        thread,
        '--to',
        afterDelete!.checkpointId,
        '--json',
      ]);
      expect(rolled.code, rolled.stdout + rolled.stderr).toBe(0);
      const rollback = JSON.parse(rolled.stdout) as { safety: string; preview: unknown[] };
      // The preview is from the thread's latest files (B's), not A's stale tree.
      expect(rollback.preview).toEqual([{ status: 'M', path: 'a.txt' }]);
      const afterRollback = await expectedTree({ 'a.txt': 'A1', 'dir/x.txt': 'X1' });
      expect(await workerTree(workerA, thread)).toBe(afterRollback);

      // 4. Worker B undoes A's rollback: its safety snapshot came through the store.
      const undone = await on(workerB, ['rollback', '--thread', thread, '--undo', '--json']);
      expect(undone.code, undone.stdout + undone.stderr).toBe(0);
      expect((JSON.parse(undone.stdout) as { target: { sandboxHead: string } }).target).toEqual(
        expect.objectContaining({ sandboxHead: rollback.safety }),
      );
      expect(await workerTree(workerB, thread)).toBe(afterB);

      // 5. A, opening the thread again (a dry run changes nothing but brings A up to date),
      // sees B's undo: its files are B's, and the preview starts from them.
      const dry = await on(workerA, [
        'rollback',
        '--thread',
        thread,
        '--to',
        afterDelete!.checkpointId,
        '--dry-run',
        '--json',
      ]);
      expect(dry.code, dry.stdout + dry.stderr).toBe(0);
      expect((JSON.parse(dry.stdout) as { preview: unknown[] }).preview).toEqual([
        { status: 'M', path: 'a.txt' },
      ]);
      expect(await workerTree(workerA, thread)).toBe(afterB);

      // 6. A third worker that never saw the thread rolls it back from the command line: it
      // finds the thread's actor in the shared store and rebuilds the sandbox first.
      expect(await sandboxRoot(workerC, thread)).toBeUndefined();
      const fresh = await on(workerC, [
        'rollback',
        '--thread',
        thread,
        '--to',
        afterDelete!.checkpointId,
        '--json',
      ]);
      expect(fresh.code, fresh.stdout + fresh.stderr).toBe(0);
      expect((JSON.parse(fresh.stdout) as { preview: unknown[] }).preview).toEqual([
        { status: 'M', path: 'a.txt' },
      ]);
      expect(await workerTree(workerC, thread)).toBe(afterRollback);
    },
  );

  it(
    'refuses a second worker while the first runs the thread, and after a SIGKILL the other resumes from the last checkpoint',
    { timeout: 600_000 },
    async () => {
      const thread = `killed-${suffix}`;
      let killed = false;
      let refused: CliRun | undefined;
      let polling: NodeJS.Timeout | undefined;
      const run = await on(
        workerA,
        ['actor', 'run', 'slow', '--input', 'go', '--thread', thread],
        (stdout, child) => {
          if (polling !== undefined || !stdout.includes('write_then_wait')) return;
          polling = setInterval(() => {
            void (async () => {
              if (killed || refused !== undefined) return;
              const tree = await sandboxRoot(workerA, thread);
              if (tree === undefined) return;
              const written = await access(join(tree, 'killed.txt')).then(
                () => true,
                () => false,
              );
              if (!written) return;
              clearInterval(polling);
              // A is in the middle of a write: B may not run the thread now.
              refused = await on(workerB, [
                'actor',
                'run',
                'slow',
                '--input',
                'again',
                '--thread',
                thread,
              ]);
              killed = true;
              child.kill('SIGKILL');
            })();
          }, 50);
        },
      );
      clearInterval(polling);
      expect(killed, run.stdout + run.stderr).toBe(true);
      expect(run.code).toBeNull();
      expect(refused?.code, refused?.stdout).not.toBe(0);
      expect(refused?.stderr).toContain(
        `Thread "${thread}" of actor "slow" is held by another worker`,
      );
      expect(refused?.stderr).toMatch(/agents \S+ pid \d+/);
      // The refused worker made nothing of its own for the thread.
      expect(await sandboxRoot(workerB, thread)).toBeUndefined();

      // B takes over: the killed call's file never reached a checkpoint, so it is not there.
      const resumed = await on(workerB, [
        'actor',
        'run',
        'slow',
        '--input',
        'again',
        '--thread',
        thread,
        '--json',
      ]);
      expect(resumed.code, resumed.stdout + resumed.stderr).toBe(0);
      const ends = resumed.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { type: string; change?: { changed: unknown[] } })
        .filter((event) => event.type === 'tool-call-end');
      // B's write changed only c.txt: it started from the last checkpointed files exactly.
      expect(ends.map((event) => event.change?.changed)).toEqual([
        [{ status: 'A', path: 'c.txt' }],
      ]);
      expect(await workerTree(workerB, thread)).toBe(
        await expectedTree({ 'README.md': 'hello\n', 'a.txt': 'A1', 'c.txt': 'C1' }),
      );
    },
  );

  it('leases a thread to one holder at a time: a typed RUN_ACTIVE naming the thread and the holder, free again once released', async () => {
    const threadId = `leased-${suffix}`;
    const first = await acquireThreadLease({ url: postgresUrl, actor: 'bot', threadId });
    try {
      const refused = await acquireThreadLease({ url: postgresUrl, actor: 'bot', threadId }).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(AgentsError.isInstance(refused)).toBe(true);
      const error = refused as AgentsError;
      expect(error.code).toBe(AgentsErrorCode.RunActive);
      expect(error.details).toMatchObject({ threadId, actor: 'bot' });
      expect(String(error.details['holder'])).toContain(first.holder);
      // Another thread, or the same thread id of another actor, is not held.
      await (await acquireThreadLease({ url: postgresUrl, actor: 'other', threadId })).release();
    } finally {
      await first.release();
    }
    await (await acquireThreadLease({ url: postgresUrl, actor: 'bot', threadId })).release();
  });
});
