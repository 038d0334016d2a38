import { readFile, writeFile } from 'node:fs/promises';
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
  type Project,
} from './helpers.js';

const T = 't1';
const BINARY = Buffer.from([0, 1, 2, 3, 255, 254, 0, 10, 13, 0]);

describe('agents sandbox commit --branch', () => {
  let project: Project | undefined;
  afterEach(async () => {
    await removeProject(project);
  });

  it('creates one branch with the changes and leaves HEAD, the index and the working tree alone', async () => {
    const p = (project = await makeProject('agents-commit-', {
      'a.txt': 'base\n',
      'old.md': 'renamed later\n',
    }));
    await editThread(p, T, {
      'a.txt': 'sandbox\n',
      'old.md': { renameTo: 'docs/new.md' },
      'img.bin': BINARY,
    });
    // The user has an uncommitted edit and a staged file; none of it may move.
    await writeFile(join(p.dir, 'a.txt'), 'user edit\n');
    await writeFile(join(p.dir, 'staged.txt'), 'staged\n');
    userGit(p.dir, 'add', 'staged.txt');
    const head = userGit(p.dir, 'rev-parse', 'HEAD').trim();
    const status = userGit(p.dir, 'status', '--porcelain');
    const branches = userGit(p.dir, 'branch', '--format=%(refname:short)');
    const gitBefore = await gitDirFingerprint(p.dir);

    const made = await cli(
      p,
      'sandbox',
      'commit',
      '--thread',
      T,
      '--branch',
      'agents/fix',
      '-m',
      'Fix it',
      '--json',
    );
    expect(made.code, made.stderr).toBe(0);
    const result = JSON.parse(made.stdout) as { commit: string; parent: string; tree: string };
    expect(result.parent).toBe(head);

    expect(userGit(p.dir, 'rev-parse', 'HEAD').trim()).toBe(head);
    expect(userGit(p.dir, 'status', '--porcelain')).toBe(status);
    expect(await readFile(join(p.dir, 'a.txt'), 'utf8')).toBe('user edit\n');
    expect(userGit(p.dir, 'branch', '--format=%(refname:short)')).toBe(
      [...branches.trim().split('\n'), 'agents/fix'].sort().join('\n') + '\n',
    );
    // Only the new branch (and its reflog) appeared in .git, objects aside.
    const gitAfter = await gitDirFingerprint(p.dir);
    const added = Object.keys(gitAfter).filter((path) => !(path in gitBefore));
    expect(added.sort()).toEqual(['logs/refs/heads/agents/fix', 'refs/heads/agents/fix']);
    for (const [path, hash] of Object.entries(gitBefore)) expect(gitAfter[path], path).toBe(hash);

    // The branch: one commit on HEAD with exactly the sandbox's tree, renames and binaries kept.
    expect(userGit(p.dir, 'rev-list', '--count', `${head}..agents/fix`).trim()).toBe('1');
    expect(userGit(p.dir, 'rev-parse', 'agents/fix^{tree}').trim()).toBe(
      await sandboxHeadTree(p, T),
    );
    expect(userGit(p.dir, 'log', '-1', '--format=%s%n%an', 'agents/fix')).toBe('Fix it\nT\n');
    expect(userGit(p.dir, 'diff', '--name-status', '-M', head, 'agents/fix')).toBe(
      'M\ta.txt\nR100\told.md\tdocs/new.md\nA\timg.bin\n',
    );
    expect(userGit(p.dir, 'fsck', '--no-dangling')).toBe('');

    // Never moves an existing branch; a partial take by path.
    const again = await cli(p, 'sandbox', 'commit', '--thread', T, '--branch', 'agents/fix');
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('already exists');
    const partial = await cli(p, 'sandbox', 'commit', '--thread', T, '--branch', 'only-a', 'a.txt');
    expect(partial.code, partial.stderr).toBe(0);
    expect(userGit(p.dir, 'diff', '--name-status', head, 'only-a')).toBe('M\ta.txt\n');
  });
});
