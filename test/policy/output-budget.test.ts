import { mkdtemp, readdir, readFile, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { composeMiddleware } from '../../src/core/tool-middleware.js';
import type { ToolCallHandler } from '../../src/core/tool-middleware.js';
import { createAuditLog, readAuditLog } from '../../src/policy/audit-log.js';
import { createAuditMiddleware } from '../../src/policy/audit.js';
import { createFileSpill, createOutputBudgetMiddleware } from '../../src/policy/output-budget.js';
import type { BudgetRecord } from '../../src/policy/output-budget.js';
import { ResultMetaKey } from '../../src/core/tool-descriptor.js';
import type { ToolResult } from '../../src/core/tool-descriptor.js';
import { descriptorFor } from './helpers.js';

const tool = descriptorFor(
  'fs',
  { name: 'read_file', annotations: { readOnlyHint: true } },
  { trusted: true },
);

function textOf(result: ToolResult): string {
  return result.content
    .map((item) => (item.type === 'text' ? item.text : `<${item.type}>`))
    .join('|');
}

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'budget-'));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('output budget', () => {
  it('cuts a 5 MB result to the budget, keeps head and tail, and spills the full text to a readable file', async () => {
    const lines = Array.from({ length: 80_000 }, (_, index) => `line ${index} ${'é'.repeat(30)}`);
    const big = lines.join('\n');
    expect(Buffer.byteLength(big)).toBeGreaterThan(5_000_000);
    const audit = createAuditLog(join(root, 'audit.jsonl'));
    const handler = composeMiddleware(
      [
        createAuditMiddleware({ log: audit }),
        createOutputBudgetMiddleware({ maxBytes: 16_384, spill: createFileSpill(root) }),
      ],
      async () => ({
        content: [{ type: 'text', text: big }],
        _meta: {
          [ResultMetaKey.Change]: { toolId: tool.id, snapshot: 'abc', parent: 'def', changed: [] },
        },
      }),
    );
    const result = await handler({
      descriptor: tool,
      args: { path: 'big.log' },
      context: { toolCallId: 'call/../1' },
    });
    const text = textOf(result);
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(16_384);
    expect(text.startsWith('line 0 ')).toBe(true);
    expect(text.endsWith(lines.at(-1)!)).toBe(true);
    expect(text).not.toContain('\uFFFD');
    const record = result._meta?.[ResultMetaKey.Budget] as BudgetRecord;
    expect(record.originalBytes).toBe(Buffer.byteLength(big));
    expect(record.cutBytes).toBeGreaterThan(5_000_000);
    expect(record.spilledTo).toHaveLength(1);
    const logical = record.spilledTo[0]!;
    expect(logical.startsWith('.agents-output/')).toBe(true);
    expect(logical).not.toContain('..');
    expect(text).toContain(`Full output: ${logical}`);
    expect(text).toMatch(/5,\d{3},\d{3} bytes in total/);
    expect(await readFile(join(root, logical), 'utf8')).toBe(big);
    // Records from inner layers survive.
    expect(result._meta?.[ResultMetaKey.Change]).toMatchObject({ snapshot: 'abc' });
    await audit.close();
    const { entries } = await readAuditLog(audit.file);
    expect(entries[0]).toMatchObject({ snapshot: 'abc', budget: { spilledTo: [logical] } });
    expect(entries[0]!.resultBytes).toBeLessThanOrEqual(16_384);
  });

  it('returns a result under the cap unchanged (same object)', async () => {
    const original: ToolResult = { content: [{ type: 'text', text: 'small' }] };
    const handler = composeMiddleware(
      [createOutputBudgetMiddleware({ maxBytes: 1024 })],
      async () => original,
    );
    expect(await handler({ descriptor: tool, args: {}, context: {} })).toBe(original);
  });

  it('applies maxTokens as the tighter cap and per-tool limits by id', async () => {
    const text = 'x'.repeat(10_000);
    const handler: ToolCallHandler = async () => ({ content: [{ type: 'text', text }] });
    const byTokens = composeMiddleware(
      [createOutputBudgetMiddleware({ maxBytes: 100_000, maxTokens: 500 })],
      handler,
    );
    expect(
      Buffer.byteLength(textOf(await byTokens({ descriptor: tool, args: {}, context: {} }))),
    ).toBeLessThanOrEqual(2_000);
    const perTool = composeMiddleware(
      [
        createOutputBudgetMiddleware({
          maxBytes: 1_000,
          perTool: { 'mcp:fs/*': { maxBytes: 50_000 } },
        }),
      ],
      handler,
    );
    expect(textOf(await perTool({ descriptor: tool, args: {}, context: {} }))).toBe(text);
  });

  it('keeps images within their own cap and replaces bigger ones with a marker and a spilled file', async () => {
    const small = Buffer.alloc(100, 1).toString('base64');
    const large = Buffer.alloc(5_000, 2).toString('base64');
    const handler = composeMiddleware(
      [createOutputBudgetMiddleware({ maxImageBytes: 1_000, spill: createFileSpill(root) })],
      async () => ({
        content: [
          { type: 'text', text: 'two images' },
          { type: 'image', data: small, mimeType: 'image/png' },
          { type: 'image', data: large, mimeType: 'image/png' },
        ],
      }),
    );
    const result = await handler({ descriptor: tool, args: {}, context: {} });
    expect(result.content[1]).toEqual({ type: 'image', data: small, mimeType: 'image/png' });
    expect(result.content[2]?.type).toBe('text');
    const record = result._meta?.[ResultMetaKey.Budget] as BudgetRecord;
    expect(record.spilledTo[0]).toMatch(/\.png$/);
    expect((await readFile(join(root, record.spilledTo[0]!))).equals(Buffer.alloc(5_000, 2))).toBe(
      true,
    );
  });

  it('drops content items past maxItems with a marker', async () => {
    const handler = composeMiddleware(
      [createOutputBudgetMiddleware({ maxItems: 3 })],
      async () => ({
        content: Array.from({ length: 10 }, () => ({
          type: 'image' as const,
          data: 'AAAA',
          mimeType: 'image/png',
        })),
      }),
    );
    const result = await handler({ descriptor: tool, args: {}, context: {} });
    expect(result.content.filter((item) => item.type === 'image')).toHaveLength(3);
    expect(textOf(result)).toContain('7 more content item(s) dropped');
  });

  it('still cuts, and says so, when the spill fails', async () => {
    const handler = composeMiddleware(
      [
        createOutputBudgetMiddleware({
          maxBytes: 1_000,
          spill: async () => {
            throw new Error('disk full');
          },
        }),
      ],
      async () => ({ content: [{ type: 'text', text: 'y'.repeat(50_000) }] }),
    );
    const text = textOf(await handler({ descriptor: tool, args: {}, context: {} }));
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(1_000);
    expect(text).toContain('could not be saved (disk full)');
  });
});

describe('output budget edge cases', () => {
  it('passes a result that only looks big (3 bytes per character bound) through unchanged', async () => {
    const handler = composeMiddleware(
      [createOutputBudgetMiddleware({ maxBytes: 32 * 1024 })],
      async (): Promise<ToolResult> => ({
        content: [
          { type: 'text', text: 'a'.repeat(10_000) },
          { type: 'text', text: 'b'.repeat(10_000) },
          { type: 'resource', resource: { uri: 'file:///x.txt', text: 'c'.repeat(5_000) } },
        ],
      }),
    );
    const produced = await handler({ descriptor: tool, args: {}, context: {} });
    // 25,000 ASCII bytes fit 32 KiB: same items, no text duplicated, no budget record.
    expect(produced.content.map((item) => item.type)).toEqual(['text', 'text', 'resource']);
    expect(produced._meta?.[ResultMetaKey.Budget]).toBeUndefined();
  });

  it('refuses to spill through a symlinked spill folder that leads outside the root', async () => {
    const outside = await mkdtemp(join(tmpdir(), 'budget-outside-'));
    try {
      await symlink(outside, join(root, '.agents-output'));
      const spill = createFileSpill(root);
      await expect(
        spill('secret output', { toolId: tool.id, kind: 'text', extension: 'txt' }),
      ).rejects.toThrow(/resolves outside/);
      expect(await readdir(outside)).toEqual([]);

      const handler = composeMiddleware(
        [createOutputBudgetMiddleware({ maxBytes: 1_024, spill })],
        async (): Promise<ToolResult> => ({
          content: [{ type: 'text', text: 'x'.repeat(50_000) }],
        }),
      );
      const result = await handler({ descriptor: tool, args: {}, context: {} });
      expect(textOf(result)).toMatch(/could not be saved/);
      expect(await readdir(outside)).toEqual([]);
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
  });
});
