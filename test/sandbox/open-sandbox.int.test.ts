import { spawnSync } from 'node:child_process';
import { access, mkdir, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AgentsError } from '../../src/errors.js';
import { openSandbox, removeSandbox } from '../../src/sandbox/git/open-sandbox.js';
import { makeRepo, repoFingerprint } from './helpers.js';

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

/** A pid that is certainly not running: a child that has already exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', '0']);
  return child.pid ?? 2 ** 22 + 1;
}

describe('openSandbox (sandboxes that outlive a process)', () => {
  let base: string;
  let repo: string;
  let dir: string;
  beforeEach(async () => {
    base = await realpath(await mkdtemp(join(tmpdir(), 'agents-open-sandbox-')));
    repo = join(base, 'repo');
    dir = join(base, 'kept', 'thread-1');
    await mkdir(repo);
    makeRepo(repo, { 'README.md': 'hello\n', 'src/main.txt': 'v1\n' });
  });
  afterEach(async () => {
    await rm(base, { recursive: true, force: true });
  });

  it('reopens the same sandbox and continues from its latest snapshot', async () => {
    const userRepo = repoFingerprint(repo);
    const first = await openSandbox({ dir, source: repo, id: 'keep-1' });
    expect(first.reopened).toBe(false);
    await writeFile(join(first.root, 'a.txt'), 'A1');
    const one = await first.snapshot('one');
    expect(one.changed).toEqual([{ status: 'A', path: 'a.txt' }]);
    await first.close({ remove: false });
    expect(await exists(join(first.root, 'a.txt'))).toBe(true);

    const second = await openSandbox({ dir, source: repo });
    try {
      expect(second.reopened).toBe(true);
      expect(second.id).toBe('keep-1');
      expect(second.root).toBe(first.root);
      expect(second.base).toBe(first.base);
      expect(second.head).toBe(one.sha);
      await writeFile(join(second.root, 'a.txt'), 'A2');
      const two = await second.snapshot('two');
      expect(two.parent).toBe(one.sha);
      expect(two.changed).toEqual([{ status: 'M', path: 'a.txt' }]);
      const restored = await second.restore(first.base);
      expect(restored.changed).toEqual([{ status: 'D', path: 'a.txt' }]);
    } finally {
      await second.close({ remove: false });
    }
    // The head moved by restore is what the next open sees.
    const third = await openSandbox({ dir, create: false });
    expect(third.head).toBe(first.base);
    expect(await exists(join(third.root, 'a.txt'))).toBe(false);
    await third.close();
    // close() without `remove: false` deletes it all; the user's repo never changed.
    expect(await exists(dir)).toBe(false);
    expect(repoFingerprint(repo)).toEqual(userRepo);
  });

  it('takes nested repos from the marker for its head on reopen, and scans when it names another', async () => {
    const made = await openSandbox({ dir, source: repo, id: 'keep-nested' });
    await mkdir(join(made.root, 'vendor', 'lib', '.git'), { recursive: true });
    await writeFile(join(made.root, 'vendor', 'lib', 'x.txt'), 'x');
    const snap = await made.snapshot('stray .git');
    await made.close({ remove: false });
    const markerFile = join(dir, 'run', 'sandbox.json');
    const marker = JSON.parse(await readFile(markerFile, 'utf8')) as {
      head: string;
      nested: { head: string; repos: Array<{ path: string; kind: string }> };
    };
    // Recorded with the head it describes.
    expect(marker.head).toBe(snap.sha);
    expect(marker.nested).toEqual({
      head: snap.sha,
      repos: [{ path: 'vendor/lib', kind: 'git-dir' }],
    });
    // A record for this head is taken as it is (no listing of the head tree): one planted here
    // shows up, which a scan would not find.
    const planted = { head: snap.sha, repos: [{ path: 'planted', kind: 'git-file' }] };
    await writeFile(markerFile, JSON.stringify({ ...marker, nested: planted }));
    const reopened = await openSandbox({ dir, create: false });
    expect(reopened.nestedRepos()).toEqual([{ path: 'planted', kind: 'git-file' }]);
    await reopened.close({ remove: false });
    // A record for another head (or a malformed one) is ignored: the reopen scans.
    for (const nested of [
      { ...planted, head: made.base },
      { head: snap.sha, repos: 'x' },
    ]) {
      await writeFile(markerFile, JSON.stringify({ ...marker, nested }));
      const scanned = await openSandbox({ dir, create: false });
      expect(scanned.nestedRepos()).toEqual([{ path: 'vendor/lib', kind: 'git-dir' }]);
      await scanned.close({ remove: false });
    }
  });

  it('holds a run lock: a second locking open is refused, a dead holder is taken over', async () => {
    const held = await openSandbox({ dir, source: repo, lock: true });
    try {
      const refused = await openSandbox({ dir, source: repo, lock: true }).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(AgentsError.isInstance(refused) && refused.code).toBe('RUN_ACTIVE');
      // A reader that takes no lock still gets in.
      const reader = await openSandbox({ dir, lock: false });
      expect(reader.head).toBe(held.head);
      await reader.close({ remove: false });
      await expect(removeSandbox(dir)).rejects.toMatchObject({ code: 'RUN_ACTIVE' });
    } finally {
      await held.close({ remove: false });
    }
    expect(await exists(join(dir, 'run', 'lock'))).toBe(false);

    await writeFile(join(dir, 'run', 'lock'), JSON.stringify({ pid: deadPid(), since: 0 }));
    const takeover = await openSandbox({ dir, lock: true });
    expect(JSON.parse(await readFile(join(dir, 'run', 'lock'), 'utf8'))).toMatchObject({
      pid: process.pid,
    });
    await takeover.close({ remove: false });
    expect(await removeSandbox(dir)).toBe(true);
    expect(await removeSandbox(dir)).toBe(false);
    expect(await exists(dir)).toBe(false);
  });

  it('refuses to reopen from another source, a missing sandbox, or a vanished tree', async () => {
    await expect(openSandbox({ dir, create: false })).rejects.toMatchObject({
      code: 'SANDBOX_FAILED',
    });
    const made = await openSandbox({ dir, source: repo });
    await made.close({ remove: false });
    const other = join(base, 'other');
    await mkdir(other);
    makeRepo(other, { 'x.txt': 'x' });
    await expect(openSandbox({ dir, source: other })).rejects.toThrow(/was made from/);
    await expect(openSandbox({ dir, source: repo, id: 'someone-else' })).rejects.toThrow(
      /not "someone-else"/,
    );
    await rm(made.root, { recursive: true, force: true });
    await expect(openSandbox({ dir, source: repo })).rejects.toThrow(/is gone/);
    // Removal still cleans up what is left.
    expect(await removeSandbox(dir)).toBe(true);
    expect(await exists(dir)).toBe(false);
  });
});
