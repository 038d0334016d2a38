import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createPathRewriteMiddleware } from '../../src/pipeline/path-rewrite.js';
import type { ToolCallHandler, ToolCallRequest } from '../../src/core/tool-middleware.js';
import type { ToolDescriptor, ToolResult } from '../../src/core/tool-descriptor.js';
import { createPathMap } from '../../src/sandbox/path-map.js';

let scratch: string;
let root: string;

beforeEach(() => {
  scratch = realpathSync(mkdtempSync(join(tmpdir(), 'path-rewrite-contract-')));
  root = join(scratch, 'wt');
  mkdirSync(root);
});

afterEach(() => {
  rmSync(scratch, { recursive: true, force: true });
});

function descriptor(readOnly: boolean): ToolDescriptor {
  const verdict = (value: boolean) => ({ value, source: 'override' as const, reason: 'test' });
  return {
    id: `mcp:t/${readOnly ? 'read' : 'write'}`,
    name: readOnly ? 'read' : 'write',
    originalName: readOnly ? 'read' : 'write',
    source: 'mcp',
    description: 'test',
    inputSchema: { type: 'object' },
    capabilities: {
      readOnly: verdict(readOnly),
      writes: verdict(!readOnly),
      destructive: verdict(false),
      openWorld: verdict(false),
      disagreements: [],
    },
    pathArguments: ['path'],
    fingerprint: 'x',
  };
}

function request(readOnly: boolean, path = 'a.txt'): ToolCallRequest {
  return { descriptor: descriptor(readOnly), args: { path }, context: {} };
}

describe('path rewrite middleware: promise contract', () => {
  it('maps the path in and the result back for a read-only call', async () => {
    const middleware = createPathRewriteMiddleware(createPathMap(root));
    const seen: unknown[] = [];
    const result = await middleware.wrap(request(true), (forwarded) => {
      seen.push(forwarded.args['path']);
      return Promise.resolve({ content: [{ type: 'text', text: `read ${root}/a.txt` }] });
    });
    expect(seen).toEqual([join(root, 'a.txt')]);
    expect(result.content).toEqual([{ type: 'text', text: 'read a.txt' }]);
  });

  it('rejects (never throws) when the next handler or the map getter throws synchronously', async () => {
    const middleware = createPathRewriteMiddleware(createPathMap(root));
    const throwing: ToolCallHandler = () => {
      throw new Error('handler broke');
    };
    for (const readOnly of [true, false]) {
      const pending = middleware.wrap(request(readOnly), throwing);
      expect(pending).toBeInstanceOf(Promise);
      await expect(pending).rejects.toThrow('handler broke');
    }
    const broken = createPathRewriteMiddleware(() => {
      throw new Error('no sandbox');
    });
    const pending = broken.wrap(request(true), () => Promise.resolve({ content: [] }));
    expect(pending).toBeInstanceOf(Promise);
    await expect(pending).rejects.toThrow('no sandbox');
  });

  it('turns an escaping path into an error result without calling the tool', async () => {
    const middleware = createPathRewriteMiddleware(createPathMap(root));
    const next = vi.fn<ToolCallHandler>();
    const result = await middleware.wrap(request(true, '../../etc/passwd'), next);
    expect(result.isError).toBe(true);
    expect(next).not.toHaveBeenCalled();
  });

  it('announces a write-class call and ends it also when the call fails', async () => {
    const map = createPathMap(root);
    const ends: string[] = [];
    const beginWrite = map.beginWrite.bind(map);
    const begin = vi.spyOn(map, 'beginWrite').mockImplementation(() => {
      const end = beginWrite();
      return () => {
        ends.push('end');
        end();
      };
    });
    const middleware = createPathRewriteMiddleware(map);
    const ok: ToolResult = { content: [{ type: 'text', text: `wrote ${root}/a.txt` }] };
    expect((await middleware.wrap(request(false), () => Promise.resolve(ok))).content).toEqual([
      { type: 'text', text: 'wrote a.txt' },
    ]);
    await expect(
      middleware.wrap(request(false), () => Promise.reject(new Error('write failed'))),
    ).rejects.toThrow('write failed');
    await middleware.wrap(request(true), () => Promise.resolve(ok));
    expect(begin).toHaveBeenCalledTimes(2);
    expect(ends).toEqual(['end', 'end']);
  });
});
