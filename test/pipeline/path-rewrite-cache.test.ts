import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createPathRewriteMiddleware } from '../../src/pipeline/path-rewrite.js';
import { composeMiddleware, type ToolCallRequest } from '../../src/core/tool-middleware.js';
import type { ToolDescriptor, ToolResult } from '../../src/core/tool-descriptor.js';
import { createPathMap } from '../../src/sandbox/path-map.js';

let scratch: string;
let root: string;
let outside: string;

beforeEach(() => {
  scratch = realpathSync(mkdtempSync(join(tmpdir(), 'path-rewrite-cache-')));
  root = join(scratch, 'wt');
  outside = join(scratch, 'outside');
  mkdirSync(join(root, 'a'), { recursive: true });
  mkdirSync(outside);
  writeFileSync(join(root, 'a', 'b.txt'), 'inside');
  writeFileSync(join(outside, 'b.txt'), 'secret');
});

afterEach(() => {
  rmSync(scratch, { recursive: true, force: true });
});

function descriptor(name: string, readOnly: boolean): ToolDescriptor {
  const verdict = (value: boolean) => ({ value, source: 'override' as const, reason: 'test' });
  return {
    id: `mcp:t/${name}`,
    name,
    originalName: name,
    source: 'mcp',
    description: name,
    inputSchema: { type: 'object' },
    capabilities: {
      readOnly: verdict(readOnly),
      writes: verdict(!readOnly),
      destructive: verdict(false),
      openWorld: verdict(false),
      disagreements: [],
    },
    pathArguments: ['path'],
    fingerprint: name,
  };
}

describe('path rewrite with the symlink-check cache', () => {
  it('re-checks paths after a write-class call swapped a directory for a symlink to outside', async () => {
    const seen: string[] = [];
    const handler = composeMiddleware(
      [createPathRewriteMiddleware(createPathMap(root))],
      async (request: ToolCallRequest): Promise<ToolResult> => {
        seen.push(`${request.descriptor.name} ${String(request.args.path)}`);
        if (request.descriptor.name === 'swap_dir') {
          // What a hostile or careless write tool could do inside the sandbox.
          rmSync(join(root, 'a'), { recursive: true });
          symlinkSync(outside, join(root, 'a'));
        }
        return { content: [{ type: 'text', text: 'ok' }] };
      },
    );
    const read = {
      descriptor: descriptor('read_file', true),
      args: { path: 'a/b.txt' },
      context: {},
    };

    expect((await handler(read)).isError).toBeUndefined();
    expect((await handler(read)).isError).toBeUndefined(); // served from the cache
    await handler({ descriptor: descriptor('swap_dir', false), args: { path: 'a' }, context: {} });
    const after = await handler(read);

    expect(after.isError).toBe(true);
    expect(JSON.stringify(after.content)).toMatch(/symlink|link/i);
    // The refused read never reached the tool.
    expect(seen).toEqual([
      `read_file ${join(root, 'a/b.txt')}`,
      `read_file ${join(root, 'a/b.txt')}`,
      `swap_dir ${join(root, 'a')}`,
    ]);
  });
});
