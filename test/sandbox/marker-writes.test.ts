import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MarkerWrites } from '../../src/sandbox/git/marker-writes.js';
import {
  MARKER_FILE,
  MARKER_KIND,
  MARKER_VERSION,
  type SandboxMarker,
} from '../../src/sandbox/sandbox-marker.js';

/**
 * The watched snapshot's marker write, off its path (issue 37): queued writes land in order on
 * the real file system, the last one wins, and a failed write is reported, not lost.
 */

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function marker(head: string): SandboxMarker {
  return {
    kind: MARKER_KIND,
    version: MARKER_VERSION,
    id: 'marker-test',
    mode: 'repository',
    source: '/nowhere',
    root: '/nowhere/tree',
    createdAt: 1,
    head,
  };
}

describe('MarkerWrites', () => {
  it('writes queued markers in order: the file ends with the last head', async () => {
    const runDir = mkdtempSync(join(tmpdir(), 'marker-writes-'));
    dirs.push(runDir);
    const writes = new MarkerWrites(runDir);
    const state = marker('a'.repeat(40));
    writes.later(state);
    // The marker is copied when queued: changing it afterwards does not change that write.
    state.head = 'b'.repeat(40);
    writes.later(marker('c'.repeat(40)));
    await writes.settled();
    const written = JSON.parse(readFileSync(join(runDir, MARKER_FILE), 'utf8')) as SandboxMarker;
    expect(written.head).toBe('c'.repeat(40));
  });

  it('reports a write that failed on the next settle, then starts afresh', async () => {
    const runDir = join(tmpdir(), `marker-writes-missing-${process.pid}-${Date.now()}`);
    const writes = new MarkerWrites(runDir);
    // Queueing never throws for the write itself: it runs later, in the thread pool.
    expect(() => writes.later(marker('a'.repeat(40)))).not.toThrow();
    await expect(writes.settled()).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(writes.settled()).resolves.toBeUndefined();
  });
});
