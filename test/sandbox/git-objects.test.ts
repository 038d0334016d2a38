import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inflateSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import {
  serializeTree,
  sortTree,
  storedMaxBytes,
  writeObject,
  zlibWrap,
  type TreeEntry,
} from '../../src/sandbox/git/git-objects.js';
import { ObjectBatch, PACK_MIN_OBJECTS } from '../../src/sandbox/git/object-batch.js';
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
    for (const size of [0, 1, 100, 5552, 5553, 16_384, 16_385, 65_535, 65_536, 200_000]) {
      const data = Buffer.alloc(size);
      for (let index = 0; index < size; index++) data[index] = (index * 2654435761) & 255;
      const wrapped = zlibWrap(data);
      expect(inflateSync(wrapped).equals(data), `size ${size}`).toBe(true);
      // Small objects are stored: the zlib stream is the bytes plus 11 of framing.
      if (size <= 16_384) expect(wrapped.length).toBe(size + 11);
      // Trees are stored up to one stored block (object ids do not compress).
      const tree = zlibWrap(data, storedMaxBytes('tree'));
      expect(inflateSync(tree).equals(data), `tree size ${size}`).toBe(true);
      expect(tree.length === size + 11, `tree size ${size}`).toBe(size <= 65_535);
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

  it('writes a batch as one pack git reads, indexes the same way and fsck accepts', () => {
    const repo = mkdtempSync(join(tmpdir(), 'agents-git-pack-'));
    scratch.push(repo);
    git(repo, ['init', '-q', '--bare']);
    const objects = join(repo, 'objects');
    const batch = new ObjectBatch(objects);
    // Sizes around the entry header's 4- and 7-bit steps, stored and deflated zlib, empty.
    const contents = [0, 1, 15, 16, 127, 128, 2047, 2048, 16_385, 70_000].map((size) => {
      const data = Buffer.alloc(size);
      for (let index = 0; index < size; index++) data[index] = (index * 7 + size) & 255;
      return data;
    });
    const blobs = contents.map((content) => batch.add('blob', content));
    // The same object twice is packed once.
    expect(batch.add('blob', contents[3]!)).toBe(blobs[3]);
    const entries: TreeEntry[] = blobs.map((sha, index) => ({
      mode: '100644',
      name: `f${index}`,
      sha,
    }));
    const tree = batch.add('tree', serializeTree(sortTree(entries)));
    const commit = batch.add(
      'commit',
      Buffer.from(`tree ${tree}\nauthor a <a@b> 1 +0000\ncommitter a <a@b> 1 +0000\n\nsnap\n`),
    );
    expect(batch.size).toBe(contents.length + 2);
    batch.flush();
    expect(batch.packsWritten).toBe(1);
    // Nothing loose: one pack and its index, named by the pack's checksum.
    const names = readdirSync(join(objects, 'pack')).sort();
    expect(names).toHaveLength(2);
    const [idxName, packName] = names as [string, string];
    expect(idxName).toMatch(/^pack-[0-9a-f]{40}\.idx$/);
    expect(packName).toBe(idxName.replace(/\.idx$/, '.pack'));
    // Each object reads back byte for byte with the id git gives it.
    contents.forEach((content, index) => {
      expect(
        execFileSync('git', ['cat-file', 'blob', blobs[index]!], {
          cwd: repo,
          env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', GIT_CONFIG_GLOBAL: '/dev/null' },
        }).equals(content),
        `size ${content.length}`,
      ).toBe(true);
      expect(blobs[index]).toBe(
        execFileSync('git', ['hash-object', '--stdin'], {
          input: content,
          encoding: 'utf8',
        }).trim(),
      );
    });
    expect(git(repo, ['cat-file', '-t', commit]).trim()).toBe('commit');
    // git's own index of our pack is byte-identical to ours (fan-out, order, CRCs, offsets).
    const ours = readFileSync(join(objects, 'pack', idxName));
    const theirs = join(repo, 'theirs.idx');
    git(repo, ['index-pack', '-o', theirs, join(objects, 'pack', packName)]);
    expect(readFileSync(theirs).equals(ours)).toBe(true);
    git(repo, ['verify-pack', join(objects, 'pack', idxName)]);
    git(repo, ['update-ref', 'refs/heads/main', commit]);
    git(repo, ['fsck', '--strict', '--no-dangling', '--no-progress']);
    // A small batch stays loose (a pack is two files).
    const small = new ObjectBatch(objects);
    const loose = small.add('blob', Buffer.from('loose\n'));
    for (let index = 1; index < PACK_MIN_OBJECTS - 1; index++)
      small.add('blob', Buffer.from(`${index}`));
    small.flush();
    expect(small.packsWritten).toBe(0);
    expect(readdirSync(join(objects, loose.slice(0, 2)))).toContain(loose.slice(2));
  });
});
