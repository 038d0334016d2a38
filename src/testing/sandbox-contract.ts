import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, realpath, rm, symlink, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Sandbox } from '../sandbox/types.js';
import { perCaseContract, type Contract } from './contract.js';
import { treeDigest } from './tree-digest.js';

/** The files every implementation starts from: nested folders, an executable, a symlink. */
export const CONTRACT_FILES: Readonly<Record<string, string>> = {
  'README.md': '# contract\n',
  'src/main.py': 'print("hi")\n',
  'src/lib/util.py': 'x = 1\n',
  'docs/guide.md': 'read me\n',
};

/** What a factory of the suite gets: a fresh scratch folder and the user's source in it. */
export interface SandboxContractFixture {
  /** Scratch folder for this case (removed after it). */
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

/** What {@link sandboxContract} runs an implementation with. */
export interface SandboxContractOptions {
  /**
   * Makes the user's folder in the scratch folder, holding {@link CONTRACT_FILES} (plus a `link`
   * symlink to README.md), committed when it is a repo, with nothing uncommitted.
   */
  makeSource(scratch: string): Promise<string>;
  /** Makes the sandbox under test from the user's folder. */
  create(fixture: SandboxContractFixture): Promise<SandboxUnderTest>;
}

/** Writes `files` under `root` (path → content), making folders. */
async function put(root: string, files: Record<string, string>): Promise<void> {
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), content);
  }
}

interface Case extends SandboxContractFixture {
  make(): Promise<SandboxUnderTest>;
  under?: SandboxUnderTest;
}

const removeOf = (under: SandboxUnderTest) => under.remove ?? (() => under.sandbox.close());

/**
 * The sandbox contract: the behaviour rollback, diff and delivery rely on, for any sandbox
 * implementation. Made from the user's files (and nothing else, leaving them unchanged),
 * snapshots that record exactly what changed, restores that give back the exact tree of a
 * snapshot (bytes, modes, symlinks, deletions) with a safety snapshot that undoes them, diffs
 * between snapshots, and a removal that leaves none of its folders behind. Each case gets a fresh
 * scratch folder and source. Framework-neutral: register `cases` with your runner (see
 * `test/sandbox/sandbox-contract.int.test.ts`).
 */
export function sandboxContract(options: SandboxContractOptions): Contract {
  const open = async (): Promise<Case> => {
    const scratch = await realpath(await mkdtemp(join(tmpdir(), 'sandbox-contract-')));
    const fixture: Case = {
      scratch,
      source: await options.makeSource(scratch),
      make: async () => (fixture.under = await options.create(fixture)),
    };
    return fixture;
  };
  const close = async ({ under, scratch }: Case): Promise<void> => {
    if (under !== undefined) await removeOf(under)().catch(() => undefined);
    await rm(scratch, { recursive: true, force: true });
  };
  return perCaseContract(open, close, {
    'is made from the user’s files, outside them, and leaves them unchanged': async (c) => {
      const before = await treeDigest(c.source);
      const { sandbox } = await c.make();
      assert.equal(sandbox.root.startsWith(`${c.source}/`), false, 'sandbox inside the source');
      assert.deepEqual(await treeDigest(sandbox.root), before);
      assert.equal(sandbox.source, c.source);
      await writeFile(join(sandbox.root, 'README.md'), 'changed in the sandbox\n');
      await sandbox.snapshot('edit');
      assert.deepEqual(await treeDigest(c.source), before, 'the user’s files changed');
    },

    'snapshots exactly what changed, and returns the previous head when nothing did': async (c) => {
      const { sandbox } = await c.make();
      const start = sandbox.head;
      const same = await sandbox.snapshot('nothing');
      assert.equal(same.sha, start);
      assert.deepEqual(same.changed, []);
      await put(sandbox.root, { 'new.txt': 'new\n', 'src/main.py': 'print("bye")\n' });
      await unlink(join(sandbox.root, 'docs/guide.md'));
      const snap = await sandbox.snapshot('edit');
      assert.equal(snap.parent, start);
      assert.notEqual(snap.sha, start);
      assert.equal(sandbox.head, snap.sha);
      assert.deepEqual(
        [...snap.changed].sort((a, b) => a.path.localeCompare(b.path)),
        [
          { status: 'D', path: 'docs/guide.md' },
          { status: 'A', path: 'new.txt' },
          { status: 'M', path: 'src/main.py' },
        ],
      );
      assert.deepEqual((await sandbox.diff(start, snap.sha)).map((change) => change.path).sort(), [
        'docs/guide.md',
        'new.txt',
        'src/main.py',
      ]);
      assert.deepEqual(await sandbox.diff(snap.sha, snap.sha), []);
    },

    'restores the exact tree of a snapshot (bytes, modes, symlinks, deletions) and undoes it with the safety snapshot':
      async (c) => {
        const { sandbox } = await c.make();
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
        assert.deepEqual(await treeDigest(sandbox.root), atFirst);
        assert.equal(sandbox.head, first.sha);
        const paths = restored.changed.map((change) => change.path);
        for (const path of ['later.txt', 'unsnapshotted.txt', 'src/main.py', 'a/b/c.txt'])
          assert.ok(paths.includes(path), `restore reports ${path} changed (got ${paths})`);

        await sandbox.restore(restored.safety.sha);
        assert.deepEqual(await treeDigest(sandbox.root), beforeRestore);
      },

    'restores the starting snapshot, removing only what the sandbox tracked': async (c) => {
      const { sandbox } = await c.make();
      const start = sandbox.head;
      const atStart = await treeDigest(sandbox.root);
      await put(sandbox.root, { 'x/y.txt': 'y\n', 'README.md': 'rewritten\n' });
      await sandbox.snapshot('edit');
      await sandbox.restore(start);
      assert.deepEqual(await treeDigest(sandbox.root), atStart);
      assert.equal(existsSync(join(sandbox.root, 'x')), false, 'x/ left after the restore');
    },

    'is removed entirely: none of its folders stay, the user’s files unchanged': async (c) => {
      const before = await treeDigest(c.source);
      const under = await c.make();
      const { sandbox, folders } = under;
      await put(sandbox.root, { 'big/file.txt': 'x'.repeat(10_000) });
      await sandbox.snapshot('edit');
      assert.ok(folders.length > 0, 'the factory names the folders it made');
      for (const folder of folders) assert.equal(existsSync(folder), true, `${folder} exists`);
      await removeOf(under)();
      for (const folder of [...folders, sandbox.root])
        assert.equal(existsSync(folder), false, `${folder} left after removal`);
      assert.deepEqual(await treeDigest(c.source), before, 'the user’s files changed');
      // Removing twice is harmless.
      await removeOf(under)();
    },
  });
}
