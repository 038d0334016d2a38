import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  changeRecordOfError,
  createChangeTracker,
  createChangeTrackingMiddleware,
  findChangeRecord,
} from '../../src/pipeline/change-tracking.js';
import { composeMiddleware } from '../../src/core/tool-middleware.js';
import type { ToolCallHandler } from '../../src/core/tool-middleware.js';
import { createSandbox } from '../../src/sandbox/git/local-sandbox.js';
import type { LocalSandbox } from '../../src/sandbox/git/local-sandbox.js';
import type { Sandbox } from '../../src/sandbox/types.js';
import { fileHandlers, makeRepo } from '../thread/helpers.js';

/** Delegates to a real sandbox and counts snapshot calls (the only git work tracking does). */
function countingSandbox(inner: Sandbox): Sandbox & { snapshots: number } {
  const spy = {
    snapshots: 0,
    get id() {
      return inner.id;
    },
    get root() {
      return inner.root;
    },
    get source() {
      return inner.source;
    },
    get paths() {
      return inner.paths;
    },
    get head() {
      return inner.head;
    },
    get base() {
      return inner.base;
    },
    snapshot: (label: string, options?: { signal?: AbortSignal }) => {
      spy.snapshots++;
      return inner.snapshot(label, options);
    },
    diff: (from: string, to: string) => inner.diff(from, to),
    restore: (sha: string, options?: { signal?: AbortSignal }) => inner.restore(sha, options),
    close: () => inner.close(),
    [Symbol.asyncDispose]: () => inner.close(),
  };
  return spy;
}

describe('change tracking middleware (real git sandbox)', () => {
  let repo: Awaited<ReturnType<typeof makeRepo>>;
  let real: LocalSandbox;
  let sandbox: ReturnType<typeof countingSandbox>;
  let call: (
    name: string,
    args: Record<string, unknown>,
    toolCallId?: string,
  ) => ReturnType<ToolCallHandler>;

  beforeEach(async () => {
    repo = await makeRepo();
    real = await createSandbox({ source: repo.dir });
    sandbox = countingSandbox(real);
    const tools = fileHandlers(() => sandbox.root);
    const tracking = createChangeTrackingMiddleware(sandbox);
    call = (name, args, toolCallId) => {
      const tool = tools[name]!;
      return composeMiddleware(
        [tracking],
        tool.handler,
      )({
        descriptor: tool.descriptor,
        args,
        context: toolCallId === undefined ? {} : { toolCallId },
      });
    };
  });

  afterEach(async () => {
    await real.close();
    await repo.cleanup();
  });

  it('snapshots after a write call and puts the change record in result._meta', async () => {
    const base = sandbox.head;
    const result = await call('write_file', { path: 'notes/a.txt', content: 'A' }, 'call-1');
    const record = findChangeRecord(result);
    expect(record).toEqual({
      toolCallId: 'call-1',
      toolId: 'custom:write_file',
      parent: base,
      snapshot: sandbox.head,
      changed: [{ status: 'A', path: 'notes/a.txt' }],
      // The sandbox's first snapshot in this process: a full scan, and why.
      scan: 'full',
      scanReason: expect.any(String),
    });
    expect(record!.snapshot).not.toBe(base);
    expect(await sandbox.diff(base, record!.snapshot)).toEqual([
      { status: 'A', path: 'notes/a.txt' },
    ]);
  });

  it('passes read-only calls straight through: no snapshot, no record', async () => {
    const head = sandbox.head;
    const result = await call('read_file', { path: 'README.md' }, 'call-r');
    expect(result.content).toEqual([{ type: 'text', text: '# readme\n' }]);
    expect(sandbox.snapshots).toBe(0);
    expect(findChangeRecord(result)).toBeUndefined();
    expect(sandbox.head).toBe(head);
  });

  it('serializes parallel write calls so each record lists only its own file', async () => {
    const [slow, fast, modify] = await Promise.all([
      call('write_file', { path: 'slow.txt', content: 'S', delayMs: 60 }, 'c-slow'),
      call('write_file', { path: 'fast.txt', content: 'F' }, 'c-fast'),
      call('write_file', { path: 'src/main.txt', content: 'main v2\n' }, 'c-mod'),
    ]);
    const records = [slow, fast, modify].map((result) => findChangeRecord(result)!);
    expect(records.map((record) => record.changed)).toEqual([
      [{ status: 'A', path: 'slow.txt' }],
      [{ status: 'A', path: 'fast.txt' }],
      [{ status: 'M', path: 'src/main.txt' }],
    ]);
    // The records form one chain ending at the sandbox head.
    const byParent = new Map(records.map((record) => [record.parent, record]));
    let cursor = real.base;
    for (let index = 0; index < 3; index++) cursor = byParent.get(cursor)!.snapshot;
    expect(cursor).toBe(sandbox.head);
    expect(sandbox.snapshots).toBe(3);
  });

  it('snapshots a call that threw, rethrows its error and keeps the record for pick-up', async () => {
    const error = await call('crash_write', { path: 'half.txt' }, 'c-crash').then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toBe('disk on fire');
    const record = changeRecordOfError(error);
    expect(record?.changed).toEqual([{ status: 'A', path: 'half.txt' }]);
    expect(record?.snapshot).toBe(sandbox.head);
    expect(createChangeTracker(sandbox).takeFailedRecord('c-crash')).toEqual(record);
    expect(createChangeTracker(sandbox).takeFailedRecord('c-crash')).toBeUndefined();
  });

  it('records the partial writes of a call that returned an error result', async () => {
    const result = await call('fail_write', { path: 'partial.txt' }, 'c-fail');
    expect(result.isError).toBe(true);
    expect(result.content).toEqual([{ type: 'text', text: 'quota exceeded' }]);
    expect(findChangeRecord(result)?.changed).toEqual([{ status: 'A', path: 'partial.txt' }]);
    expect(await readFile(join(sandbox.root, 'partial.txt'), 'utf8')).toBe('partial');
  });
});
