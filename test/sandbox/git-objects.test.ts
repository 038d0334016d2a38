import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inflateSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import {
  serializeTree,
  sortTree,
  writeObject,
  zlibWrap,
  type TreeEntry,
} from '../../src/sandbox/git/git-objects.js';
import { writeLooseRef } from '../../src/sandbox/git/watched-snapshots.js';

const scratch: string[] = [];
afterEach(() => {
  for (const dir of scratch.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function git(cwd: string, args: string[], input?: string, identity = false): string {
  return execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: {
      PATH: process.env['PATH'] ?? '/usr/bin:/bin',
      GIT_CONFIG_GLOBAL: '/dev/null',
      ...(identity
        ? {
            GIT_AUTHOR_NAME: 'test',
            GIT_AUTHOR_EMAIL: 'test@localhost',
            GIT_COMMITTER_NAME: 'test',
            GIT_COMMITTER_EMAIL: 'test@localhost',
          }
        : {}),
    },
    ...(input === undefined ? {} : { input }),
  });
}

describe('git objects written without git', () => {
  it('wraps bytes in a zlib stream that inflates back, stored or deflated by size', () => {
    for (const size of [0, 1, 100, 5552, 5553, 16_384, 16_385, 200_000]) {
      const data = Buffer.alloc(size);
      for (let index = 0; index < size; index++) data[index] = (index * 2654435761) & 255;
      const wrapped = zlibWrap(data);
      expect(inflateSync(wrapped).equals(data), `size ${size}`).toBe(true);
      // Small objects are stored: the zlib stream is the bytes plus 11 of framing.
      if (size <= 16_384) expect(wrapped.length).toBe(size + 11);
    }
  });

  it('writes blobs and trees git reads and fsck accepts, with the ids git gives', async () => {
    const repo = mkdtempSync(join(tmpdir(), 'agents-git-objects-'));
    scratch.push(repo);
    git(repo, ['init', '-q', '--bare']);
    const objects = join(repo, 'objects');
    const blob = await writeObject(objects, 'blob', Buffer.from('hello\n'));
    expect(blob).toBe(git(repo, ['hash-object', '--stdin'], 'hello\n').trim());
    const big = Buffer.alloc(40_000, 'abc');
    const bigBlob = await writeObject(objects, 'blob', big);
    expect(git(repo, ['cat-file', '-s', bigBlob]).trim()).toBe('40000');
    // Names git orders apart: a folder sorts as if its name ended in "/".
    const entries: TreeEntry[] = [
      { mode: '40000', name: 'a', sha: '4b825dc642cb6eb9a060e54bf8d69288fbee4904' },
      { mode: '100644', name: 'a.txt', sha: blob },
      { mode: '100755', name: 'a-b', sha: bigBlob },
      { mode: '120000', name: 'é', sha: blob },
    ];
    const sorted = sortTree(entries);
    expect(sorted.map((entry) => entry.name)).toEqual(['a-b', 'a.txt', 'a', 'é']);
    const tree = await writeObject(objects, 'tree', serializeTree(sorted));
    const listing = git(repo, ['ls-tree', tree]);
    expect(git(repo, ['mktree'], listing).trim()).toBe(tree);
    // Writing the same object again is a no-op, and the store stays sound.
    expect(await writeObject(objects, 'tree', serializeTree(sorted))).toBe(tree);
    git(repo, ['fsck', '--strict', '--no-dangling', '--no-progress']);
  });

  it('writes snapshot refs git reads, and leaves a ref whose lock git holds to git', async () => {
    const repo = mkdtempSync(join(tmpdir(), 'agents-git-refs-'));
    scratch.push(repo);
    git(repo, ['init', '-q', '--bare']);
    const tree = git(repo, ['mktree'], '').trim();
    const commit = git(repo, ['commit-tree', tree, '-m', 'one'], undefined, true).trim();
    expect(writeLooseRef(repo, commit)).toBe(true);
    // Idempotent: the ref names its own sha.
    expect(writeLooseRef(repo, commit)).toBe(true);
    expect(git(repo, ['for-each-ref', '--format=%(refname) %(objectname)'])).toBe(
      `refs/snapshots/${commit} ${commit}\n`,
    );
    git(repo, ['fsck', '--strict', '--no-progress']);
    const other = git(repo, ['commit-tree', tree, '-m', 'two'], undefined, true).trim();
    writeFileSync(join(repo, 'refs', 'snapshots', `${other}.lock`), 'held\n');
    expect(writeLooseRef(repo, other)).toBe(false);
    expect(writeLooseRef(repo, 'not-a-sha')).toBe(false);
    expect(git(repo, ['for-each-ref', '--format=%(refname)'])).toBe(`refs/snapshots/${commit}\n`);
  });
});
