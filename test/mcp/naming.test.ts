import { describe, expect, it } from 'vitest';
import { AgentsError } from '../../src/errors.js';
import { PROVIDER_SAFE_NAME, resolveToolNames, toProviderSafeName } from '../../src/mcp/naming.js';

describe('toProviderSafeName', () => {
  it('keeps safe names and maps other ASCII characters to _', () => {
    expect(toProviderSafeName('read_file')).toBe('read_file');
    expect(toProviderSafeName('files.read/v2')).toBe('files_read_v2');
  });

  it('maps confusables to ASCII and marks them with a hash suffix so they cannot pose as another name', () => {
    const mapped = toProviderSafeName('reаd_file'); // Cyrillic а
    expect(mapped).toMatch(/^read_file_[0-9a-f]{8}$/);
    expect(mapped).not.toBe('read_file');
    expect(toProviderSafeName('café')).toMatch(/^cafe_[0-9a-f]{8}$/);
    expect(mapped).toMatch(PROVIDER_SAFE_NAME);
  });

  it('shortens names past 64 characters with a deterministic hash, never into a collision', () => {
    const a = `${'x'.repeat(100)}_alpha`;
    const b = `${'x'.repeat(100)}_beta`;
    expect(toProviderSafeName(a)).toHaveLength(64);
    expect(toProviderSafeName(a)).toBe(toProviderSafeName(a));
    expect(toProviderSafeName(a)).not.toBe(toProviderSafeName(b));
    expect(toProviderSafeName('y'.repeat(128))).toMatch(PROVIDER_SAFE_NAME);
  });

  it('gives empty names a placeholder', () => {
    expect(toProviderSafeName('')).toBe('tool');
  });
});

describe('resolveToolNames', () => {
  it('leaves names alone when nothing collides', () => {
    const names = resolveToolNames([
      { id: 'mcp:fs/read_file', originalName: 'read_file', serverName: 'fs' },
      { id: 'mcp:git/git_log', originalName: 'git_log', serverName: 'git' },
    ]);
    expect([...names.values()]).toEqual(['read_file', 'git_log']);
  });

  it('prefixes both servers on a cross-server collision', () => {
    const names = resolveToolNames([
      { id: 'mcp:fs/read_file', originalName: 'read_file', serverName: 'fs' },
      { id: 'mcp:evil/read_file', originalName: 'read_file', serverName: 'evil' },
    ]);
    expect(names.get('mcp:fs/read_file')).toBe('fs__read_file');
    expect(names.get('mcp:evil/read_file')).toBe('evil__read_file');
  });

  it('never lets a server tool shadow a built-in', () => {
    const names = resolveToolNames([
      { id: 'builtin:read_file', originalName: 'read_file' },
      { id: 'mcp:evil/read_file', originalName: 'read_file', serverName: 'evil' },
    ]);
    expect(names.get('builtin:read_file')).toBe('read_file');
    expect(names.get('mcp:evil/read_file')).toBe('evil__read_file');
  });

  it('keeps the exact name and suffixes the sanitized twin within one server (a.b vs a_b)', () => {
    const names = resolveToolNames([
      { id: 'mcp:s/a.b', originalName: 'a.b', serverName: 's' },
      { id: 'mcp:s/a_b', originalName: 'a_b', serverName: 's' },
    ]);
    expect(names.get('mcp:s/a_b')).toBe('a_b');
    expect(names.get('mcp:s/a.b')).toMatch(/^a_b_[0-9a-f]{8}$/);
  });

  it('prefixes every server tool with alwaysPrefix and keeps within 64 characters', () => {
    const names = resolveToolNames(
      [
        { id: 'mcp:fs/read_file', originalName: 'read_file', serverName: 'fs' },
        {
          id: `mcp:${'s'.repeat(40)}/${'t'.repeat(40)}`,
          originalName: 't'.repeat(40),
          serverName: 's'.repeat(40),
        },
      ],
      { alwaysPrefix: true },
    );
    expect(names.get('mcp:fs/read_file')).toBe('fs__read_file');
    for (const name of names.values()) expect(name).toMatch(PROVIDER_SAFE_NAME);
  });

  it('uses override names as given and rejects two overrides with the same name', () => {
    const names = resolveToolNames([
      { id: 'mcp:s/x', originalName: 'x', serverName: 's', preferredName: 'my_x' },
      { id: 'mcp:s/my_x', originalName: 'my_x', serverName: 's' },
    ]);
    expect(names.get('mcp:s/x')).toBe('my_x');
    expect(names.get('mcp:s/my_x')).toMatch(/^my_x_[0-9a-f]{8}$/);
    expect(() =>
      resolveToolNames([
        { id: 'mcp:s/x', originalName: 'x', serverName: 's', preferredName: 'same' },
        { id: 'mcp:t/y', originalName: 'y', serverName: 't', preferredName: 'same' },
      ]),
    ).toThrow(AgentsError);
  });

  it('is deterministic regardless of input order', () => {
    const candidates = [
      { id: 'mcp:s/a.b', originalName: 'a.b', serverName: 's' },
      { id: 'mcp:s/a/b', originalName: 'a/b', serverName: 's' },
      { id: 'mcp:t/a_b', originalName: 'a_b', serverName: 't' },
    ];
    const forward = resolveToolNames(candidates);
    const backward = resolveToolNames([...candidates].reverse());
    for (const candidate of candidates)
      expect(backward.get(candidate.id)).toBe(forward.get(candidate.id));
    expect(new Set(forward.values()).size).toBe(3);
  });

  it('rejects duplicate ids', () => {
    expect(() =>
      resolveToolNames([
        { id: 'mcp:s/a', originalName: 'a', serverName: 's' },
        { id: 'mcp:s/a', originalName: 'a', serverName: 's' },
      ]),
    ).toThrow(/appears twice/);
  });
});
