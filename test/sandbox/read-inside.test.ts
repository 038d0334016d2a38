import { execFileSync } from 'node:child_process';
import {
  mkdirSync,
  mkdtempSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { NeedsScan, readInside } from '../../src/sandbox/git/incremental-tree.js';

/**
 * The watched snapshot reads a changed file on the host. A confined tool may swap the file, or a
 * folder above it, for a link between the examining lstat and the read: the host must then read
 * nothing from outside the sandbox (the snapshot falls back to git's scan).
 */
describe('readInside: the host reads a sandbox file only if it is still that file, inside', () => {
  const scratch = realpathSync(mkdtempSync(join(tmpdir(), 'agents-read-inside-')));
  const root = join(scratch, 'sandbox');
  const outside = join(scratch, 'home');
  mkdirSync(join(root, 'd'), { recursive: true });
  mkdirSync(outside);
  writeFileSync(join(outside, 'id_key'), 'SECRET');
  writeFileSync(join(root, 'd', 'id_key'), 'mine');
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it('reads the file it examined', async () => {
    const path = join(root, 'd', 'id_key');
    expect((await readInside(path, statSync(path).ino)).toString()).toBe('mine');
  });

  it('refuses a folder swapped for a link to outside, a file swapped for a link, and a FIFO', async () => {
    const examined = statSync(join(root, 'd', 'id_key')).ino;
    rmSync(join(root, 'd'), { recursive: true });
    symlinkSync(outside, join(root, 'd'));
    await expect(readInside(join(root, 'd', 'id_key'), examined)).rejects.toBeInstanceOf(NeedsScan);
    // Even with the outside file's own inode (an lstat through the swapped folder sees it).
    const outsideIno = statSync(join(outside, 'id_key')).ino;
    await expect(readInside(join(root, 'd', 'id_key'), outsideIno)).rejects.toBeInstanceOf(
      NeedsScan,
    );
    symlinkSync(join(outside, 'id_key'), join(root, 'link'));
    await expect(readInside(join(root, 'link'), outsideIno)).rejects.toBeInstanceOf(NeedsScan);
    execFileSync('mkfifo', [join(root, 'pipe')]);
    await expect(
      readInside(join(root, 'pipe'), statSync(join(root, 'pipe')).ino),
    ).rejects.toBeInstanceOf(NeedsScan);
  });
});
