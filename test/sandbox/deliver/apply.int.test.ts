import { access, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  cli,
  editThread,
  gitDirFingerprint,
  makeProject,
  removeProject,
  sandboxHeadTree,
  userGit,
  worktreeTree,
  type Project,
} from './helpers.js';

const T = 't1';
const BINARY = Buffer.from([0, 1, 2, 3, 255, 254, 0, 10, 13, 0]);
const NEW_BINARY = Buffer.from([7, 0, 7, 0, 128, 129, 0]);
const LINES = Array.from({ length: 12 }, (_, index) => `line ${index + 1}`);
const text = (lines: readonly string[]) => `${lines.join('\n')}\n`;

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

describe('agents sandbox apply (take the work back)', () => {
  let project: Project | undefined;
  afterEach(async () => {
    await removeProject(project);
  });

  it('onto an unchanged tree gives exactly the sandbox`s files (binary, rename, delete); --undo puts them back byte for byte', async () => {
    const p = (project = await makeProject('agents-apply-', {
      'src/app.txt': text(LINES),
      'docs/old-name.md': 'moved\n',
      'data.bin': BINARY,
      'gone.txt': 'bye\n',
      'run.sh': '#!/bin/sh\necho hi\n',
    }));
    await editThread(p, T, {
      'src/app.txt': text(LINES.map((line) => (line === 'line 2' ? 'line 2 (sandbox)' : line))),
      'docs/old-name.md': { renameTo: 'docs/new/name.md' },
      'data.bin': NEW_BINARY,
      'gone.txt': null,
      'added/deep/file.txt': 'new\n',
    });
    const headBefore = userGit(p.dir, 'rev-parse', 'HEAD');
    const gitBefore = await gitDirFingerprint(p.dir);

    const dry = await cli(p, 'sandbox', 'apply', '--thread', T, '--dry-run');
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain('write    src/app.txt');
    expect(dry.stdout).toContain('delete   gone.txt');
    expect(dry.stdout).toContain('Dry run, nothing written: 6 file(s) would be written');
    expect(await readFile(join(p.dir, 'src/app.txt'), 'utf8')).toBe(text(LINES));

    const applied = await cli(p, 'sandbox', 'apply', '--thread', T);
    expect(applied.code, applied.stderr).toBe(0);
    expect(applied.stdout).toContain('Applied 6 file(s)');

    // The user's files are now exactly the sandbox's tree.
    expect(await worktreeTree(p.dir)).toBe(await sandboxHeadTree(p, T));
    expect(await readFile(join(p.dir, 'data.bin'))).toEqual(NEW_BINARY);
    expect(await readFile(join(p.dir, 'docs/new/name.md'), 'utf8')).toBe('moved\n');
    expect(await exists(join(p.dir, 'docs/old-name.md'))).toBe(false);
    expect(await exists(join(p.dir, 'gone.txt'))).toBe(false);
    expect(await readFile(join(p.dir, 'added/deep/file.txt'), 'utf8')).toBe('new\n');
    expect(await readFile(join(p.dir, 'src/app.txt'), 'utf8')).toContain('line 2 (sandbox)\n');
    const status = userGit(p.dir, 'status', '--porcelain', '--untracked-files=all');
    expect(status.split('\n').filter(Boolean).sort()).toEqual(
      [
        ' D docs/old-name.md',
        ' D gone.txt',
        ' M data.bin',
        ' M src/app.txt',
        '?? added/deep/file.txt',
        '?? docs/new/name.md',
      ].sort(),
    );
    // Apply never touches HEAD, the index, refs or config.
    expect(userGit(p.dir, 'rev-parse', 'HEAD')).toBe(headBefore);
    expect(await gitDirFingerprint(p.dir)).toEqual(gitBefore);

    // A second apply finds nothing to do.
    const again = await cli(p, 'sandbox', 'apply', '--thread', T);
    expect(again.stdout).toContain('Nothing to apply');

    const undo = await cli(p, 'sandbox', 'apply', '--thread', T, '--undo');
    expect(undo.code, undo.stderr).toBe(0);
    expect(undo.stdout).toContain('Put back 6 file(s)');
    expect(userGit(p.dir, 'status', '--porcelain', '--untracked-files=all')).toBe('');
    expect(await readFile(join(p.dir, 'data.bin'))).toEqual(BINARY);
    expect(await exists(join(p.dir, 'added'))).toBe(false);
    expect(await gitDirFingerprint(p.dir)).toEqual(gitBefore);
    const none = await cli(p, 'sandbox', 'apply', '--thread', T, '--undo');
    expect(none.code).toBe(4);
    expect(none.stderr).toContain('no apply of this sandbox left to undo');
  });

  it('merges edits the user made meanwhile with the sandbox`s; a real conflict writes nothing and names the path', async () => {
    const p = (project = await makeProject('agents-apply-merge-', {
      'app.txt': text(LINES),
      'other.txt': 'untouched\n',
      'clash.txt': 'same line\n',
    }));
    await editThread(p, T, {
      'app.txt': text(LINES.map((line) => (line === 'line 2' ? 'line 2 (sandbox)' : line))),
      'other.txt': 'from the sandbox\n',
      'clash.txt': 'sandbox version\n',
    });
    // Meanwhile the user edits another part of app.txt (uncommitted) and the same line of clash.txt.
    const yours = text(LINES.map((line) => (line === 'line 11' ? 'line 11 (yours)' : line)));
    await writeFile(join(p.dir, 'app.txt'), yours);
    await writeFile(join(p.dir, 'clash.txt'), 'your version\n');
    const gitBefore = await gitDirFingerprint(p.dir);

    const refused = await cli(p, 'sandbox', 'apply', '--thread', T);
    expect(refused.code).toBe(7);
    expect(refused.stdout).toContain('Conflicts, nothing written (1):');
    expect(refused.stdout).toContain('clash.txt: 1 conflicting region(s)');
    expect(await readFile(join(p.dir, 'app.txt'), 'utf8')).toBe(yours);
    expect(await readFile(join(p.dir, 'other.txt'), 'utf8')).toBe('untouched\n');
    expect(await readFile(join(p.dir, 'clash.txt'), 'utf8')).toBe('your version\n');

    // Without the conflicting path, the rest goes in: both edits of app.txt kept.
    const partial = await cli(
      p,
      'sandbox',
      'apply',
      '--thread',
      T,
      'app.txt',
      'other.txt',
      '--json',
    );
    expect(partial.code, partial.stderr).toBe(0);
    expect(JSON.parse(partial.stdout)).toMatchObject({
      applied: true,
      changes: [
        { path: 'app.txt', action: 'merge' },
        { path: 'other.txt', action: 'write' },
      ],
      conflicts: [],
    });
    const merged = await readFile(join(p.dir, 'app.txt'), 'utf8');
    expect(merged).toBe(
      text(
        LINES.map((line) =>
          line === 'line 2' ? 'line 2 (sandbox)' : line === 'line 11' ? 'line 11 (yours)' : line,
        ),
      ),
    );
    expect(await readFile(join(p.dir, 'clash.txt'), 'utf8')).toBe('your version\n');

    // With markers, the conflict is written for the user to resolve.
    const markers = await cli(p, 'sandbox', 'apply', '--thread', T, '--conflicts', 'markers');
    expect(markers.code).toBe(7);
    expect(await readFile(join(p.dir, 'clash.txt'), 'utf8')).toBe(
      '<<<<<<< yours\nyour version\n=======\nsandbox version\n>>>>>>> sandbox\n',
    );
    // The conflict is unmerged in the index (git status, git mergetool); nothing else in .git moved.
    expect(userGit(p.dir, 'status', '--porcelain', 'clash.txt')).toBe('UU clash.txt\n');
    const { index: _index, ...restAfter } = await gitDirFingerprint(p.dir);
    const { index: _before, ...restBefore } = gitBefore;
    expect(restAfter).toEqual(restBefore);

    // Undo goes newest first: the markers, then the merge; the user's edits come back exactly.
    expect((await cli(p, 'sandbox', 'apply', '--thread', T, '--undo')).code).toBe(0);
    expect(await readFile(join(p.dir, 'clash.txt'), 'utf8')).toBe('your version\n');
    expect(userGit(p.dir, 'ls-files', '-u')).toBe('');
    expect((await cli(p, 'sandbox', 'apply', '--thread', T, '--undo')).code).toBe(0);
    expect(await readFile(join(p.dir, 'app.txt'), 'utf8')).toBe(yours);
    expect(await readFile(join(p.dir, 'other.txt'), 'utf8')).toBe('untouched\n');
  });

  it('refuses an undo over files changed after the apply, unless --force', async () => {
    const p = (project = await makeProject('agents-apply-undo-', { 'a.txt': 'base\n' }));
    await editThread(p, T, { 'a.txt': 'sandbox\n' });
    expect((await cli(p, 'sandbox', 'apply', '--thread', T)).code).toBe(0);
    await writeFile(join(p.dir, 'a.txt'), 'edited after apply\n');
    const refused = await cli(p, 'sandbox', 'apply', '--thread', T, '--undo');
    expect(refused.code).toBe(7);
    expect(refused.stderr).toContain('a.txt changed after it was applied');
    expect(await readFile(join(p.dir, 'a.txt'), 'utf8')).toBe('edited after apply\n');
    expect((await cli(p, 'sandbox', 'apply', '--thread', T, '--undo', '--force')).code).toBe(0);
    expect(await readFile(join(p.dir, 'a.txt'), 'utf8')).toBe('base\n');
  });

  it('takes only what the run did up to a snapshot (--to), then the rest (--from)', async () => {
    const p = (project = await makeProject('agents-apply-to-', { 'a.txt': 'base\n' }));
    const first = await editThread(p, T, { 'a.txt': 'step 1\n', 'tool.sh': '#!/bin/sh\n' });
    await editThread(p, T, { 'a.txt': 'step 2\n', 'later.txt': 'later\n' });
    const upTo = await cli(p, 'sandbox', 'apply', '--thread', T, '--to', first);
    expect(upTo.code, upTo.stderr).toBe(0);
    expect(await readFile(join(p.dir, 'a.txt'), 'utf8')).toBe('step 1\n');
    expect(await exists(join(p.dir, 'later.txt'))).toBe(false);
    // The rest, later: from the first snapshot on.
    const rest = await cli(p, 'sandbox', 'apply', '--thread', T, '--from', first);
    expect(rest.code, rest.stderr).toBe(0);
    expect(await readFile(join(p.dir, 'a.txt'), 'utf8')).toBe('step 2\n');
    expect(await readFile(join(p.dir, 'later.txt'), 'utf8')).toBe('later\n');
  });
});
