import { afterEach, describe, expect, it } from 'vitest';
import {
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
});
