/**
 * The head marker on a snapshot's hot path (issue 37): rewritten in place, one write of one page,
 * padded so it never shrinks; a marker over a page, or none yet, goes through a rename. Every
 * state it leaves reads back as the marker last written.
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  MARKER_FILE,
  MARKER_KIND,
  MARKER_VERSION,
  readMarker,
  writeMarkerSync,
  type SandboxMarker,
} from '../../src/sandbox/sandbox-marker.js';

let runDir: string;

beforeEach(() => {
  runDir = mkdtempSync(join(tmpdir(), 'sandbox-marker-'));
});

afterEach(() => {
  rmSync(runDir, { recursive: true, force: true });
});

const sha = (digit: string) => digit.repeat(40);

function marker(head: string, repos: number): SandboxMarker {
  return {
    kind: MARKER_KIND,
    version: MARKER_VERSION,
    id: 'm1',
    mode: 'repository',
    source: '/src/repo',
    root: '/sandboxes/m1/m1',
    createdAt: 1,
    base: sha('a'),
    head,
    nested: {
      head,
      repos: Array.from({ length: repos }, (_, at) => ({
        path: `vendor/lib${at}`,
        kind: 'repository' as const,
      })),
    },
  };
}

describe('writeMarkerSync', () => {
  it('makes the marker when there is none, then rewrites the same file in place', async () => {
    const file = join(runDir, MARKER_FILE);
    writeMarkerSync(runDir, marker(sha('1'), 2));
    const made = statSync(file);
    writeMarkerSync(runDir, marker(sha('2'), 2));
    // Same inode: no temp file, no rename over the old marker.
    expect(statSync(file).ino).toBe(made.ino);
    expect(await readMarker(runDir)).toEqual(marker(sha('2'), 2));
  });

  it('pads a shorter marker with spaces (still JSON, never a truncate) and reads it back', async () => {
    const file = join(runDir, MARKER_FILE);
    writeMarkerSync(runDir, marker(sha('1'), 5));
    const longer = statSync(file);
    writeMarkerSync(runDir, marker(sha('2'), 0));
    const after = statSync(file);
    expect(after.ino).toBe(longer.ino);
    // Precondition of the case: the new text is shorter than the file.
    expect(JSON.stringify(marker(sha('2'), 0), null, 2).length).toBeLessThan(longer.size);
    expect(after.size).toBe(longer.size);
    expect(readFileSync(file, 'utf8').trimEnd()).toBe(JSON.stringify(marker(sha('2'), 0), null, 2));
    expect(await readMarker(runDir)).toEqual(marker(sha('2'), 0));
  });

  it('renames a marker over one page into place, and rewrites in place once it fits again', async () => {
    const file = join(runDir, MARKER_FILE);
    writeMarkerSync(runDir, marker(sha('1'), 1));
    const small = statSync(file);
    writeMarkerSync(runDir, marker(sha('2'), 200));
    const large = statSync(file);
    expect(large.size).toBeGreaterThan(4096);
    expect(large.ino).not.toBe(small.ino);
    expect(await readMarker(runDir)).toEqual(marker(sha('2'), 200));
    // Shorter again: a page would not hold the padded file, so it is renamed at its own size...
    writeMarkerSync(runDir, marker(sha('3'), 1));
    const shrunk = statSync(file);
    expect(shrunk.ino).not.toBe(large.ino);
    expect(shrunk.size).toBeLessThan(4096);
    // ...and from then on rewritten in place.
    writeMarkerSync(runDir, marker(sha('4'), 1));
    expect(statSync(file).ino).toBe(shrunk.ino);
    expect(await readMarker(runDir)).toEqual(marker(sha('4'), 1));
  });
});
