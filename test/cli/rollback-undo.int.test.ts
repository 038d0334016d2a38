import { execFileSync } from 'node:child_process';
import { chmod, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { findThreadSandboxes } from '../../src/actors/thread-sandbox.js';
import {
  addFixtureFilesSkill,
  addScriptedActors,
  agents,
  agentsProcess,
  makeProjectRepo,
} from './helpers.js';
import { treeDigest } from '../helpers/tree-hash.js';

// Spaces and a quote: the printed undo line must paste back through a shell.
const THREAD = "night run 'one'";

interface CheckpointJson {
  checkpointId: string;
  source: string;
  sandboxHead?: string;
  changed: Array<{ status: string; path: string }>;
  rollback?: { kind: string; safety: string; from: string; to: string };
}

/** The argv a POSIX shell makes of a printed command line (the real `sh`, not a parser of ours). */
function shellWords(line: string): string[] {
  const out = execFileSync('sh', ['-c', `set -- ${line}; printf '%s\\0' "$@"`], {
    encoding: 'utf8',
  });
  return out.split('\0').slice(0, -1);
}

describe('agents rollback --undo', () => {
  let dir: string;

  beforeEach(async () => {
    dir = await makeProjectRepo('agents-undo-cli-');
    await addFixtureFilesSkill(dir, { tools: 'basic' });
    // The run writes its own .gitignore, then a file it ignores: rolling back past the
    // .gitignore and undoing must bring that ignored file back too.
    await addScriptedActors(
      dir,
      [
        '- tool_calls: [{ name: write_file, args: { path: a.txt, content: "A1" } }]',
        '- tool_calls: [{ name: write_file, args: { path: .gitignore, content: "*.log\\n" } }]',
        '- tool_calls: [{ name: write_file, args: { path: build.log, content: "log v1" } }]',
        '- tool_calls: [{ name: write_file, args: { path: b.txt, content: "B1" } }]',
        '- content: done',
      ],
      { mode: 'auto' },
    );
  });

  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it(
    'puts back the exact tree (ignored and never-snapshotted files included), two levels deep, with an undo line that pastes back',
    { timeout: 240_000 },
    async () => {
      // The sandbox starts from the project's files as they are (sandbox.from: worktree): the
      // committed README.md and the untracked workspace and script files.
      const baseFiles = execFileSync(
        'git',
        ['ls-files', '-z', '--cached', '--others', '--exclude-standard'],
        { cwd: dir, encoding: 'utf8' },
      )
        .split('\0')
        .filter((path) => path !== '')
        .sort();
      expect(baseFiles).toEqual(expect.arrayContaining(['README.md', 'script.yaml']));
      const run = await agentsProcess(dir, [
        'actor',
        'run',
        'bot',
        '--input',
        'go',
        '--thread',
        THREAD,
      ]);
      expect(run.code, run.stderr).toBe(0);
      const listed = JSON.parse(
        (await agents(dir, 'checkpoints', '--thread', THREAD, '--json')).stdout,
      ) as CheckpointJson[];
      const afterA = listed.find((entry) =>
        entry.changed.some((change) => change.path === 'a.txt'),
      )!;
      const input = listed.at(-1)!;
      expect(input.source).toBe('input');

      // The sandbox tree (found through the thread record the run wrote).
      const location = (await findThreadSandboxes(join(dir, '.agents'), THREAD))[0]!;
      const marker = JSON.parse(
        await readFile(join(location.sandboxDir, 'run', 'sandbox.json'), 'utf8'),
      ) as { root: string };
      const tree = marker.root;
      // A killed call's write (never snapshotted) and an executable bit.
      await writeFile(join(tree, 'late.txt'), 'never snapshotted');
      await chmod(join(tree, 'b.txt'), 0o755);
      const before = await treeDigest(tree);
      expect(Object.keys(before)).toEqual(
        expect.arrayContaining(['.gitignore', 'a.txt', 'b.txt', 'build.log', 'late.txt']),
      );

      const first = await agentsProcess(dir, [
        'rollback',
        '--thread',
        THREAD,
        '--to',
        afterA.checkpointId,
      ]);
      expect(first.code, first.stderr).toBe(0);
      const undoLine = /^To undo: (.*)$/m.exec(first.stdout)?.[1];
      expect(undoLine).toBeDefined();
      const undoArgv = shellWords(undoLine!);
      expect(undoArgv).toEqual(['agents', 'rollback', '--thread', THREAD, '--undo']);
      const middle = await treeDigest(tree);
      expect(middle['b.txt']).toBeUndefined();
      expect(middle['late.txt']).toBeUndefined();
      // Not ignored any more (no .gitignore at that checkpoint), but never tracked: left alone.
      expect(middle['build.log']).toBe(before['build.log']);

      // Second level: back to the input checkpoint (the base tree); build.log is now captured
      // by this rollback's safety snapshot and removed.
      const second = await agentsProcess(dir, [
        'rollback',
        '--thread',
        THREAD,
        '--to',
        input.checkpointId,
      ]);
      expect(second.code, second.stderr).toBe(0);
      expect(Object.keys(await treeDigest(tree)).sort()).toEqual(baseFiles);

      // Both safety snapshots are listed, each on the checkpoint its rollback made.
      const withRollbacks = JSON.parse(
        (await agents(dir, 'checkpoints', '--thread', THREAD, '--json')).stdout,
      ) as CheckpointJson[];
      const made = withRollbacks.filter((entry) => entry.rollback !== undefined);
      expect(made.map((entry) => entry.rollback?.to)).toEqual([
        input.checkpointId,
        afterA.checkpointId,
      ]);
      const text = await agents(dir, 'checkpoints', '--thread', THREAD);
      expect(text.stdout).toContain(`safety snapshot ${made[1]!.rollback!.safety}`);
      expect(text.stdout).toMatch(/Rollbacks to undo, newest first/);

      const undo1 = await agentsProcess(dir, undoArgv.slice(1));
      expect(undo1.code, undo1.stderr).toBe(0);
      expect(undo1.stdout).toMatch(/To undo the rollback before it \(1 left\): agents rollback/);
      expect(await treeDigest(tree)).toEqual(middle);

      const undo2 = await agentsProcess(dir, undoArgv.slice(1));
      expect(undo2.code, undo2.stderr).toBe(0);
      expect(undo2.stdout).toContain('Kept (ignored there): build.log');
      expect(await treeDigest(tree)).toEqual(before);

      // Nothing left to undo: a clear refusal, nothing changed.
      const none = await agents(dir, 'rollback', '--thread', THREAD, '--undo');
      // The same exit code as `sandbox apply --undo` with nothing left to undo (4).
      expect(none.code).toBe(4);
      expect(none.stderr).toMatch(/Nothing to undo on thread/);
      expect(await treeDigest(tree)).toEqual(before);
    },
  );
});
