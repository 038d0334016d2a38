import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, realpath, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { findThreadSandboxes } from '../../src/actors/thread-sandbox.js';
import { createCheckpointer } from '../../src/checkpoint/backends.js';
import { createSandbox } from '../../src/sandbox/git/local-sandbox.js';
import { openSandbox } from '../../src/sandbox/git/open-sandbox.js';
import type { SandboxEntry } from '../../src/sandbox/sandbox-inventory.js';
import { addFixtureFilesSkill, addScriptedActors, agents, makeProjectRepo } from './helpers.js';
import { treeHash } from '../helpers/tree-hash.js';

const DAY = 86_400_000;

interface ListJson {
  scope: string;
  totalBytes: number;
  sandboxes: SandboxEntry[];
}

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8' });
}

/** Makes a kept sandbox look idle for `days`: its recorded creation time and activity files. */
async function age(container: string, days: number): Promise<void> {
  const runDir = join(container, 'run');
  const markerFile = join(runDir, 'sandbox.json');
  const marker = JSON.parse(await readFile(markerFile, 'utf8')) as { createdAt: number };
  marker.createdAt -= days * DAY;
  await writeFile(markerFile, JSON.stringify(marker));
  const past = new Date(Date.now() - days * DAY);
  for (const name of ['sandbox.json', 'index']) {
    if (existsSync(join(runDir, name))) await utimes(join(runDir, name), past, past);
  }
}

async function list(dir: string, ...extra: string[]): Promise<ListJson> {
  const result = await agents(dir, 'sandbox', 'list', '--json', ...extra);
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as ListJson;
}

/** The user's side: every file of the repo (ignored ones included), refs, worktrees. */
async function userState(dir: string, worktree: string) {
  return {
    tree: await treeHash(dir),
    worktreeTree: await treeHash(worktree),
    refs: git(dir, 'for-each-ref'),
    worktrees: git(dir, 'worktree', 'list', '--porcelain'),
    status: git(dir, 'status', '--porcelain', '--ignored'),
  };
}

describe('agents sandbox list / prune and agents thread remove', () => {
  let dir: string;
  let stateDir: string;
  let userWorktree: string;
  let savedStateDir: string | undefined;

  beforeEach(async () => {
    savedStateDir = process.env['AGENTS_STATE_DIR'];
    stateDir = await realpath(await mkdtemp(join(tmpdir(), 'agents-prune-state-')));
    process.env['AGENTS_STATE_DIR'] = stateDir;
    dir = await makeProjectRepo('agents-prune-');
    // The user's own worktree and an untracked file: prune must not touch either.
    userWorktree = `${dir}-feature`;
    git(dir, 'worktree', 'add', '-q', '-b', 'feature', userWorktree);
    await writeFile(join(userWorktree, 'wip.txt'), 'mine\n');
    await writeFile(join(dir, 'notes.txt'), 'untracked\n');
    await addFixtureFilesSkill(dir, { tools: 'basic' });
    await addScriptedActors(
      dir,
      [
        '- tool_calls: [{ name: write_file, args: { path: a.txt, content: "A1" } }]',
        '- content: done',
      ],
      { mode: 'auto' },
    );
  });

  afterEach(async () => {
    if (savedStateDir === undefined) delete process.env['AGENTS_STATE_DIR'];
    else process.env['AGENTS_STATE_DIR'] = savedStateDir;
    git(dir, 'worktree', 'remove', '--force', userWorktree);
    await rm(dir, { recursive: true, force: true });
    await rm(stateDir, { recursive: true, force: true });
  });

  async function run(...extra: string[]): Promise<void> {
    const result = await agents(dir, 'actor', 'run', 'bot', '--input', 'go', ...extra);
    expect(result.code, result.stderr).toBe(0);
  }

  it(
    'lists what exists with sizes; prune removes exactly what list showed as old, --dry-run nothing, the user’s files and worktrees untouched',
    { timeout: 240_000 },
    async () => {
      await run('--thread', 'old-thread');
      await run('--thread', 'new-thread');
      // A run sandbox of the project (a programmatic run without a thread), kept.
      const made = await createSandbox({ source: dir });
      await made.close({ remove: false });

      const listed = await list(dir);
      expect(listed.scope).toBe('project');
      expect(listed.sandboxes.map((entry) => entry.threadId ?? entry.kind).sort()).toEqual([
        'new-thread',
        'old-thread',
        'run',
      ]);
      for (const entry of listed.sandboxes) {
        expect(entry.status).toBe('ok');
        expect(entry.activePid).toBeUndefined();
        // A checkout plus a snapshot store: more than a few blocks.
        expect(entry.sizeBytes).toBeGreaterThan(16 * 1024);
      }
      expect(listed.totalBytes).toBe(
        listed.sandboxes.reduce((sum, entry) => sum + entry.sizeBytes, 0),
      );
      const human = await agents(dir, 'sandbox', 'list');
      expect(human.stdout).toMatch(/THREAD\s+ACTOR\s+SANDBOX\s+SIZE\s+AGE\s+LAST RUN\s+STATE/);
      expect(human.stdout).toMatch(/old-thread\s+bot\s+t-[0-9a-f]+\s+[\d.]+ (KB|MB)/);
      // Plain text for pipes and files: no escape codes.
      expect(human.stdout).not.toContain('\u001b');

      const oldThread = listed.sandboxes.find((entry) => entry.threadId === 'old-thread')!;
      const runSandbox = listed.sandboxes.find((entry) => entry.kind === 'run')!;
      await age(join(oldThread.dir, 'sandbox'), 10);
      await age(runSandbox.dir, 10);
      const aged = await list(dir);
      const showedOld = aged.sandboxes
        .filter((entry) => entry.lastUsedAt < Date.now() - 7 * DAY)
        .map((entry) => entry.dir)
        .sort();
      expect(showedOld).toEqual([oldThread.dir, runSandbox.dir].sort());

      const user = await userState(dir, userWorktree);
      const state = await treeHash(stateDir);
      const dry = await agents(
        dir,
        'sandbox',
        'prune',
        '--older-than',
        '7d',
        '--dry-run',
        '--json',
      );
      expect(dry.code, dry.stderr).toBe(0);
      const dryJson = JSON.parse(dry.stdout) as { dryRun: boolean; removed: SandboxEntry[] };
      expect(dryJson.dryRun).toBe(true);
      expect(dryJson.removed.map((entry) => entry.dir).sort()).toEqual(showedOld);
      expect(await treeHash(stateDir)).toBe(state);

      const pruned = await agents(dir, 'sandbox', 'prune', '--older-than', '7d');
      expect(pruned.code, pruned.stderr).toBe(0);
      expect(pruned.stdout).toMatch(/Removed 2 sandbox\(es\)/);
      expect(existsSync(oldThread.dir)).toBe(false);
      expect(existsSync(runSandbox.dir)).toBe(false);
      const after = await list(dir);
      expect(after.sandboxes.map((entry) => entry.threadId)).toEqual(['new-thread']);
      expect(await userState(dir, userWorktree)).toEqual(user);

      // The pruned thread's record went with its sandbox: a clear "not found", not a crash.
      const gone = await agents(dir, 'checkpoints', '--thread', 'old-thread');
      expect(gone.code).toBe(4);
      expect(gone.stderr).toMatch(/No sandbox is recorded for thread "old-thread".*pruned/s);
      // The kept thread still lists and rolls back.
      expect((await agents(dir, 'checkpoints', '--thread', 'new-thread')).code).toBe(0);

      // Nothing old left: a second prune removes nothing.
      const again = await agents(dir, 'sandbox', 'prune', '--older-than', '7d', '--json');
      expect((JSON.parse(again.stdout) as { removed: unknown[] }).removed).toEqual([]);
    },
  );

  it('never prunes a sandbox a live process holds, however old', { timeout: 180_000 }, async () => {
    await run('--thread', 'busy');
    const [location] = await findThreadSandboxes(join(dir, '.agents'), 'busy');
    await age(location!.sandboxDir, 30);
    const held = await openSandbox({ dir: location!.sandboxDir, create: false, lock: true });
    try {
      const listed = await list(dir);
      expect(listed.sandboxes[0]!.activePid).toBe(process.pid);
      const pruned = await agents(dir, 'sandbox', 'prune', '--older-than', '0', '--json');
      expect((JSON.parse(pruned.stdout) as { removed: unknown[] }).removed).toEqual([]);
      expect(existsSync(location!.sandboxDir)).toBe(true);
      const removed = await agents(dir, 'thread', 'remove', '--thread', 'busy', '--yes');
      expect(removed.code).not.toBe(0);
      expect(removed.stderr).toMatch(/in use by process/);
    } finally {
      await held.close({ remove: false });
    }
  });

  it(
    'thread remove leaves no checkpoints, audit lines or sandbox of that thread and another thread intact',
    { timeout: 240_000 },
    async () => {
      await run('--thread', 'doomed');
      await run('--thread', 'kept');
      /** Checkpoints of a thread in the SQLite file, read through LangGraph's own saver. */
      const count = async (thread: string): Promise<number> => {
        const checkpointer = await createCheckpointer({ type: 'sqlite' }, { cwd: dir });
        try {
          let n = 0;
          for await (const _item of checkpointer.saver.list({
            configurable: { thread_id: thread },
          }))
            n++;
          return n;
        } finally {
          await checkpointer.close();
        }
      };
      const auditThreads = async (): Promise<string[]> =>
        (await readFile(join(dir, '.agents', 'audit.jsonl'), 'utf8'))
          .split('\n')
          .filter((line) => line !== '')
          .map((line) => (JSON.parse(line) as { thread?: string }).thread ?? '-');
      expect(await count('doomed')).toBeGreaterThan(0);
      expect(await auditThreads()).toContain('doomed');
      const keptCheckpoints = await count('kept');
      const keptAudit = (await auditThreads()).filter((thread) => thread === 'kept').length;
      const [keptLocation] = await findThreadSandboxes(join(dir, '.agents'), 'kept');
      const keptTree = await treeHash(keptLocation!.sandboxDir);
      const [doomed] = await findThreadSandboxes(join(dir, '.agents'), 'doomed');

      // Not on a terminal and no --yes: says what would go, removes nothing.
      const asked = await agents(dir, 'thread', 'remove', '--thread', 'doomed');
      expect(asked.code).toBe(2);
      expect(asked.stderr).toMatch(/would delete:[\s\S]*checkpoint\(s\)[\s\S]*--yes/);
      expect(await count('doomed')).toBeGreaterThan(0);
      expect(existsSync(doomed!.dir)).toBe(true);

      const removed = await agents(
        dir,
        'thread',
        'remove',
        '--thread',
        'doomed',
        '--yes',
        '--json',
      );
      expect(removed.code, removed.stderr).toBe(0);
      const json = JSON.parse(removed.stdout) as {
        checkpoints: Array<{ count: number }>;
        auditEntries: number;
      };
      expect(json.checkpoints[0]!.count).toBeGreaterThan(0);
      expect(json.auditEntries).toBeGreaterThan(0);
      expect(await count('doomed')).toBe(0);
      expect(await auditThreads()).not.toContain('doomed');
      expect(existsSync(doomed!.dir)).toBe(false);
      expect(await findThreadSandboxes(join(dir, '.agents'), 'doomed')).toEqual([]);

      expect(await count('kept')).toBe(keptCheckpoints);
      expect((await auditThreads()).filter((thread) => thread === 'kept').length).toBe(keptAudit);
      expect(await treeHash(keptLocation!.sandboxDir)).toBe(keptTree);
      expect((await agents(dir, 'checkpoints', '--thread', 'kept')).code).toBe(0);

      // Gone entirely: a second remove says so.
      const again = await agents(dir, 'thread', 'remove', '--thread', 'doomed', '--yes');
      expect(again.code).toBe(4);
      expect(again.stderr).toMatch(/Nothing is kept of thread "doomed"/);
    },
  );
});
