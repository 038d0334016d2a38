import { execFileSync } from 'node:child_process';
import { appendFile, readFile, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { describeActorFile } from '../../../src/actors/thread-config.js';
import { recordThreadConfig, threadSandboxDir } from '../../../src/actors/thread-sandbox.js';
import { createThreadContextOpener } from '../../../src/actors/open-thread.js';
import { AgentsError } from '../../../src/errors.js';
import {
  ACTOR,
  cli,
  editThread,
  gitDirFingerprint,
  makeProject,
  removeProject,
  type Project,
} from './helpers.js';

const T = 't1';
const BINARY = Buffer.from([0, 1, 2, 3, 255, 254, 0, 10, 13, 0]);
const OTHER_BINARY = Buffer.from([9, 0, 8, 0, 7, 0, 200]);

describe('agents sandbox diff (review a thread`s work)', () => {
  let project: Project | undefined;
  afterEach(async () => {
    await removeProject(project);
  });

  it('shows names, a stat, the unified diff and structured hunks; renames and binaries as git does', async () => {
    const p = (project = await makeProject('agents-diff-', {
      'src/app.txt': 'one\ntwo\nthree\n',
      'docs/long.txt': `${'a line of text that stays\n'.repeat(20)}`,
      'old.bin': BINARY,
    }));
    const gitBefore = await gitDirFingerprint(p.dir);
    const first = await editThread(p, T, {
      'src/app.txt': 'one\nTWO\nthree\n',
      'docs/long.txt': { renameTo: 'docs/renamed.txt' },
    });
    await editThread(p, T, { 'new.bin': OTHER_BINARY, 'old.bin': null, 'notes.md': 'hi\n' });

    const names = await cli(p, 'sandbox', 'diff', '--thread', T);
    expect(names.stderr).toBe('');
    expect(names.stdout).toBe(
      [
        'A docs/renamed.txt',
        'D docs/long.txt',
        'A new.bin',
        'A notes.md',
        'D old.bin',
        'M src/app.txt',
      ]
        .sort((a, b) => a.slice(2).localeCompare(b.slice(2)))
        .join('\n') + '\n',
    );

    const patch = await cli(p, 'sandbox', 'diff', '--thread', T, '--patch');
    expect(patch.code, patch.stderr).toBe(0);
    expect(patch.stdout).toContain('diff --git a/src/app.txt b/src/app.txt');
    expect(patch.stdout).toContain('-two\n+TWO\n');
    expect(patch.stdout).toContain('rename from docs/long.txt\nrename to docs/renamed.txt');
    // Binary files as a binary patch, so `git apply` takes the whole output (partial review).
    expect(patch.stdout).toMatch(
      /diff --git a\/new\.bin b\/new\.bin\nnew file mode 100644\n.*\nGIT binary patch\n/,
    );
    // Not a terminal: no colour.
    expect(patch.stdout).not.toContain('\u001b[');

    const stat = await cli(p, 'sandbox', 'diff', '--thread', T, '--stat');
    expect(stat.stdout).toMatch(/src\/app\.txt +\| +2 \+-/);
    expect(stat.stdout).toMatch(/new\.bin +\| Bin 0 -> 7 bytes/);
    expect(stat.stdout).toMatch(/docs\/\{long\.txt => renamed\.txt\} +\| +0/);
    expect(stat.stdout).toMatch(/5 files changed/);

    // A path with nothing changed under it says so in words.
    const none = await cli(p, 'sandbox', 'diff', '--thread', T, 'nowhere');
    expect(none.stdout).toBe(`No changes in thread ${T} under nowhere.\n`);

    // Limited to one path, in JSON, with structured hunks.
    const json = await cli(p, 'sandbox', 'diff', '--thread', T, '--json', 'src');
    expect(json.code, json.stderr).toBe(0);
    const parsed = JSON.parse(json.stdout) as {
      changed: unknown[];
      files: Array<Record<string, unknown>>;
    };
    expect(parsed.changed).toEqual([{ status: 'M', path: 'src/app.txt' }]);
    expect(parsed.files).toEqual([
      {
        path: 'src/app.txt',
        status: 'M',
        oldMode: '100644',
        newMode: '100644',
        binary: false,
        additions: 1,
        deletions: 1,
        hunks: [
          {
            oldStart: 1,
            oldLines: 3,
            newStart: 1,
            newLines: 3,
            section: '',
            lines: [
              { kind: 'context', text: 'one' },
              { kind: 'remove', text: 'two' },
              { kind: 'add', text: 'TWO' },
              { kind: 'context', text: 'three' },
            ],
          },
        ],
      },
    ]);
    const all = JSON.parse((await cli(p, 'sandbox', 'diff', '--thread', T, '--json')).stdout) as {
      files: Array<{ path: string; status: string; oldPath?: string; binary: boolean }>;
    };
    expect(all.files.find((file) => file.path === 'docs/renamed.txt')).toMatchObject({
      status: 'R',
      oldPath: 'docs/long.txt',
    });
    expect(all.files.find((file) => file.path === 'new.bin')).toMatchObject({ binary: true });

    // Between two snapshots: only the second step.
    const range = await cli(p, 'sandbox', 'diff', '--thread', T, '--from', first);
    expect(range.stdout).toBe('A new.bin\nA notes.md\nD old.bin\n');
    const bad = await cli(p, 'sandbox', 'diff', '--thread', T, '--to', 'not-a-checkpoint');
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('not-a-checkpoint');

    // Review reads only the sandbox: the user's .git is as it was.
    expect(await gitDirFingerprint(p.dir)).toEqual(gitBefore);
  });

  it('opens from the facts a run recorded while the actor file is unchanged, reads the config when it changed or the record is garbage; same diff either way', async () => {
    const p = (project = await makeProject('agents-diff-facts-'));
    await editThread(p, T, { 'a.txt': 'A\n', 'README.md': null });
    const threadDir = threadSandboxDir(p.workspace, ACTOR, T);
    const actorFile = join(p.workspace, 'actors', `${ACTOR}.yaml`);
    const sqlite = join(p.dir, '.agents', 'checkpoints.sqlite');
    // What `agents actor run --thread` records (openActorSandbox calls the same two functions).
    const record = () =>
      recordThreadConfig(threadDir, (found) =>
        describeActorFile(join(p.workspace, 'actors'), ACTOR, found.projectDir!),
      );
    expect(await record()).toBe(true);
    const recorded = JSON.parse(await readFile(join(threadDir, 'thread.json'), 'utf8')) as {
      config: Record<string, unknown>;
    };
    expect(recorded.config).toMatchObject({
      source: { file: actorFile, size: (await readFile(actorFile)).length },
      sandboxBackend: 'git',
      sharedRemote: null,
      checkpointer: 'sqlite',
      checkpointFile: sqlite,
    });
    const open = async () => {
      const thread = await createThreadContextOpener({ lock: false })(p.workspace, T, {
        cwd: p.dir,
        signal: AbortSignal.timeout(60_000),
      });
      try {
        return { file: await thread.checkpointFile(), shared: thread.shared === true };
      } finally {
        await thread.close();
      }
    };
    const rewrite = (config: unknown) =>
      writeFile(join(threadDir, 'thread.json'), JSON.stringify({ ...recorded, config }, null, 2));
    const expected = 'D README.md\nA a.txt\n';
    const fast = await cli(p, 'sandbox', 'diff', '--thread', T);
    expect(fast.stdout, fast.stderr).toBe(expected);
    expect(await open()).toEqual({ file: sqlite, shared: false });

    // The record answers while the file has the bytes it was read from (a well-formed lie there
    // is believed: the record is a cache, as writable as the config it caches)...
    const lie = { ...recorded.config, checkpointFile: '/elsewhere/x.sqlite' };
    await rewrite(lie);
    expect((await open()).file).toBe('/elsewhere/x.sqlite');
    // (The store's name is checked against the table only when the store is opened.)
    for (const checkpointer of ['oracle', 'postgres']) {
      await rewrite({ ...lie, checkpointer });
      expect((await open()).file).toBe('/elsewhere/x.sqlite');
    }
    // ...and one with a field out of the writer's shape is not: the config is read, no crash.
    for (const garbage of [
      { ...lie, checkpointFile: 'relative.sqlite' },
      { ...lie, checkpointFile: undefined },
      { ...lie, checkpointer: 'Oracle DB' },
      { ...lie, checkpointer: 42 },
      { ...lie, sandboxBackend: 'nope' },
      { ...lie, sandboxBackend: { toString: 1 } },
      { ...lie, sharedRemote: '--upload-pack=touch /tmp/x' },
      { ...lie, version: 2 },
      { ...lie, source: { ...(recorded.config['source'] as object), size: -1 } },
      { ...lie, source: { ...(recorded.config['source'] as object), sha256: 'F'.repeat(64) } },
      { ...lie, source: { ...(recorded.config['source'] as object), file: 'actors/bot.yaml' } },
      { ...lie, source: null },
      'garbage',
      [],
      null,
    ]) {
      await rewrite(garbage);
      expect(await open(), JSON.stringify(garbage)).toEqual({ file: sqlite, shared: false });
    }
    // A record cut short is no record (as before): a clear error, not a crash.
    await writeFile(join(threadDir, 'thread.json'), '{"kind": "agents-thread", "actor": ');
    const broken = await cli(p, 'sandbox', 'diff', '--thread', T);
    expect(broken.code).not.toBe(0);
    expect(broken.stderr).toContain(`No sandbox is recorded for thread "${T}"`);
    await rewrite({ ...recorded.config, checkpointFile: 42 });
    const garbled = await cli(p, 'sandbox', 'diff', '--thread', T);
    expect(garbled.stdout, garbled.stderr).toBe(expected);

    // An edited config is noticed even with the old facts still recorded: its checkpoint file...
    await rewrite({ ...recorded.config, checkpointFile: '/elsewhere/x.sqlite' });
    const original = await readFile(actorFile);
    await appendFile(actorFile, 'checkpointer:\n  type: sqlite\n  path: other.sqlite\n');
    expect((await open()).file).toBe(join(p.dir, 'other.sqlite'));
    // ...a shared snapshot store added (fetched from, as the full read does), same diff...
    const remote = join(p.dir, '.agents', 'shared.git');
    execFileSync('git', ['init', '-q', '--bare', remote]);
    await writeFile(actorFile, `${original.toString()}snapshots:\n  remote: .agents/shared.git\n`);
    expect(await open()).toEqual({ file: sqlite, shared: true });
    const full = await cli(p, 'sandbox', 'diff', '--thread', T);
    expect(full.stdout, full.stderr).toBe(expected);
    // ...or an edit that keeps the size and the mtime (the bytes' hash decides).
    await writeFile(
      actorFile,
      `${original.toString()}checkpointer: { type: sqlite, path: 1.db }\n`,
    );
    await record();
    const { mtime } = await stat(actorFile);
    await writeFile(
      actorFile,
      `${original.toString()}checkpointer: { type: sqlite, path: 2.db }\n`,
    );
    await utimes(actorFile, mtime, mtime);
    expect((await open()).file).toBe(join(p.dir, '2.db'));
    // The next run records the new facts; a memory checkpointer is answered from them.
    await writeFile(actorFile, `${original.toString()}checkpointer:\n  type: memory\n`);
    await record();
    const memory = await createThreadContextOpener({ lock: false })(p.workspace, T, {
      cwd: p.dir,
      signal: AbortSignal.timeout(60_000),
    });
    try {
      expect(await memory.checkpointFile()).toBeUndefined();
      const error = await memory.saver!().catch((caught: unknown) => caught);
      expect(AgentsError.hasCode(error, 'CHECKPOINT_NOT_FOUND')).toBe(true);
    } finally {
      await memory.close();
    }
    expect((await cli(p, 'sandbox', 'diff', '--thread', T)).stdout).toBe(expected);
  });
});
