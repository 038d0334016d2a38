import { describe, expect, it } from 'vitest';
import { isGlob, matchesGlob } from '../../src/core/glob.js';
import { matchesTool } from '../../src/policy/decide.js';
import { isToolAllowed } from '../../src/skills/skill-allowed-tools.js';
import type { ToolDescriptor } from '../../src/core/tool-descriptor.js';

describe('the one glob matcher', () => {
  it('matches "*" across "/" and ":", "?" as one character, everything else literally', () => {
    expect(matchesGlob('mcp:*', 'mcp:fs/read_file')).toBe(true);
    expect(matchesGlob('mcp:fs/*_file', 'mcp:fs/read_file')).toBe(true);
    expect(matchesGlob('mcp:fs/read_?ile', 'mcp:fs/read_file')).toBe(true);
    expect(matchesGlob('mcp:fs/read_?ile', 'mcp:fs/read_ffile')).toBe(false);
    expect(matchesGlob('mcp:fs/read.file', 'mcp:fs/read_file')).toBe(false);
    expect(matchesGlob('mcp:fs/[rw]*', 'mcp:fs/read_file')).toBe(false);
    expect(matchesGlob('mcp:fs/{read,write}_file', 'mcp:fs/read_file')).toBe(false);
    expect(matchesGlob('read', 'read_file')).toBe(false);
    expect(isGlob('mcp:fs/read_file')).toBe(false);
  });

  it('is case-sensitive unless asked, with or without glob characters', () => {
    expect(matchesGlob('mcp:FS/*', 'mcp:fs/read_file')).toBe(false);
    expect(matchesGlob('mcp:FS/*', 'mcp:fs/read_file', { ignoreCase: true })).toBe(true);
    expect(matchesGlob('Read_File', 'read_file')).toBe(false);
    expect(matchesGlob('Read_File', 'read_file', { ignoreCase: true })).toBe(true);
  });

  it('gives policy patterns and allowed-tools entries the same rules', () => {
    const descriptor = {
      id: 'mcp:fs/read_file',
      name: 'fs_read_file',
      originalName: 'read_file',
    } as ToolDescriptor;
    for (const pattern of ['mcp:fs/*', 'fs_read_?ile', 'mcp:*/read_file', 'fs_*']) {
      expect(matchesTool(pattern, descriptor)).toBe(true);
      expect(isToolAllowed(descriptor, [pattern])).toBe(true);
    }
    for (const pattern of ['mcp:fs/write_*', 'fs_read', 'mcp:fs/read_file?']) {
      expect(matchesTool(pattern, descriptor)).toBe(false);
      expect(isToolAllowed(descriptor, [pattern])).toBe(false);
    }
    // allowed-tools only: any case, and an argument pattern matches on the tool part.
    expect(isToolAllowed(descriptor, ['READ_FILE(path:*)'])).toBe(true);
  });
});
