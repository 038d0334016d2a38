import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AgentsError, AgentsErrorCode } from '../../src/errors.js';
import { createPathMap } from '../../src/sandbox/path-map.js';

// Layout: root/dir/file.txt (the sandbox), outside/secret.txt (must never be reachable).
let scratch: string;
let root: string;
let outside: string;

beforeEach(() => {
  scratch = realpathSync(mkdtempSync(join(tmpdir(), 'path-map-cache-')));
  root = join(scratch, 'root');
  outside = join(scratch, 'outside');
  mkdirSync(join(root, 'dir', 'sub'), { recursive: true });
  mkdirSync(outside);
  writeFileSync(join(root, 'dir', 'file.txt'), 'inside\n');
  writeFileSync(join(outside, 'file.txt'), 'secret\n');
});

afterEach(() => {
  rmSync(scratch, { recursive: true, force: true });
});

/** What a write-class tool could do: swap a checked directory for a link that leads outside. */
function replaceDirWithLinkOutside(): void {
  rmSync(join(root, 'dir'), { recursive: true, force: true });
  symlinkSync(outside, join(root, 'dir'));
}

function refusalOf(run: () => unknown): AgentsError | undefined {
  try {
    run();
  } catch (error) {
    if (error instanceof AgentsError) return error;
    throw error;
  }
  return undefined;
}

describe('createPathMap: symlink-check cache', () => {
  it('refuses a path whose directory a write replaced with a link outside, after it was checked', () => {
    const map = createPathMap(root);
    map.trackWrites();
    expect(map.toSandbox('dir/file.txt')).toBe(join(root, 'dir', 'file.txt'));
    expect(map.toSandbox('dir/file.txt')).toBe(join(root, 'dir', 'file.txt'));

    const end = map.beginWrite();
    replaceDirWithLinkOutside();
    end();

    const error = refusalOf(() => map.toSandbox('dir/file.txt'));
    expect(error?.code).toBe(AgentsErrorCode.PathOutsideSandbox);
    expect(error?.message).toMatch(/symbolic link that leads outside/);
    // A sibling path under the same (now linked) directory is refused too: the per-directory
    // verdicts went with the write.
    expect(refusalOf(() => map.toSandbox('dir/sub/new.txt'))?.code).toBe(
      AgentsErrorCode.PathOutsideSandbox,
    );
  });

  it('does not reuse verdicts while a write is still running', () => {
    const map = createPathMap(root);
    map.trackWrites();
    map.toSandbox('dir/file.txt');
    const end = map.beginWrite();
    try {
      replaceDirWithLinkOutside();
      // The write has not finished, yet a concurrent call already sees the link.
      expect(refusalOf(() => map.toSandbox('dir/file.txt'))?.code).toBe(
        AgentsErrorCode.PathOutsideSandbox,
      );
    } finally {
      end();
    }
    expect(refusalOf(() => map.toSandbox('dir/file.txt'))?.code).toBe(
      AgentsErrorCode.PathOutsideSandbox,
    );
  });

  it('does not trust a check made during a write later in that write', () => {
    const map = createPathMap(root);
    map.trackWrites();
    const end = map.beginWrite();
    try {
      expect(map.toSandbox('dir/file.txt')).toBe(join(root, 'dir', 'file.txt'));
      replaceDirWithLinkOutside();
      expect(refusalOf(() => map.toSandbox('dir/file.txt'))?.code).toBe(
        AgentsErrorCode.PathOutsideSandbox,
      );
    } finally {
      end();
    }
  });

  it('keeps refusing after a write ends when two writes overlapped', () => {
    const map = createPathMap(root);
    map.trackWrites();
    map.toSandbox('dir/file.txt');
    const endFirst = map.beginWrite();
    const endSecond = map.beginWrite();
    endFirst();
    endFirst(); // idempotent: must not count as the second write ending
    replaceDirWithLinkOutside();
    expect(refusalOf(() => map.toSandbox('dir/file.txt'))?.code).toBe(
      AgentsErrorCode.PathOutsideSandbox,
    );
    endSecond();
    expect(refusalOf(() => map.toSandbox('dir/file.txt'))?.code).toBe(
      AgentsErrorCode.PathOutsideSandbox,
    );
  });

  it('caches nothing unless trackWrites was called', () => {
    const map = createPathMap(root);
    map.toSandbox('dir/file.txt');
    // No announcement at all: an untracked map still checks every call.
    replaceDirWithLinkOutside();
    expect(refusalOf(() => map.toSandbox('dir/file.txt'))?.code).toBe(
      AgentsErrorCode.PathOutsideSandbox,
    );
  });

  it('reuses verdicts between writes, and invalidateLinkCache drops them', () => {
    const map = createPathMap(root);
    map.trackWrites();
    map.toSandbox('dir/file.txt');
    // An unannounced change breaks the trackWrites contract; it shows the cache is really used
    // and that invalidateLinkCache (e.g. after a restore) brings the check back.
    replaceDirWithLinkOutside();
    expect(map.toSandbox('dir/file.txt')).toBe(join(root, 'dir', 'file.txt'));
    map.invalidateLinkCache();
    expect(refusalOf(() => map.toSandbox('dir/file.txt'))?.code).toBe(
      AgentsErrorCode.PathOutsideSandbox,
    );
  });

  it('still refuses what the walk refuses when caching is on (dangling links, .git, ..)', () => {
    const map = createPathMap(root);
    map.trackWrites();
    const end = map.beginWrite();
    symlinkSync(join(outside, 'missing'), join(root, 'dangling'));
    end();
    for (const path of ['dangling', 'dangling/x', '.git/config', '../outside/file.txt']) {
      expect(refusalOf(() => map.toSandbox(path))?.code).toBe(AgentsErrorCode.PathOutsideSandbox);
      // Refusals are never cached as accepted.
      expect(refusalOf(() => map.toSandbox(path))?.code).toBe(AgentsErrorCode.PathOutsideSandbox);
    }
  });
});
