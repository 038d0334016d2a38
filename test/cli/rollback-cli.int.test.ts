import { execFileSync } from 'node:child_process';
import { access, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openThreadSandbox, threadSandboxDir } from '../../src/actors/thread-sandbox.js';
import {
  addFixtureFilesSkill,
  addScriptedActors,
  agents,
  agentsProcess,
  makeProjectRepo,
} from './helpers.js';

const THREAD = 'thread-1';

interface CheckpointJson {
  checkpointId: string;
  parentCheckpointId?: string;
  step: number;
  source: string;
  next: string[];
  sandboxHead?: string;
  changed: Array<{ status: string; path: string }>;
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

describe('rollback from the CLI (per-thread sandboxes)', () => {
  let dir: string;
  const git = (...args: string[]) =>
    execFileSync('git', args, { cwd: dir, encoding: 'utf8', stdio: 'pipe' });

  beforeEach(async () => {
    dir = await makeProjectRepo('agents-rollback-cli-');

    await addFixtureFilesSkill(dir, { tools: 'basic' });
    // Three writes across three model turns, then an answer.
    // Default sandbox (this repo) and checkpointer (SQLite file); writes run without asking.
    await addScriptedActors(
      dir,
      [
        '- tool_calls: [{ name: write_file, args: { path: a.txt, content: "A1" } }]',
        '- tool_calls: [{ name: write_file, args: { path: b.txt, content: "B1" } }]',
        '- tool_calls: [{ name: write_file, args: { path: a.txt, content: "A2" } }]',
        '- content: all written',
      ],
      { mode: 'auto' },
    );
  });

  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it(
    'runs a thread, lists its checkpoints, previews and rolls back its files in a later process, and leaves the repo alone',
    { timeout: 180_000 },
    async () => {
      const headBefore = git('rev-parse', 'HEAD').trim();
      const statusBefore = git('status', '--porcelain');

      const run = await agentsProcess(dir, [
        'actor',
        'run',
        'bot',
        '--input',
        'write the files',
        '--thread',
        THREAD,
      ]);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toContain('changed: A a.txt');
      expect(run.stdout).toContain('changed: A b.txt');
      expect(run.stdout).toContain('changed: M a.txt');
      expect(run.stdout).toContain('all written');

      // The thread's sandbox outlived the run, recorded in the workspace's state folder.
      const threadDir = threadSandboxDir(join(dir, '.agents'), 'bot', THREAD);
      expect(threadDir.startsWith(dir)).toBe(false);
      const record = JSON.parse(await readFile(join(threadDir, 'thread.json'), 'utf8')) as {
        actor: string;
        threadId: string;
        sandboxDir: string;
      };
      expect(record).toMatchObject({ actor: 'bot', threadId: THREAD });
      // What the commands below need from the actor's config, recorded by the run (issue 29).
      expect(record).toMatchObject({
        config: {
          source: { file: join(dir, '.agents', 'actors', 'bot.yaml') },
          sandboxBackend: 'git',
          sharedRemote: null,
          checkpointer: 'sqlite',
          checkpointFile: join(dir, '.agents', 'checkpoints.sqlite'),
        },
      });
      const marker = JSON.parse(
        await readFile(join(record.sandboxDir, 'run', 'sandbox.json'), 'utf8'),
      ) as { root: string; base: string; head: string };
      const tree = marker.root;
      expect(await readFile(join(tree, 'a.txt'), 'utf8')).toBe('A2');
      expect(await readFile(join(tree, 'b.txt'), 'utf8')).toBe('B1');
      expect(marker.head).not.toBe(marker.base);
      // No lock left behind by the finished run.
      expect(await exists(join(record.sandboxDir, 'run', 'lock'))).toBe(false);

      const diffBefore = await agents(dir, 'sandbox', 'diff', '--thread', THREAD, '--json');
      expect(diffBefore.code, diffBefore.stderr).toBe(0);
      expect(JSON.parse(diffBefore.stdout)).toMatchObject({
        threadId: THREAD,
        from: marker.base,
        to: marker.head,
        changed: [
          { status: 'A', path: 'a.txt' },
          { status: 'A', path: 'b.txt' },
        ],
      });

      const listed = await agents(dir, 'checkpoints', '--thread', THREAD, '--json');
      expect(listed.code, listed.stderr).toBe(0);
      const checkpoints = JSON.parse(listed.stdout) as CheckpointJson[];
      const withChanges = checkpoints.filter((entry) => entry.changed.length > 0);
      // Newest first: the three tool steps, each with the file it changed.
      expect(withChanges.map((entry) => entry.changed)).toEqual([
        [{ status: 'M', path: 'a.txt' }],
        [{ status: 'A', path: 'b.txt' }],
        [{ status: 'A', path: 'a.txt' }],
      ]);
      const target = withChanges[2]!;
      expect(target.sandboxHead).toMatch(/^[0-9a-f]{40}$/);
      expect(target.next).toEqual(['agent']);

      // The table a person reads: a header, what each step did, and the legend of the kinds.
      const table = await agents(dir, 'checkpoints', '--thread', THREAD);
      const tableLines = table.stdout.split('\n');
      expect(tableLines[0]).toMatch(
        /^CHECKPOINT\s+STEP\s+KIND\s+SNAPSHOT\s+NEXT\s+STEP DID\s+FILES$/,
      );
      expect(table.stdout).toContain('prompt "write the files"');
      expect(table.stdout).toMatch(/calls write_file\s+-\n/);
      expect(table.stdout).toMatch(/ran write_file\s+A a\.txt\n/);
      expect(table.stdout).toContain('answer "all written"');
      expect(table.stdout).toContain('KIND: input = a new input arrived');

      // A unique prefix stands for the id (as git takes a short sha); a shared one is refused.
      const ids = checkpoints.map((entry) => entry.checkpointId);
      let length = 4;
      const unique = (id: string) =>
        ids.filter((other) => other.startsWith(id.slice(0, length))).length === 1;
      while (!unique(target.checkpointId)) length++;
      const prefix = target.checkpointId.slice(0, length);
      expect(prefix.length).toBeLessThan(target.checkpointId.length);
      let common = 0;
      while (ids.every((id) => id[common] === ids[0]![common])) common++;
      const shared = ids[0]!.slice(0, Math.max(common, 1));
      const ambiguous = await agents(dir, 'rollback', '--thread', THREAD, '--to', shared);
      expect(ambiguous.code).toBe(2);
      expect(ambiguous.stderr).toContain(`Checkpoint prefix "${shared}" is ambiguous`);
      expect(ambiguous.stderr).toContain(ids[0]!);
      const unknown = await agents(dir, 'rollback', '--thread', THREAD, '--to', 'zzzz-nope');
      expect(unknown.code).toBe(4);
      expect(unknown.stderr).toContain('Checkpoint "zzzz-nope" does not exist');
      const diffFrom = await agents(dir, 'sandbox', 'diff', '--thread', THREAD, '--from', prefix);
      expect(diffFrom.code, diffFrom.stderr).toBe(0);
      expect(diffFrom.stdout).toBe('M a.txt\nA b.txt\n');

      const dryRun = await agentsProcess(dir, [
        'rollback',
        '--thread',
        THREAD,
        '--to',
        prefix,
        '--dry-run',
        '--json',
      ]);
      expect(dryRun.code, dryRun.stderr).toBe(0);
      const preview = JSON.parse(dryRun.stdout) as {
        dryRun: boolean;
        preview: Array<{ status: string; path: string }>;
      };
      expect(preview.dryRun).toBe(true);
      expect(preview.preview).toEqual([
        { status: 'M', path: 'a.txt' },
        { status: 'D', path: 'b.txt' },
      ]);
      // A dry run changes nothing.
      expect(await readFile(join(tree, 'a.txt'), 'utf8')).toBe('A2');
      expect(await readFile(join(tree, 'b.txt'), 'utf8')).toBe('B1');
      expect(
        (JSON.parse((await agents(dir, 'checkpoints', '--thread', THREAD, '--json')).stdout) as [])
          .length,
      ).toBe(checkpoints.length);

      const rolled = await agentsProcess(dir, [
        'rollback',
        '--thread',
        THREAD,
        '--to',
        target.checkpointId,
      ]);
      expect(rolled.code, rolled.stderr).toBe(0);
      expect(rolled.stdout).toContain(
        `Restored thread ${THREAD} to checkpoint ${target.checkpointId}`,
      );
      expect(rolled.stdout).toContain('File changes: M a.txt, D b.txt');
      expect(await readFile(join(tree, 'a.txt'), 'utf8')).toBe('A1');
      expect(await exists(join(tree, 'b.txt'))).toBe(false);

      // The state forked from the target; the old branch is still listed.
      const after = JSON.parse(
        (await agents(dir, 'checkpoints', '--thread', THREAD, '--json')).stdout,
      ) as CheckpointJson[];
      expect(after.length).toBe(checkpoints.length + 1);
      expect(after[0]).toMatchObject({
        source: 'update',
        parentCheckpointId: target.checkpointId,
        sandboxHead: target.sandboxHead,
      });
      expect(after.map((entry) => entry.checkpointId)).toEqual(
        expect.arrayContaining(checkpoints.map((entry) => entry.checkpointId)),
      );

      const diffAfter = await agents(dir, 'sandbox', 'diff', '--thread', THREAD, '--json');
      expect(JSON.parse(diffAfter.stdout)).toMatchObject({
        to: target.sandboxHead,
        changed: [{ status: 'A', path: 'a.txt' }],
      });
      const plain = await agents(dir, 'sandbox', 'diff', '--thread', THREAD);
      expect(plain.stdout).toBe('A a.txt\n');

      // The user's repo: same HEAD, same status, same branches, none of the run's files.
      expect(git('rev-parse', 'HEAD').trim()).toBe(headBefore);
      expect(git('status', '--porcelain')).toBe(statusBefore);
      expect(git('branch', '--format=%(refname:short)').trim()).toBe('main');
      expect(await exists(join(dir, 'a.txt'))).toBe(false);
      expect(await readFile(join(dir, 'README.md'), 'utf8')).toBe('hello\n');

      // Removing the thread's sandbox deletes its folder; the user's repo never had a trace.
      const removed = await agents(dir, 'sandbox', 'remove', '--thread', THREAD);
      expect(removed.code, removed.stderr).toBe(0);
      expect(await exists(threadDir)).toBe(false);
      expect(git('worktree', 'list').trim().split('\n')).toHaveLength(1);
      expect(git('for-each-ref', '--format=%(refname)').trim()).toBe('refs/heads/main');
      const gone = await agents(dir, 'checkpoints', '--thread', THREAD);
      expect(gone.code).toBe(4);
      expect(gone.stderr).toMatch(/No sandbox is recorded for thread "thread-1"/);
    },
  );

  it(
    'continues a thread in its reopened sandbox and refuses a rollback while the thread is held',
    { timeout: 180_000 },
    async () => {
      const first = await agentsProcess(dir, [
        'actor',
        'run',
        'bot',
        '--input',
        'one',
        '--thread',
        THREAD,
      ]);
      expect(first.code, first.stderr).toBe(0);
      const checkpoints = JSON.parse(
        (await agents(dir, 'checkpoints', '--thread', THREAD, '--json')).stdout,
      ) as CheckpointJson[];
      const head = checkpoints[0]!.sandboxHead;
      expect(head).toMatch(/^[0-9a-f]{40}$/);

      // A second run of the same thread (the script replays for the new input) starts from the
      // first run's files: its first write modifies a.txt and chains onto the first run's head.
      const second = await agentsProcess(dir, [
        'actor',
        'run',
        'bot',
        '--input',
        'two',
        '--thread',
        THREAD,
        '--json',
      ]);
      expect(second.code, second.stderr).toBe(0);
      const ends = second.stdout
        .trim()
        .split('\n')
        .map(
          (line) =>
            JSON.parse(line) as { type: string; change?: { parent: string; changed: unknown[] } },
        )
        .filter((event) => event.type === 'tool-call-end');
      expect(ends[0]?.change).toMatchObject({
        parent: head,
        changed: [{ status: 'M', path: 'a.txt' }],
      });
      // b.txt already had B1: rewriting it changes nothing.
      expect(ends[1]?.change?.changed ?? []).toEqual([]);

      // While a process holds the thread (as a run does), rollback is refused and nothing moves.
      const held = await openThreadSandbox({
        workspaceRoot: join(dir, '.agents'),
        actor: 'bot',
        threadId: THREAD,
        source: dir,
        revision: 'HEAD',
        create: false,
      });
      try {
        expect(held.reopened).toBe(true);
        const refused = await agentsProcess(dir, [
          'rollback',
          '--thread',
          THREAD,
          '--to',
          checkpoints.at(-1)!.checkpointId,
        ]);
        // A busy thread has an exit code of its own.
        expect(refused.code).toBe(10);
        expect(refused.stderr).toMatch(/in use by process \d+/);
        expect(await readFile(join(held.root, 'a.txt'), 'utf8')).toBe('A2');
      } finally {
        await held.close({ remove: false });
      }
      expect(await readFile(join(held.root, 'b.txt'), 'utf8')).toBe('B1');
    },
  );
});
