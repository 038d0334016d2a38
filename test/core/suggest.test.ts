import { describe, expect, it } from 'vitest';
import { closest, editDistance } from '../../src/core/suggest.js';

describe('did-you-mean', () => {
  it('counts a swap of neighbours as one edit', () => {
    expect(editDistance('--inptu', '--input')).toBe(1);
    expect(editDistance('run', 'rnu')).toBe(1);
    expect(editDistance('', 'abc')).toBe(3);
    expect(editDistance('kitten', 'sitting')).toBe(3);
  });

  it('finds the meant word, a unique prefix, or nothing when none is close', () => {
    const flags = ['--input', '--thread', '--json', '--max-turns', '--max-tool-calls'];
    expect(closest('--inptu', flags)).toBe('--input');
    expect(closest('--thred', flags)).toBe('--thread');
    expect(closest('--inp', flags)).toBe('--input');
    // Two options start with --max-t: no guess from the prefix, none is within two edits.
    expect(closest('--max-t', flags)).toBeUndefined();
    expect(closest('--bogus', flags)).toBeUndefined();
    expect(closest('', flags)).toBeUndefined();
    // Short words tolerate one edit only: `ls` is not `add`.
    expect(closest('ls', ['add', 'list'])).toBeUndefined();
    expect(closest('lst', ['add', 'list'])).toBe('list');
  });
});
