import { describe, expect, it } from 'vitest';
import { AgentsError } from '../../src/errors.js';
import {
  anchoredPattern,
  DEFAULT_MAX_FILE_BYTES,
  formatSize,
  validateMaxFileBytes,
} from '../../src/sandbox/size-cap.js';
import { parseRawTreeDiff } from '../../src/sandbox/raw-tree-diff.js';
import { lfsPatterns } from '../../src/sandbox/sandbox-excludes.js';

describe('lfsPatterns', () => {
  it('keeps the patterns whose attributes end with filter=lfs, directly or through a macro', () => {
    const attributes = [
      '# comment *.skip filter=lfs',
      '*.bin filter=lfs diff=lfs merge=lfs -text',
      'assets/**/*.png   filter=lfs',
      '*.txt text eol=lf',
      '*.undone filter=lfs -filter',
      '[attr]big filter=lfs diff=lfs',
      '*.psd big',
      '!*.neg filter=lfs',
      'dir/ filter=lfs',
      '"with space .iso" filter=lfs',
      '"trailing " filter=lfs',
      '#hash-free filter=other',
      '*.bin filter=lfs',
      '',
    ].join('\r\n');
    expect(lfsPatterns(attributes)).toEqual([
      '*.bin',
      'assets/**/*.png',
      '*.psd',
      'with space .iso',
      'trailing\\ ',
    ]);
  });

  it('skips unparsable quoted patterns and returns nothing for an empty file', () => {
    expect(lfsPatterns('"unterminated filter=lfs\n"bad\\q" filter=lfs\n')).toEqual([]);
    expect(lfsPatterns('')).toEqual([]);
  });
});

describe('anchoredPattern', () => {
  it('anchors the path and escapes glob characters, backslashes and trailing spaces', () => {
    expect(anchoredPattern('data/big.bin')).toBe('/data/big.bin');
    expect(anchoredPattern('a*[1] ?.dat')).toBe('/a\\*\\[1] \\?.dat');
    expect(anchoredPattern('back\\slash')).toBe('/back\\\\slash');
    expect(anchoredPattern('#!name  ')).toBe('/#!name\\ \\ ');
    expect(anchoredPattern('line\nbreak')).toBe('/line?break');
  });
});

describe('validateMaxFileBytes', () => {
  it('defaults to 50 MiB, takes 0 and Infinity as off, and rejects other non-integers', () => {
    expect(validateMaxFileBytes(undefined)).toBe(DEFAULT_MAX_FILE_BYTES);
    expect(DEFAULT_MAX_FILE_BYTES).toBe(50 * 1024 * 1024);
    expect(validateMaxFileBytes(0)).toBe(0);
    expect(validateMaxFileBytes(Number.POSITIVE_INFINITY)).toBe(0);
    expect(validateMaxFileBytes(1000)).toBe(1000);
    for (const bad of [-1, 0.5, Number.NaN, Number.NEGATIVE_INFINITY]) {
      let caught: unknown;
      try {
        validateMaxFileBytes(bad);
      } catch (error) {
        caught = error;
      }
      expect(AgentsError.isInstance(caught) && caught.code).toBe('CONFIG_INVALID');
    }
  });
});

describe('formatSize', () => {
  it('gives MB with one decimal, or bytes below a tenth of a MB', () => {
    expect(formatSize(50 * 1024 * 1024)).toBe('50.0 MB');
    expect(formatSize(3 * 1024 * 1024 + 512 * 1024)).toBe('3.5 MB');
    expect(formatSize(2000)).toBe('2000 bytes');
  });
});

describe('parseRawTreeDiff', () => {
  it('reads status, path, both modes and both blob ids', () => {
    const zero = '0'.repeat(40);
    const a = 'a'.repeat(40);
    const b = 'b'.repeat(40);
    const output =
      `:000000 100644 ${zero} ${a} A\0new file\0` +
      `:100644 100755 ${a} ${b} M\0dir/x\0` +
      `:160000 000000 ${b} ${zero} D\0sub\0`;
    expect(parseRawTreeDiff(output)).toEqual([
      {
        status: 'A',
        path: 'new file',
        srcMode: '000000',
        dstMode: '100644',
        srcSha: zero,
        dstSha: a,
      },
      { status: 'M', path: 'dir/x', srcMode: '100644', dstMode: '100755', srcSha: a, dstSha: b },
      { status: 'D', path: 'sub', srcMode: '160000', dstMode: '000000', srcSha: b, dstSha: zero },
    ]);
    expect(parseRawTreeDiff('')).toEqual([]);
  });
});
