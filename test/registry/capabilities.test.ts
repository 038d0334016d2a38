import { describe, expect, it } from 'vitest';
import { inferCapabilities, nameWords } from '../../src/mcp/capabilities.js';

type Row = {
  name: string;
  annotations?: Record<string, unknown>;
  override?: { capabilities: { readOnly?: boolean; writes?: boolean; destructive?: boolean } };
  trusted?: boolean;
  readOnly: boolean;
  source: string;
  disagreement?: RegExp;
};

// ADR-029 "Model Context Protocol (MCP) Adoption" heuristics plus every row of notes/security.md T5.
const rows: Row[] = [
  { name: 'list_directory', readOnly: true, source: 'name-heuristic' },
  { name: 'list_files', readOnly: true, source: 'name-heuristic' },
  { name: 'listDirectory', readOnly: true, source: 'name-heuristic' },
  { name: 'search-issues', readOnly: true, source: 'name-heuristic' },
  { name: 'get_weather', readOnly: true, source: 'name-heuristic' },
  { name: 'listen_and_write', readOnly: false, source: 'name-heuristic' },
  { name: 'readme_writer', readOnly: false, source: 'default' },
  { name: 'create_issue', readOnly: false, source: 'name-heuristic' },
  { name: 'updateRecord', readOnly: false, source: 'name-heuristic' },
  { name: 'sync_repo', readOnly: false, source: 'name-heuristic' },
  { name: 'frobnicate', readOnly: false, source: 'default' },
  {
    name: 'delete_all',
    annotations: { readOnlyHint: true },
    readOnly: false,
    source: 'name-heuristic',
    disagreement: /readOnlyHint=true ignored: name word "delete"/,
  },
  { name: 'get_or_create_user', readOnly: false, source: 'name-heuristic' },
  { name: 'fetch_and_apply', readOnly: false, source: 'name-heuristic' },
  { name: 'list_then_purge', readOnly: false, source: 'name-heuristic' },
  { name: 'download_file', readOnly: false, source: 'name-heuristic' },
  {
    // A read word does not outweigh a server saying the tool destroys things.
    name: 'list_files',
    annotations: { destructiveHint: true },
    readOnly: false,
    source: 'annotation',
    disagreement: /destructiveHint=true says write/,
  },
  {
    name: 'frobnicate',
    annotations: { readOnlyHint: 'true' },
    readOnly: false,
    source: 'default',
    disagreement: /not a boolean/,
  },
  {
    name: 'frobnicate',
    annotations: { readOnlyHint: true, destructiveHint: true },
    trusted: true,
    readOnly: false,
    source: 'annotation',
    disagreement: /contradicts/,
  },
  {
    name: 'frobnicate',
    annotations: { readOnlyHint: true },
    readOnly: false,
    source: 'default',
    disagreement: /not trusted/,
  },
  {
    name: 'frobnicate',
    annotations: { readOnlyHint: true },
    trusted: true,
    readOnly: true,
    source: 'annotation',
  },
  {
    name: 'get_invoice',
    annotations: { readOnlyHint: true },
    readOnly: true,
    source: 'name-heuristic',
  },
  {
    name: 'get_invoice',
    annotations: { readOnlyHint: false },
    readOnly: false,
    source: 'annotation',
    disagreement: /says read/,
  },
  {
    name: 'read_file',
    override: { capabilities: { readOnly: true } },
    annotations: { readOnlyHint: false },
    readOnly: true,
    source: 'override',
  },
  {
    name: 'delete_everything',
    override: { capabilities: { readOnly: true } },
    readOnly: true,
    source: 'override',
  },
  {
    name: 'list_files',
    override: { capabilities: { writes: true } },
    readOnly: false,
    source: 'override',
  },
];

describe('inferCapabilities', () => {
  it.each(rows)(
    '$name $annotations $override trusted=$trusted → readOnly=$readOnly ($source)',
    (row) => {
      const capabilities = inferCapabilities({
        name: row.name,
        ...(row.annotations === undefined ? {} : { annotations: row.annotations }),
        ...(row.override === undefined ? {} : { override: row.override }),
        ...(row.trusted === undefined ? {} : { trusted: row.trusted }),
      });
      expect(capabilities.readOnly.value).toBe(row.readOnly);
      expect(capabilities.writes.value).toBe(!row.readOnly);
      expect(capabilities.readOnly.source).toBe(row.source);
      expect(capabilities.readOnly.reason.length).toBeGreaterThan(0);
      if (row.disagreement !== undefined) {
        expect(capabilities.disagreements.join('\n')).toMatch(row.disagreement);
      }
    },
  );

  it('defaults to writes, destructive and open-world with provenance "default"', () => {
    const capabilities = inferCapabilities({ name: 'frobnicate' });
    expect(capabilities).toMatchObject({
      readOnly: { value: false, source: 'default' },
      writes: { value: true, source: 'default' },
      destructive: { value: true, source: 'default' },
      openWorld: { value: true, source: 'default' },
      disagreements: [],
    });
  });

  it('marks destructive names and read-only tools, and only trusts "safer" hints from trusted servers', () => {
    expect(inferCapabilities({ name: 'delete_file' }).destructive).toMatchObject({
      value: true,
      source: 'name-heuristic',
    });
    expect(inferCapabilities({ name: 'list_files' }).destructive.value).toBe(false);
    expect(
      inferCapabilities({ name: 'write_file', annotations: { destructiveHint: false } }).destructive
        .value,
    ).toBe(true);
    expect(
      inferCapabilities({
        name: 'write_file',
        annotations: { destructiveHint: false },
        trusted: true,
      }).destructive,
    ).toMatchObject({
      value: false,
      source: 'annotation',
    });
    expect(
      inferCapabilities({ name: 'add', annotations: { openWorldHint: false } }).openWorld.value,
    ).toBe(true);
    expect(
      inferCapabilities({ name: 'add', annotations: { openWorldHint: false }, trusted: true })
        .openWorld.value,
    ).toBe(false);
  });

  it('lets overrides set each capability', () => {
    const capabilities = inferCapabilities({
      name: 'frobnicate',
      override: { capabilities: { readOnly: false, destructive: false, openWorld: false } },
    });
    expect(capabilities.destructive).toMatchObject({ value: false, source: 'override' });
    expect(capabilities.openWorld).toMatchObject({ value: false, source: 'override' });
  });

  it('does not take a description as input (description text can never change a verdict)', () => {
    const input = {
      name: 'sync_repo',
      description: 'This tool is read-only and safe',
    } as Parameters<typeof inferCapabilities>[0];
    expect(inferCapabilities(input).readOnly.value).toBe(false);
  });
});

describe('nameWords', () => {
  it('splits snake, kebab, dotted and camel case', () => {
    expect(nameWords('list_directory')).toEqual(['list', 'directory']);
    expect(nameWords('get-file.contents')).toEqual(['get', 'file', 'contents']);
    expect(nameWords('readFileV2')).toEqual(['read', 'file', 'v2']);
    expect(nameWords('HTTPGetter')).toEqual(['http', 'getter']);
  });

  it('drops empty words at leading, trailing and repeated separators of simple names', () => {
    expect(nameWords('__init__')).toEqual(['init']);
    expect(nameWords('-a--b_-c_')).toEqual(['a', 'b', 'c']);
    expect(nameWords('get')).toEqual(['get']);
    expect(nameWords('')).toEqual([]);
    expect(nameWords('_-_')).toEqual([]);
    expect(nameWords('tool_0001')).toEqual(['tool', '0001']);
  });
});

describe('inferCapabilities: hints read once', () => {
  it('lists every non-boolean hint in key order, before name-based disagreements', () => {
    const capabilities = inferCapabilities({
      name: 'delete_rows',
      annotations: {
        openWorldHint: 'yes',
        readOnlyHint: true,
        idempotentHint: 1,
        destructiveHint: null,
      },
    });
    expect(capabilities.disagreements).toEqual([
      'annotation destructiveHint=null ignored: not a boolean',
      'annotation idempotentHint=1 ignored: not a boolean',
      'annotation openWorldHint="yes" ignored: not a boolean',
      'annotation readOnlyHint=true ignored: name word "delete" says write',
    ]);
    expect(capabilities.openWorld).toEqual({
      value: true,
      source: 'default',
      reason: 'tools may reach outside the sandbox unless shown otherwise',
    });
  });
});
