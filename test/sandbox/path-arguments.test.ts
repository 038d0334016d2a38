import { describe, expect, it } from 'vitest';
import { detectPathArguments, knownPathArguments } from '../../src/mcp/path-arguments.js';
import { sandboxRoots } from '../../src/sandbox/sandbox-roots.js';

describe('detectPathArguments', () => {
  it('finds path-named properties, arrays of them, and nested objects', () => {
    expect(
      detectPathArguments({
        type: 'object',
        properties: {
          path: { type: 'string' },
          paths: { type: 'array', items: { type: 'string' } },
          file_path: { type: 'string' },
          outputFile: { type: 'string' },
          cwd: { type: 'string' },
          directory: { type: ['string', 'null'] },
          content: { type: 'string', description: 'The file content to write to the path' },
          profile: { type: 'string' },
          count: { type: 'number' },
          edits: {
            type: 'array',
            items: {
              type: 'object',
              properties: { file: { type: 'string' }, newText: { type: 'string' } },
            },
          },
          options: {
            type: 'object',
            properties: { root: { type: 'string', description: 'Root directory' } },
          },
        },
      }).sort(),
    ).toEqual(
      [
        'cwd',
        'directory',
        'edits[].file',
        'file_path',
        'options.root',
        'outputFile',
        'path',
        'paths[]',
      ].sort(),
    );
  });

  it('uses descriptions for ambiguous names and for uri/url', () => {
    expect(
      detectPathArguments({
        type: 'object',
        properties: {
          source: { type: 'string', description: 'Source code to evaluate' },
          destination: { type: 'string', description: 'Destination path' },
          uri: { type: 'string', description: 'A file:// URI of the document' },
          url: { type: 'string', description: 'The web page to fetch' },
          target: { type: 'string' },
        },
      }).sort(),
    ).toEqual(['destination', 'target', 'uri']);
  });

  it('follows local $refs and anyOf branches, and stops at a recursive $ref', () => {
    expect(
      detectPathArguments({
        type: 'object',
        $defs: {
          Edit: {
            type: 'object',
            properties: { filepath: { type: 'string' }, next: { $ref: '#/$defs/Edit' } },
          },
        },
        properties: {
          edit: { $ref: '#/$defs/Edit' },
          where: {
            anyOf: [{ type: 'object', properties: { dir: { type: 'string' } } }, { type: 'null' }],
          },
        },
      }).sort(),
    ).toEqual(['edit.filepath', 'where.dir']);
  });

  it('returns nothing for schemas without paths', () => {
    expect(
      detectPathArguments({
        type: 'object',
        properties: { query: { type: 'string' }, limit: { type: 'integer' } },
      }),
    ).toEqual([]);
    expect(detectPathArguments({ type: 'object' })).toEqual([]);
  });
});

describe('knownPathArguments', () => {
  it('knows the filesystem server by package name', () => {
    expect(
      knownPathArguments(
        ['npx', '-y', '@modelcontextprotocol/server-filesystem', '/x'],
        'move_file',
      ),
    ).toEqual(['source', 'destination']);
    expect(knownPathArguments(['node', 'other-server.js'], 'move_file')).toEqual([]);
  });
});

describe('sandboxRoots', () => {
  it('offers exactly the sandbox root as a file:// URI', () => {
    expect(sandboxRoots({ root: '/tmp/run 1', id: 'abc' })).toEqual([
      { uri: 'file:///tmp/run%201', name: 'sandbox abc' },
    ]);
  });
});
