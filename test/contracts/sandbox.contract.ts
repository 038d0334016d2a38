import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, realpath, rm, symlink, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/types.js';
import { treeDigest } from '../helpers/tree-hash.js';

/** The files every implementation starts from: nested folders, an executable, a symlink. */
export const CONTRACT_FILES: Readonly<Record<string, string>> = {
  'README.md': '# contract\n',
  'src/main.py': 'print("hi")\n',
  'src/lib/util.py': 'x = 1\n',
  'docs/guide.md': 'read me\n',
};

/** What a factory of the suite gets: a fresh scratch folder and the user's source in it. */
export interface SandboxContractFixture {
  /** Scratch folder for this test (removed after it). */
  scratch: string;
  /** The user's folder (a git repo, or a plain folder, as the factory made it). */
  source: string;
}

/** What a factory of the suite returns. */
export interface SandboxUnderTest {
  sandbox: Sandbox;
  /** Every folder the implementation made for this sandbox; `remove` must leave none of them. */
  folders: string[];
  /** Removes the sandbox entirely (default `sandbox.close()`). */
  remove?: () => Promise<void>;
}

/** Writes `files` under `root` (path → content), making folders. */
async function put(root: string, files: Record<string, string>): Promise<void> {
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), content);
  }
}

/**
 * The behaviour rollback, diff and delivery rely on, for any sandbox implementation: made from
 * the user's files (and nothing else, leaving them unchanged), snapshots that record exactly
 * what changed, restores that give back the exact tree of a snapshot (bytes, modes, symlinks,
 * deletions) with a safety snapshot that undoes them, diffs between snapshots, and a removal
 * that leaves none of its folders behind.
 *
 * `makeSource` makes the user's folder in the scratch folder, holding {@link CONTRACT_FILES}
 * (plus a `link` symlink to README.md) committed when it is a repo, with nothing uncommitted;
 * `create` makes the sandbox under test from it.
 */
export function describeSandboxContract(
  name: string,
  makeSource: (scratch: string) => Promise<string>,
  create: (fixture: SandboxContractFixture) => Promise<SandboxUnderTest>,
): void {
  describe(`sandbox contract: ${name}`, () => {
    let scratch: string;
    let source: string;
    let under: SandboxUnderTest | undefined;

    beforeEach(async () => {
      scratch = await realpath(await mkdtemp(join(tmpdir(), 'sandbox-contract-')));
      source = await makeSource(scratch);
    });

    afterEach(async () => {
      await (under?.remove ?? (() => under?.sandbox.close()))()?.catch(() => undefined);
      under = undefined;
      await rm(scratch, { recursive: true, force: true });
    });

    async function make(): Promise<Sandbox> {
      under = await create({ scratch, source });
      return under.sandbox;
    }

    it('is made from the user’s files, outside them, and leaves them unchanged', async () => {
      const before = await treeDigest(source);
      const sandbox = await make();
      expect(sandbox.root.startsWith(`${source}/`)).toBe(false);
      expect(await treeDigest(sandbox.root)).toEqual(before);
      expect(sandbox.source).toBe(source);
      await writeFile(join(sandbox.root, 'README.md'), 'changed in the sandbox\n');
      await sandbox.snapshot('edit');
      expect(await treeDigest(source)).toEqual(before);
    });

    it('snapshots exactly what changed, and returns the previous head when nothing did', async () => {
      const sandbox = await make();
      const start = sandbox.head;
      const same = await sandbox.snapshot('nothing');
      expect(same.sha).toBe(start);
      expect(same.changed).toEqual([]);
      await put(sandbox.root, { 'new.txt': 'new\n', 'src/main.py': 'print("bye")\n' });
      await unlink(join(sandbox.root, 'docs/guide.md'));
      const snap = await sandbox.snapshot('edit');
      expect(snap.parent).toBe(start);
      expect(snap.sha).not.toBe(start);
      expect(sandbox.head).toBe(snap.sha);
      expect([...snap.changed].sort((a, b) => a.path.localeCompare(b.path))).toEqual([
        { status: 'D', path: 'docs/guide.md' },
        { status: 'A', path: 'new.txt' },
        { status: 'M', path: 'src/main.py' },
      ]);
      expect((await sandbox.diff(start, snap.sha)).map((change) => change.path).sort()).toEqual([
        'docs/guide.md',
        'new.txt',
        'src/main.py',
      ]);
      expect(await sandbox.diff(snap.sha, snap.sha)).toEqual([]);
    });

    it('restores the exact tree of a snapshot (bytes, modes, symlinks, deletions) and undoes it with the safety snapshot', async () => {
      const sandbox = await make();
      await put(sandbox.root, { 'a/b/c.txt': 'deep\n', 'src/main.py': 'v1\n' });
      await chmod(join(sandbox.root, 'src/main.py'), 0o755);
      await symlink('a/b/c.txt', join(sandbox.root, 'to-c'));
      const first = await sandbox.snapshot('first');
      const atFirst = await treeDigest(sandbox.root);

      await put(sandbox.root, { 'src/main.py': 'v2\n', 'later.txt': 'later\n' });
      await chmod(join(sandbox.root, 'src/main.py'), 0o644);
      await rm(join(sandbox.root, 'a'), { recursive: true });
      await unlink(join(sandbox.root, 'to-c'));
      // Not snapshotted before the restore: the safety snapshot must still hold it.
      await put(sandbox.root, { 'unsnapshotted.txt': 'only on disk\n' });
      await sandbox.snapshot('second');
      await put(sandbox.root, { 'unsnapshotted.txt': 'edited after the last snapshot\n' });
      const beforeRestore = await treeDigest(sandbox.root);

      const restored = await sandbox.restore(first.sha);
      expect(await treeDigest(sandbox.root)).toEqual(atFirst);
      expect(sandbox.head).toBe(first.sha);
      expect(restored.changed.map((change) => change.path)).toEqual(
        expect.arrayContaining(['later.txt', 'unsnapshotted.txt', 'src/main.py', 'a/b/c.txt']),
      );

      await sandbox.restore(restored.safety.sha);
      expect(await treeDigest(sandbox.root)).toEqual(beforeRestore);
    });

    it('restores the starting snapshot, removing only what the sandbox tracked', async () => {
      const sandbox = await make();
      const start = sandbox.head;
      const atStart = await treeDigest(sandbox.root);
      await put(sandbox.root, { 'x/y.txt': 'y\n', 'README.md': 'rewritten\n' });
      await sandbox.snapshot('edit');
      await sandbox.restore(start);
      expect(await treeDigest(sandbox.root)).toEqual(atStart);
      expect(existsSync(join(sandbox.root, 'x'))).toBe(false);
    });

    it('is removed entirely: none of its folders stay, the user’s files unchanged', async () => {
      const before = await treeDigest(source);
      const sandbox = await make();
      await put(sandbox.root, { 'big/file.txt': 'x'.repeat(10_000) });
      await sandbox.snapshot('edit');
      const { folders } = under!;
      expect(folders.length).toBeGreaterThan(0);
      for (const folder of folders) expect(existsSync(folder)).toBe(true);
      await (under!.remove ?? (() => sandbox.close()))();
      for (const folder of [...folders, sandbox.root]) expect(existsSync(folder)).toBe(false);
      expect(await treeDigest(source)).toEqual(before);
      // Removing twice is harmless.
      await (under!.remove ?? (() => sandbox.close()))();
    });
  });
}
